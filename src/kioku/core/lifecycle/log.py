"""The lifecycle log (spec 004, memory_lifecycle_log): one entry per transition of a memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

__all__ = ["Event", "LogEntry"]


class Event(StrEnum):
    """What happened to a memory."""

    REINFORCE = "reinforce"  # recalled since the last batch: memory_days reduced, coefficient up
    COMPRESS = "compress"  # Level 1 → 2 (summary) or 2 → 3 (keywords), text rewritten
    ARCHIVE = "archive"  # to Level 4
    REVIVE = "revive"  # back from the archive to Level 3
    DEFER = "defer"  # a revival request turned down (Level 3 full)
    DELETE = "delete"  # erased (auto-delete, or `kioku forget`)
    LINK = "link"  # a relation added (auto-linking, or a turned link)
    UNLINK = "unlink"  # a relation removed (target inactive, or turned)


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One line of the lifecycle log: a memory moved, compressed, archived or erased."""

    event: Event
    memory_id: str
    at: datetime
    user_id: str
    agent_id: str
    batch_day: str | None = None  # YYYY-MM-DD of the batch that made the change
    level_before: int | None = None
    level_after: int | None = None
    score_before: float | None = None
    score_after: float | None = None
    details: Mapping[str, object] = field(default_factory=dict)
    seq: int | None = None  # assigned by the store
