"""The Store methods the PostgreSQL adapter does not have yet (issue #17 is in progress).

Each raises :class:`.connection.NotYetImplementedError`, which the contract suite reports as a
skip with the method's name (never as a pass). Move a method out of here as it is written;
when this mixin is empty, delete it and the suite's translation of the error.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from kioku.adapters.store.postgres.connection import NotYetImplementedError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from kioku.core.lifecycle.links import Link
    from kioku.core.lifecycle.log import LogEntry
    from kioku.core.lifecycle.plan import Snapshot
    from kioku.ports.erasure import AuditEntry, BackupRecord, ScrubReport

__all__ = ["PendingPart"]


class PendingPart:
    """Store methods still to be written for PostgreSQL."""

    def batch_snapshot(self, until: datetime) -> Snapshot:
        raise NotYetImplementedError("batch_snapshot")

    def write_scores(
        self,
        ids: Sequence[str],
        memory_days: Sequence[float],
        coefficient: Sequence[float],
        recall_count: Sequence[int],
        score: Sequence[float],
    ) -> None:
        raise NotYetImplementedError("write_scores")

    def add_links(self, links: Sequence[Link], at: datetime) -> None:
        raise NotYetImplementedError("add_links")

    def remove_links(self, pairs: Sequence[tuple[str, str]]) -> None:
        raise NotYetImplementedError("remove_links")

    def link_vectors(
        self, model: str, user_id: str, agent_id: str, ids: Sequence[str] | None
    ) -> tuple[builtins.list[str], npt.NDArray[np.float32]]:
        raise NotYetImplementedError("link_vectors")

    def append_log(self, entries: Sequence[LogEntry]) -> None:
        raise NotYetImplementedError("append_log")

    def read_log(
        self,
        *,
        memory_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        since: datetime | None = None,
        events: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> builtins.list[LogEntry]:
        raise NotYetImplementedError("read_log")

    def backup(self, target: Path, *, overwrite: bool = False) -> BackupRecord:
        raise NotYetImplementedError("backup")

    def append_audit(
        self, at: datetime, action: str, subject: str, items: int, details: dict[str, object]
    ) -> int:
        raise NotYetImplementedError("append_audit")

    def read_audit(self, limit: int | None = None) -> builtins.list[AuditEntry]:
        raise NotYetImplementedError("read_audit")

    def backups(self) -> builtins.list[BackupRecord]:
        raise NotYetImplementedError("backups")

    def backups_containing(self, memory_ids: Sequence[str]) -> builtins.list[BackupRecord]:
        raise NotYetImplementedError("backups_containing")

    def delete_log(self, user_id: str) -> int:
        raise NotYetImplementedError("delete_log")

    def delete_state(self, prefix: str) -> int:
        raise NotYetImplementedError("delete_state")

    def scrub(self) -> ScrubReport:
        raise NotYetImplementedError("scrub")

    def vacuum(self) -> tuple[int, int, ScrubReport]:
        raise NotYetImplementedError("vacuum")
