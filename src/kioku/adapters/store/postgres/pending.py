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
from kioku.ports.store_records import (
    ConsolidationRun,
    MemoryVersion,
    MidTermEntry,
    Resolution,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from kioku.core.lifecycle.links import Link
    from kioku.core.lifecycle.log import LogEntry
    from kioku.core.lifecycle.plan import Snapshot
    from kioku.core.model import Memory
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

    def consolidation_done(self, kind: str, period: str, user_id: str, agent_id: str) -> bool:
        raise NotYetImplementedError("consolidation_done")

    def record_consolidation(self, run: ConsolidationRun) -> None:
        raise NotYetImplementedError("record_consolidation")

    def consolidation_runs(
        self, user_id: str, agent_id: str, kind: str | None = None, limit: int = 100
    ) -> builtins.list[ConsolidationRun]:
        raise NotYetImplementedError("consolidation_runs")

    def save_version(self, memory: Memory, at: datetime) -> int:
        raise NotYetImplementedError("save_version")

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        raise NotYetImplementedError("versions")

    def delete_versions(self, memory_id: str, versions: Sequence[int]) -> int:
        raise NotYetImplementedError("delete_versions")

    def add_resolutions(self, items: Sequence[Resolution]) -> builtins.list[int]:
        raise NotYetImplementedError("add_resolutions")

    def resolutions(
        self, user_id: str, since: datetime | None = None, limit: int | None = None
    ) -> builtins.list[Resolution]:
        raise NotYetImplementedError("resolutions")

    def put_midterm(self, entry: MidTermEntry) -> None:
        raise NotYetImplementedError("put_midterm")

    def midterm(
        self, user_id: str, agent_id: str, now: datetime, thread_id: str | None = None
    ) -> builtins.list[MidTermEntry]:
        raise NotYetImplementedError("midterm")

    def expire_midterm(self, now: datetime) -> int:
        raise NotYetImplementedError("expire_midterm")

    def delete_consolidation(self, user_id: str) -> int:
        raise NotYetImplementedError("delete_consolidation")

    def forget_traces(
        self, memory_id: str, user_id: str, agent_id: str, session_id: str | None
    ) -> int:
        raise NotYetImplementedError("forget_traces")

    def scrub(self) -> ScrubReport:
        raise NotYetImplementedError("scrub")

    def vacuum(self) -> tuple[int, int, ScrubReport]:
        raise NotYetImplementedError("vacuum")
