"""Records the Store port exchanges for cold storage and the activity log (schema 8)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from kioku.records import Record

__all__ = ["ActivityQuery", "ActivityRow", "Original", "StoredActivity"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Original(Record):
    """The text an episode had before compression first rewrote it."""

    memory_id: str
    trigger: str
    content: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ActivityRow(Record):
    """One activity event to append: its JSON line and the columns readers filter on."""

    at: datetime
    type: str
    user_id: str
    agent_id: str
    line: str
    session_id: str | None = None
    memory_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ActivityQuery(Record):
    """Which events to read: ``None`` means any. ``since`` inclusive, ``until`` exclusive."""

    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    types: tuple[str, ...] = ()
    limit: int | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class StoredActivity(Record):
    """An event as stored: its sequence number, local day (YYYY-MM-DD) and JSON line."""

    seq: int
    day: str
    line: str
