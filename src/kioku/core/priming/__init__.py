"""Priming: what to recall automatically before every prompt (spec 001, 自動想起).

Pure core, no I/O and no clock: the type of the incoming message and its token budget
(:mod:`.message_type`), the spreading-activation score and Personalized PageRank
(:mod:`.activation`), sharing the budget among the recall channels and filling each one
(:mod:`.budget`), and the three-stage matching of procedures (:mod:`.procedures`). The
service layer runs the searches and assembles the recalled context from these pieces.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

# Names are loaded from their module on first use (PEP 562), so a hook that classifies a
# message does not import procedure matching or PageRank it will not run.
if TYPE_CHECKING:
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

_MODULES: Final[dict[str, str]] = {
    "CHANNEL_BUDGETS": "kioku.core.priming.budget",
    "Channel": "kioku.core.priming.budget",
    "HALF_LIFE_DAYS": "kioku.core.priming.activation",
    "HEARTBEAT_MARKERS": "kioku.core.priming.message_type",
    "LONG_STATEMENT_CHARS": "kioku.core.priming.message_type",
    "MessageType": "kioku.core.priming.message_type",
    "ProcedureCandidate": "kioku.core.priming.procedures",
    "ProcedureMatch": "kioku.core.priming.procedures",
    "TYPE_BUDGETS": "kioku.core.priming.message_type",
    "WEIGHT_FREQUENCY": "kioku.core.priming.activation",
    "WEIGHT_PAGERANK": "kioku.core.priming.activation",
    "WEIGHT_RECENCY": "kioku.core.priming.activation",
    "activation_score": "kioku.core.priming.activation",
    "allocate": "kioku.core.priming.budget",
    "bracket_keywords": "kioku.core.priming.procedures",
    "classify_message": "kioku.core.priming.message_type",
    "fit_lines": "kioku.core.priming.budget",
    "frequency_boost": "kioku.core.priming.activation",
    "match_procedures": "kioku.core.priming.procedures",
    "parse_message_type": "kioku.core.priming.message_type",
    "personalized_pagerank": "kioku.core.priming.activation",
    "recency_factor": "kioku.core.priming.activation",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


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
