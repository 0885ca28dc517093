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
    # Consolidation (spec 001 記憶の固定化, 能動的忘却):
    CONSOLIDATE = "consolidate"  # a knowledge item or procedure made from episodes
    REINFORCE_SOURCES = "add_sources"  # an item said again: its new source episodes added
    RECONSOLIDATE = "reconsolidate"  # updated by a newer episode, old version kept, version + 1
    SUPERSEDE = "supersede"  # replaced by a newer fact: kept as history, never primed
    MERGE = "merge"  # merged into another item (or into a new one) and archived
    COEXIST = "coexist"  # annotated: holds beside a seemingly contradicting fact
    MARK_LOW = "mark_low"  # low activation (daily downscaling)
    UNMARK_LOW = "unmark_low"  # active again
    FORGET = "forget"  # low for 60+ days: out of priming, kept in the archive
    PRUNE_VERSIONS = "prune_versions"  # old saved versions beyond the newest five removed
    OUTCOME = "outcome"  # a procedure's success or failure counted


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
