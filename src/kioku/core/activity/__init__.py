"""The unified activity log (spec 001, 統一アクティビティログ): its events, their JSON lines
and their compact form for priming. Pure code: reading and writing the day files, and the
clock, belong to the layers above.
"""

from __future__ import annotations

from kioku.core.activity.events import (
    EXTENSION_TYPES,
    LABELS,
    MAX_CONTENT_CHARS,
    SPEC_TYPES,
    ActivityEvent,
    EventType,
    MetaValue,
    check_event,
)
from kioku.core.activity.jsonl import KEYS, day_file_name, from_jsonl, to_jsonl
from kioku.core.activity.priming_format import (
    DEFAULT_BUDGET_TOKENS,
    MIN_TOKENS_HEARTBEAT,
    PrimedActivity,
    format_for_priming,
)

__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "EXTENSION_TYPES",
    "KEYS",
    "LABELS",
    "MAX_CONTENT_CHARS",
    "MIN_TOKENS_HEARTBEAT",
    "SPEC_TYPES",
    "ActivityEvent",
    "EventType",
    "MetaValue",
    "PrimedActivity",
    "check_event",
    "day_file_name",
    "format_for_priming",
    "from_jsonl",
    "to_jsonl",
]
