"""The events of the unified activity log (spec 001, 統一アクティビティログ). Pure code.

Every interaction an agent has (a message in or out, a direct message, a shared-channel post,
a tool call, a heartbeat, a cron run, a memory write, an error) becomes one
:class:`ActivityEvent`, stored as one JSON line in a file per day (:mod:`.jsonl`) and shown
to the agent again, compactly, as its "recent activity" (:mod:`.priming_format`).

:class:`EventType` holds the spec's fourteen types and three of kioku's own, marked as
extensions: ``memory_recall`` (a deliberate search, ``RCL``), ``priming`` (memories injected
before a prompt, ``PRIM``) and ``memory_erased`` (``DEL``). kioku records these so that what
the agent remembered, was reminded of and forgot shows up in the same timeline.

:func:`check_event` is the one gate every event passes before it is written or shown. It
rejects what cannot be stored faithfully (a naive time, an unknown type, a wrong type of
value, text over its limit, a number JSON readers would round) and *neutralises* control
characters instead of rejecting them: an activity log must record a message even when it
carried a stray escape sequence, and rejecting it would lose the record. Escape sequences
are removed whole and other controls (and bidirectional overrides) become U+FFFD, the rule
kioku applies to all displayed text (:func:`kioku.core.sanitize.for_terminal`); a lone UTF-16
surrogate, which no UTF-8 file can hold, also becomes U+FFFD. Content, summaries and meta
strings keep their line breaks and tabs; names and identifiers become one line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Final, TypeAlias

from kioku.core.sanitize import for_terminal
from kioku.core.validate import EARLIEST, LATEST, MAX_ID_CHARS
from kioku.errors import ValidationError
from kioku.records import Record

__all__ = [
    "EXTENSION_TYPES",
    "LABELS",
    "MAX_CONTENT_CHARS",
    "MAX_JSON_INT",
    "MAX_MEMORY_IDS",
    "MAX_META_ITEMS",
    "MAX_META_KEY_CHARS",
    "MAX_NAME_CHARS",
    "MAX_SUMMARY_CHARS",
    "SPEC_TYPES",
    "ActivityEvent",
    "EventType",
    "MetaValue",
    "check_event",
]


class EventType(StrEnum):
    """What happened. The value is the ``type`` written in the log."""

    MESSAGE_RECEIVED = "message_received"
    RESPONSE_SENT = "response_sent"
    DM_SENT = "dm_sent"
    DM_RECEIVED = "dm_received"
    CHANNEL_POST = "channel_post"
    CHANNEL_READ = "channel_read"
    HUMAN_NOTIFY = "human_notify"
    TOOL_USE = "tool_use"
    HEARTBEAT_START = "heartbeat_start"
    HEARTBEAT_END = "heartbeat_end"
    CRON_EXECUTED = "cron_executed"
    MEMORY_WRITE = "memory_write"
    ERROR = "error"
    ISSUE_RESOLVED = "issue_resolved"
    #: kioku extension: a deliberate search of long-term memory (意図的想起).
    MEMORY_RECALL = "memory_recall"
    #: kioku extension: memories injected before a prompt (プライミング).
    PRIMING = "priming"
    #: kioku extension: memories erased on request.
    MEMORY_ERASED = "memory_erased"


#: The fourteen event types the spec lists.
SPEC_TYPES: Final = frozenset(EventType) - {
    EventType.MEMORY_RECALL,
    EventType.PRIMING,
    EventType.MEMORY_ERASED,
}
#: kioku's own event types, beyond the spec.
EXTENSION_TYPES: Final = frozenset(EventType) - SPEC_TYPES

#: The short ASCII label of each type, as shown in priming (one token each, where the spec's
#: earlier emoji icons cost two or three). Both heartbeat types share ``HB``.
LABELS: Final[Mapping[EventType, str]] = MappingProxyType(
    {
        EventType.MESSAGE_RECEIVED: "MSG<",
        EventType.RESPONSE_SENT: "MSG>",
        EventType.DM_SENT: "DM>",
        EventType.DM_RECEIVED: "DM<",
        EventType.CHANNEL_POST: "CH.W",
        EventType.CHANNEL_READ: "CH.R",
        EventType.HUMAN_NOTIFY: "NTFY",
        EventType.TOOL_USE: "TOOL",
        EventType.HEARTBEAT_START: "HB",
        EventType.HEARTBEAT_END: "HB",
        EventType.CRON_EXECUTED: "CRON",
        EventType.MEMORY_WRITE: "MEM",
        EventType.ERROR: "ERR",
        EventType.ISSUE_RESOLVED: "RSLV",
        EventType.MEMORY_RECALL: "RCL",
        EventType.PRIMING: "PRIM",
        EventType.MEMORY_ERASED: "DEL",
    }
)

#: The longest content one event may carry, in characters.
MAX_CONTENT_CHARS: Final = 20_000
#: The longest summary, in characters: a summary says in a line what the content holds.
MAX_SUMMARY_CHARS: Final = 2_000
#: The longest name (from, to, channel, tool, via, task, user, agent), in characters.
MAX_NAME_CHARS: Final = 200
#: At most this many memory ids on one event.
MAX_MEMORY_IDS: Final = 1_000
#: At most this many meta pairs on one event, each key at most this long.
MAX_META_ITEMS: Final = 64
MAX_META_KEY_CHARS: Final = 64
#: Integers (exit codes, meta values) stay within ±2**53, so every JSON reader keeps them exact.
MAX_JSON_INT: Final = 2**53

#: A value of the free-form ``meta`` pairs: what a JSON scalar can hold without loss.
MetaValue: TypeAlias = str | int | float | bool

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_LINE_BREAKS: Final = re.compile(r"[\n\t]")
_TYPE_VALUES: Final = frozenset(t.value for t in EventType)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ActivityEvent(Record):
    """One entry of the activity log.

    ``ts`` is timezone-aware. Text fields hold ``""`` when unused (they are left out of the
    JSON line then). ``from_`` is written as ``from``; ``exit_code`` as ``exit``;
    ``session_id``, ``user_id`` and ``agent_id`` as ``session``, ``user`` and ``agent``.
    ``task`` names the cron task of a ``cron_executed`` event. ``meta`` holds free-form
    ``(key, value)`` pairs with unique keys, kept in their order; a tuple rather than a
    mapping so the event stays hashable.
    """

    ts: datetime
    type: EventType
    content: str = ""
    from_: str = ""
    to: str = ""
    channel: str = ""
    tool: str = ""
    via: str = ""
    summary: str = ""
    task: str = ""
    exit_code: int | None = None
    session_id: str = ""
    memory_ids: tuple[str, ...] = ()
    user_id: str = ""
    agent_id: str = ""
    meta: tuple[tuple[str, MetaValue], ...] = ()


#: Attribute → the key it is written as (and named by in errors), for the one-line names.
_NAMES: Final = (
    ("from_", "from"),
    ("to", "to"),
    ("channel", "channel"),
    ("tool", "tool"),
    ("via", "via"),
    ("task", "task"),
    ("user_id", "user"),
    ("agent_id", "agent"),
)


def _neutral(text: str) -> str:
    """``text`` without escape sequences, other controls and lone surrogates as U+FFFD."""
    return _SURROGATE.sub("\ufffd", for_terminal(text))


def _text(field: str, value: object, limit: int, *, one_line: bool) -> str:
    if not isinstance(value, str):
        raise ValidationError(field, value, "a string")
    if not value:
        return value  # most of an event's fields are empty: nothing to clean or measure
    clean = _neutral(value)
    if one_line:
        clean = _LINE_BREAKS.sub(" ", clean)
    if len(clean) > limit:
        raise ValidationError(
            field,
            f"<{len(clean)} characters>",
            f"at most {limit} characters",
            hint="keep the full text elsewhere and log a shorter excerpt",
        )
    return clean


def _json_int(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(field, value, "an integer")
    if abs(value) > MAX_JSON_INT:
        raise ValidationError(field, value, f"an integer within ±{MAX_JSON_INT}")
    return value


def _check_ts(value: object) -> datetime:
    if not isinstance(value, datetime):
        raise ValidationError("ts", value, "a datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValidationError(
            "ts", value, "a timezone-aware datetime", hint="attach the local timezone"
        )
    if not EARLIEST <= value < LATEST:
        raise ValidationError("ts", value, f"a time from {EARLIEST.year} to {LATEST.year}")
    # The log keeps seconds; dropping the rest here keeps a written event equal to its reading.
    return value if value.microsecond == 0 else value.replace(microsecond=0)


def _check_type(value: object) -> EventType:
    if isinstance(value, str) and value in _TYPE_VALUES:
        return EventType(value)
    allowed = ", ".join(t.value for t in EventType)
    raise ValidationError("type", value, f"one of {allowed}")


def _check_memory_ids(value: object) -> tuple[str, ...]:
    if not isinstance(value, tuple):
        raise ValidationError("memory_ids", value, "a tuple of strings")
    if len(value) > MAX_MEMORY_IDS:
        raise ValidationError("memory_ids", f"<{len(value)} ids>", f"at most {MAX_MEMORY_IDS}")
    ids = tuple(_text("memory_ids", item, MAX_ID_CHARS, one_line=True) for item in value)
    if any(not item for item in ids):
        raise ValidationError("memory_ids", value, "non-empty ids")
    return value if all(a is b for a, b in zip(ids, value, strict=True)) else ids


def _check_meta_value(key: str, value: object) -> MetaValue:
    field = f"meta.{key}"
    if isinstance(value, str):
        return _text(field, value, MAX_SUMMARY_CHARS, one_line=False)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return _json_int(field, value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValidationError(field, value, "a finite number")
        return value
    raise ValidationError(field, value, "a string, integer, finite float or boolean")


def _check_meta(value: object) -> tuple[tuple[str, MetaValue], ...]:
    if not isinstance(value, tuple):
        raise ValidationError("meta", value, "a tuple of (key, value) pairs")
    if len(value) > MAX_META_ITEMS:
        raise ValidationError("meta", f"<{len(value)} pairs>", f"at most {MAX_META_ITEMS}")
    pairs: list[tuple[str, MetaValue]] = []
    seen: set[str] = set()
    for pair in value:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise ValidationError("meta", pair, "a (key, value) pair")
        key = _text("meta key", pair[0], MAX_META_KEY_CHARS, one_line=True)
        if not key or key in seen:
            raise ValidationError("meta key", pair[0], "a non-empty key used once")
        seen.add(key)
        pairs.append((key, _check_meta_value(key, pair[1])))
    if all(a[0] is b[0] and a[1] is b[1] for a, b in zip(pairs, value, strict=True)):
        return value  # nothing to fix
    return tuple(pairs)


def check_event(event: ActivityEvent) -> ActivityEvent:
    """``event`` as it may be stored and shown, or :class:`~kioku.errors.ValidationError`.

    Rejected: a ``ts`` that is not an aware datetime from 1970 to 9000, a ``type`` that is no
    :class:`EventType` value (a plain string naming one is accepted and converted), a field of
    the wrong type, content over :data:`MAX_CONTENT_CHARS` characters (and the other limits
    above), an integer beyond ±2**53, a non-finite float, a duplicate meta key or an empty
    memory id. Normalised: sub-second precision is dropped from ``ts`` and control characters
    are neutralised (see the module docstring). Applying it twice changes nothing more.
    Errors name the field as it is written in the log (``from``, ``exit``, ``session``).
    """
    if not isinstance(event, ActivityEvent):
        raise ValidationError("event", event, "an ActivityEvent")
    names = {
        attr: _text(key, getattr(event, attr), MAX_NAME_CHARS, one_line=True)
        for attr, key in _NAMES
    }
    exit_code = None if event.exit_code is None else _json_int("exit", event.exit_code)
    checked: dict[str, object] = {
        "ts": _check_ts(event.ts),
        "type": _check_type(event.type),
        "content": _text("content", event.content, MAX_CONTENT_CHARS, one_line=False),
        "summary": _text("summary", event.summary, MAX_SUMMARY_CHARS, one_line=False),
        "exit_code": exit_code,
        "session_id": _text("session", event.session_id, MAX_ID_CHARS, one_line=True),
        "memory_ids": _check_memory_ids(event.memory_ids),
        "meta": _check_meta(event.meta),
        **names,
    }
    # An event already as it may be stored (one made by this function) is returned as it
    # is: every check gives back the very value it was given when there is nothing to fix.
    if all(value is getattr(event, attr) for attr, value in checked.items()):
        return event
    return replace(event, **checked)  # type: ignore[arg-type]
