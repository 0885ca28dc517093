"""Schema version 9: what consolidation, active forgetting, resolution propagation and the
mid-term tier keep.

* ``memories.last_access_utc``: when the memory was last recalled, primed or found, or its
  procedure's outcome reported (NULL: never); ``memories.low_since_utc``: since when daily
  downscaling has found it of low activity (spec 001; NULL: it is not). Seconds since the
  epoch, as ``created_utc``.
* ``consolidation_runs``: one row per consolidation done, unique per kind, period and scope,
  so a period is consolidated once; its report is JSON of counts and ids.
* ``memory_versions``: a knowledge item's or procedure's text and details before a change
  (spec 001 archive/versions and archive/procedure_versions); deleting the memory deletes
  them.
* ``resolutions``: items reported resolved, shared by every agent of one owner (spec 001
  解決伝播, layer 2).
* ``midterm``: the mid-term tier of spec 003 (§2, §4), one row per thread of a scope, with
  the turn texts kept only here until the row expires.
* ``usage`` accepts the purpose ``consolidate`` (the LLM steps of consolidation).

Every time a reader compares is kept as seconds since the epoch (``*_utc``) beside its ISO
8601 text with the offset it was given, which is what is read back. The ``read_*`` functions
turn rows selected with the ``*_COLUMNS`` here into the port's records.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Final

from kioku.adapters.store.sqlite.codec import decode_instant, local_zone
from kioku.core.kinds import Details
from kioku.core.kinds_json import details_from_json
from kioku.core.model import Kind
from kioku.core.timefmt import parse_ts
from kioku.errors import StoreCorruptError, ValidationError
from kioku.ports.store_records import (
    ActivityFields,
    ConsolidationRun,
    MemoryVersion,
    MidTermEntry,
    Resolution,
)

__all__ = [
    "ACTIVITY_SELECT",
    "CONSOLIDATION_SCHEMA",
    "CONSOLIDATION_TABLES",
    "MIDTERM_COLUMNS",
    "MIDTERM_UPSERT",
    "RESOLUTION_COLUMNS",
    "RUN_COLUMNS",
    "VERSION_COLUMNS",
    "read_activity",
    "read_entry",
    "read_resolution",
    "read_run",
    "read_version",
]

Row = Sequence[object]

#: The tables of this version that hold rows of a user (``kioku erase --user`` empties them).
CONSOLIDATION_TABLES: Final = ("consolidation_runs", "resolutions", "midterm")

CONSOLIDATION_SCHEMA: Final = (
    "ALTER TABLE memories ADD COLUMN last_access_utc REAL",
    "ALTER TABLE memories ADD COLUMN low_since_utc REAL",
    """CREATE TABLE consolidation_runs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (length(kind) > 0),
    period TEXT NOT NULL CHECK (length(period) > 0),
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    done_at TEXT NOT NULL,
    done_utc REAL NOT NULL,
    report TEXT NOT NULL DEFAULT '{}',
    UNIQUE (user_id, agent_id, kind, period)
)""",
    "CREATE INDEX idx_consolidation_runs_time ON consolidation_runs(user_id, agent_id, done_utc)",
    """CREATE TABLE memory_versions (
    rid INTEGER PRIMARY KEY,
    memory_id TEXT NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    kind TEXT NOT NULL,
    saved_at TEXT NOT NULL,
    saved_utc REAL NOT NULL,
    trigger TEXT NOT NULL,
    content TEXT NOT NULL,
    details TEXT
)""",
    "CREATE INDEX idx_memory_versions_memory ON memory_versions(memory_id, version)",
    """CREATE TABLE resolutions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT,
    at TEXT NOT NULL,
    at_utc REAL NOT NULL,
    item TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT ''
)""",
    "CREATE INDEX idx_resolutions_user_time ON resolutions(user_id, at_utc)",
    """CREATE TABLE midterm (
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    session_id TEXT,
    created TEXT NOT NULL,
    created_utc REAL NOT NULL,
    hot_until TEXT NOT NULL,
    expires TEXT NOT NULL,
    expires_utc REAL NOT NULL,
    summary TEXT NOT NULL,
    keywords TEXT NOT NULL DEFAULT '[]',
    turns TEXT NOT NULL DEFAULT '[]',
    turn_count INTEGER NOT NULL CHECK (turn_count >= 0),
    PRIMARY KEY (user_id, agent_id, thread_id)
)""",
    "CREATE INDEX idx_midterm_expires ON midterm(expires_utc)",
    # Token usage gains the purpose of consolidation's LLM steps.
    """CREATE TABLE usage_v9 (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    at_utc REAL NOT NULL,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    purpose TEXT NOT NULL CHECK (
        purpose IN ('analyze', 'summarize', 'keywords', 'embed', 'profile', 'consolidate')
    ),
    input_tokens INTEGER NOT NULL CHECK (input_tokens >= 0),
    output_tokens INTEGER NOT NULL CHECK (output_tokens >= 0)
)""",
    "INSERT INTO usage_v9 (id, at, at_utc, provider, model, purpose, input_tokens, output_tokens) "
    "SELECT id, at, at_utc, provider, model, purpose, input_tokens, output_tokens FROM usage",
    "DROP TABLE usage",
    "ALTER TABLE usage_v9 RENAME TO usage",
    "CREATE INDEX IF NOT EXISTS idx_usage_at_utc ON usage(at_utc)",
)

RUN_COLUMNS: Final = "kind, period, user_id, agent_id, done_at, report"
VERSION_COLUMNS: Final = "memory_id, version, kind, saved_at, trigger, content, details"
RESOLUTION_COLUMNS: Final = "seq, item, at, user_id, agent_id, session_id, source"
MIDTERM_COLUMNS: Final = (
    "thread_id, user_id, agent_id, created, hot_until, expires, summary, keywords, turns, "
    "turn_count, session_id"
)
#: Keep a thread's entry: a new one, or the scope's entry of that thread replaced.
MIDTERM_UPSERT: Final = (
    f"INSERT INTO midterm ({MIDTERM_COLUMNS}, created_utc, expires_utc) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (user_id, agent_id, thread_id) DO UPDATE SET "
    "created = excluded.created, created_utc = excluded.created_utc, "
    "hot_until = excluded.hot_until, expires = excluded.expires, "
    "expires_utc = excluded.expires_utc, summary = excluded.summary, "
    "keywords = excluded.keywords, turns = excluded.turns, turn_count = excluded.turn_count, "
    "session_id = excluded.session_id"
)
ACTIVITY_SELECT: Final = (
    "SELECT id, kind, created_utc, last_access_utc, recall_count, recalled_since_last_batch, "
    "protected, archived_at IS NOT NULL, low_since_utc, details FROM memories"
)


def _corrupt(what: str, detail: str) -> StoreCorruptError:
    return StoreCorruptError(
        f"{what} is unreadable ({detail})",
        hint="run `kioku doctor`; fix the row with the sqlite3 shell or restore a backup",
    )


def _time(text: object, what: str) -> datetime:
    try:
        return parse_ts(str(text), local_zone())
    except ValueError as exc:
        raise _corrupt(what, str(exc)) from exc


def _instant(value: object, what: str) -> datetime | None:
    try:
        return decode_instant(value)
    except (ValueError, OverflowError, OSError) as exc:
        raise _corrupt(what, str(exc)) from exc


def _json(text: object, what: str) -> object:
    try:
        return json.loads(str(text))
    except ValueError as exc:
        raise _corrupt(what, f"not JSON: {exc}") from exc


def _texts(text: object, what: str) -> tuple[str, ...]:
    value = _json(text, what)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _corrupt(what, "not a JSON array of strings")
    return tuple(value)


def _details(kind: object, text: object, what: str) -> Details | None:
    try:
        return details_from_json(Kind(str(kind)), None if text is None else str(text))
    except (ValueError, ValidationError) as exc:
        raise _corrupt(what, str(exc)) from exc


def _optional(value: object) -> str | None:
    return None if value is None else str(value)


def read_run(r: Row) -> ConsolidationRun:
    what = f"the {r[0]} consolidation run of {r[1]}"
    report = _json(r[5], what)
    if not isinstance(report, dict):
        raise _corrupt(what, "its report is not a JSON object")
    return ConsolidationRun(
        kind=str(r[0]),
        period=str(r[1]),
        user_id=str(r[2]),
        agent_id=str(r[3]),
        done_at=_time(r[4], what),
        report=report,
    )


def read_version(r: Row) -> MemoryVersion:
    what = f"version {r[1]} of memory {r[0]!r}"
    return MemoryVersion(
        memory_id=str(r[0]),
        version=int(str(r[1])),
        saved_at=_time(r[3], what),
        trigger=str(r[4]),
        content=str(r[5]),
        details=_details(r[2], r[6], what),
    )


def read_resolution(r: Row) -> Resolution:
    return Resolution(
        item=str(r[1]),
        at=_time(r[2], f"resolution {r[0]}"),
        user_id=str(r[3]),
        agent_id=str(r[4]),
        session_id=_optional(r[5]),
        source=str(r[6]),
        seq=int(str(r[0])),
    )


def read_entry(r: Row) -> MidTermEntry:
    what = f"the mid-term entry of thread {r[0]!r}"
    return MidTermEntry(
        thread_id=str(r[0]),
        user_id=str(r[1]),
        agent_id=str(r[2]),
        created=_time(r[3], what),
        hot_until=_time(r[4], what),
        expires=_time(r[5], what),
        summary=str(r[6]),
        keywords=_texts(r[7], what),
        turns=_texts(r[8], what),
        turn_count=int(str(r[9])),
        session_id=_optional(r[10]),
    )


def read_activity(r: Row) -> ActivityFields:
    what = f"memory {r[0]!r}"
    created = _instant(r[2], what)
    if created is None:
        raise _corrupt(what, "no creation time")
    return ActivityFields(
        id=str(r[0]),
        kind=str(r[1]),
        created=created,
        last_access=_instant(r[3], what),
        recall_count=int(str(r[4] or 0)),
        recalled_since_last_batch=bool(r[5]),
        protected=bool(r[6]),
        archived=bool(r[7]),
        low_since=_instant(r[8], what),
        details=_details(r[1], r[9], what),
    )
