"""Priming: what to recall automatically before every prompt (spec 001, 自動想起).

Pure core, no I/O and no clock: the type of the incoming message and its token budget
(:mod:`.message_type`), the spreading-activation score and Personalized PageRank
(:mod:`.activation`), sharing the budget among the recall channels and filling each one
(:mod:`.budget`), and the three-stage matching of procedures (:mod:`.procedures`). The
service layer runs the searches and assembles the recalled context from these pieces.
"""

from __future__ import annotations

from kioku.core.priming.activation import (
    HALF_LIFE_DAYS,
    WEIGHT_FREQUENCY,
    WEIGHT_PAGERANK,
    WEIGHT_RECENCY,
    activation_score,
    frequency_boost,
    personalized_pagerank,
    recency_factor,
)
from kioku.core.priming.budget import CHANNEL_BUDGETS, Channel, allocate, fit_lines
from kioku.core.priming.message_type import (
    HEARTBEAT_MARKERS,
    LONG_STATEMENT_CHARS,
    TYPE_BUDGETS,
    MessageType,
    classify_message,
    parse_message_type,
)
from kioku.core.priming.procedures import (
    ProcedureCandidate,
    ProcedureMatch,
    bracket_keywords,
    match_procedures,
)

__all__ = [
    "CHANNEL_BUDGETS",
    "HALF_LIFE_DAYS",
    "HEARTBEAT_MARKERS",
    "LONG_STATEMENT_CHARS",
    "TYPE_BUDGETS",
    "WEIGHT_FREQUENCY",
    "WEIGHT_PAGERANK",
    "WEIGHT_RECENCY",
    "Channel",
    "MessageType",
    "ProcedureCandidate",
    "ProcedureMatch",
    "activation_score",
    "allocate",
    "bracket_keywords",
    "classify_message",
    "fit_lines",
    "frequency_boost",
    "match_procedures",
    "parse_message_type",
    "personalized_pagerank",
    "recency_factor",
]
