"""One activity event as one JSON line, and back (spec 001, JSONL形式). Pure code.

The line has the spec's keys in the spec's order (``ts``, ``type``, ``content``, ``from``,
``to``, ``channel``, ``tool``, ``via``, ``summary``), then kioku's own (``task``, ``exit``,
``session``, ``memory_ids``, ``user``, ``agent``, ``meta``). Empty fields are left out: an
empty string, an empty tuple, no meta, no exit code (an exit code of 0 is written). ``ts`` is
ISO 8601 to the second with the event's own UTC offset (``2026-02-17T14:30:00+09:00``); the
spec's examples carry no offset, so a reader may name the zone such times were written in.

Text is written as it is (``ensure_ascii=False``, compact separators), except that characters
some line readers take as a line break or that no UTF-8 file can hold (U+2028, U+2029, DEL,
the C1 controls, lone surrogates) are written as ``\\uXXXX`` escapes: a line is always exactly
one line, whatever splits it. Reading is strict: anything but one JSON object with known keys
and values of the right type raises :class:`~kioku.errors.ValidationError` saying why.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, tzinfo
from typing import Any, Final

from kioku.core.activity.events import ActivityEvent, MetaValue, check_event
from kioku.core.timefmt import format_ts
from kioku.errors import ValidationError

__all__ = ["KEYS", "checked_line", "day_file_name", "from_jsonl", "to_jsonl"]

#: The keys of a line in the order they are written, each with the attribute it holds.
_FIELDS: Final = (
    ("ts", "ts"),
    ("type", "type"),
    ("content", "content"),
    ("from", "from_"),
    ("to", "to"),
    ("channel", "channel"),
    ("tool", "tool"),
    ("via", "via"),
    ("summary", "summary"),
    ("task", "task"),
    ("exit", "exit_code"),
    ("session", "session_id"),
    ("memory_ids", "memory_ids"),
    ("user", "user_id"),
    ("agent", "agent_id"),
    ("meta", "meta"),
)
#: Every key a line may hold, in the order they are written.
KEYS: Final = tuple(key for key, _ in _FIELDS)
_ATTRIBUTE: Final = dict(_FIELDS)
_STRING_KEYS: Final = frozenset(KEYS) - {"ts", "type", "exit", "memory_ids", "meta"}

_UNSAFE: Final = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_EXCERPT: Final = 80
#: ``json.dumps`` with these settings, without building an encoder for every line.
_compact_json: Final = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def to_jsonl(event: ActivityEvent) -> str:
    """The event as one JSON line, without the line feed. The event is checked first
    (:func:`~kioku.core.activity.events.check_event`), so what is written can be read back:
    ``from_jsonl(to_jsonl(e)) == check_event(e)``."""
    return checked_line(check_event(event))


def checked_line(event: ActivityEvent) -> str:
    """:func:`to_jsonl` of an event that :func:`~kioku.core.activity.events.check_event`
    returned, which it would return as it is: the check is not made again."""
    record: dict[str, object] = {"ts": format_ts(event.ts), "type": event.type.value}
    for key, attribute in _FIELDS[2:]:
        value = getattr(event, attribute)
        if key == "exit":
            if value is not None:
                record[key] = value
        elif key == "memory_ids":
            if value:
                record[key] = list(value)
        elif key == "meta":
            if value:
                record[key] = dict(value)
        elif value:
            record[key] = value
    line = _compact_json(record)
    return _UNSAFE.sub(_escape, line)


def day_file_name(event: ActivityEvent, tz: tzinfo | None = None) -> str:
    """``YYYY-MM-DD.jsonl``: the file of the day the event happened on, by its own offset,
    or by ``tz`` when given (to file every event by the clock of one place)."""
    moment = event.ts if tz is None else event.ts.astimezone(tz)
    return f"{moment.date().isoformat()}.jsonl"


def _bad(line: str, allowed: str, reason: str) -> ValidationError:
    shown = line if len(line) <= _EXCERPT else line[:_EXCERPT] + "…"
    return ValidationError("activity line", shown, allowed, hint=reason)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for key, value in pairs:
        if key in record:
            raise ValueError(f"the key {key!r} appears twice")
        record[key] = value
    return record


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _parse_ts(value: object, default_tz: tzinfo | None) -> datetime:
    if not isinstance(value, str):
        raise ValidationError("ts", value, "an ISO 8601 timestamp string")
    raw = value.strip()
    try:
        if len(raw) <= len("YYYY-MM-DD"):
            raise ValueError(raw)  # a date alone is not a moment
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise ValidationError("ts", value, "an ISO 8601 date and time") from None
    if moment.tzinfo is None:
        if default_tz is None:
            raise ValidationError(
                "ts",
                value,
                "a timestamp with a UTC offset",
                hint="pass default_tz to read times written without an offset",
            )
        moment = moment.replace(tzinfo=default_tz)
    return moment


def _memory_ids(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise ValidationError("memory_ids", value, "a list of strings")
    return tuple(value)


def _meta(value: object) -> tuple[tuple[str, MetaValue], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ValidationError("meta", value, "an object of strings, numbers and booleans")
    return tuple(value.items())


def from_jsonl(line: str, default_tz: tzinfo | None = None) -> ActivityEvent:
    """The event one line of the log holds (a trailing line feed is allowed).

    Strict: the line must be one JSON object with the keys ``ts`` and ``type``, other keys
    only from :data:`KEYS`, none twice, and values of the right type (``null`` counts as
    absent). A ``ts`` without an offset is read in ``default_tz``, and rejected when none is
    given. The event is checked as :func:`~kioku.core.activity.events.check_event` does.
    Anything else raises :class:`~kioku.errors.ValidationError` with the reason.
    """
    if not isinstance(line, str):
        raise ValidationError("activity line", line, "a string")
    if not line.strip():
        raise _bad(line, "one JSON object", "the line is empty")
    try:
        record = json.loads(line, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except ValueError as exc:  # JSONDecodeError is a ValueError, as are the hooks' errors
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise _bad(line, "one JSON object", f"not valid: {reason}") from None
    if not isinstance(record, dict):
        raise _bad(line, "one JSON object", f"it is a {type(record).__name__}")
    unknown = sorted(set(record) - set(KEYS))
    if unknown:
        raise _bad(line, f"keys among {', '.join(KEYS)}", f"unknown keys: {', '.join(unknown)}")
    for key in ("ts", "type"):
        if record.get(key) is None:
            raise _bad(line, "keys ts and type", f"{key} is missing")
    values: dict[str, Any] = {
        "ts": _parse_ts(record["ts"], default_tz),
        "type": record["type"],
        "memory_ids": _memory_ids(record.get("memory_ids")),
        "meta": _meta(record.get("meta")),
    }
    for key in _STRING_KEYS:
        if record.get(key) is not None:
            values[_ATTRIBUTE[key]] = record[key]
    if record.get("exit") is not None:
        values["exit_code"] = record["exit"]
    return check_event(ActivityEvent(**values))
