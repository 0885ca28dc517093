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
    from kioku.ports.erasure import AuditEntry, BackupRecord, ScrubReport

__all__ = ["PendingPart"]


class PendingPart:
    """Store methods still to be written for PostgreSQL."""

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

    def scrub(self) -> ScrubReport:
        raise NotYetImplementedError("scrub")

    def vacuum(self) -> tuple[int, int, ScrubReport]:
        raise NotYetImplementedError("vacuum")
