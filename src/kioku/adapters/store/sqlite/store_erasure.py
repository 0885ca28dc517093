"""The SQLite store's part for the records of erasure (schema version 6): tombstones, the
audit trail, the backups manifest, and the deletion of an owner's log and state rows.

A mixin of :class:`.store.SqliteStore`, kept apart so the store module stays readable. It
uses only the store's ``_reading``/``_writing`` transactions.
"""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime

from kioku.ports.erasure import AuditEntry, BackupRecord, Tombstones, keyed_digest

__all__ = ["ErasurePart"]


class ErasurePart:
    """Store methods of erasure's records."""

    def _reading(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def tombstones(self) -> Tombstones:
        from kioku.adapters.store.sqlite import erasure

        with self._reading() as conn:
            return Tombstones(erasure.read_key(conn), erasure.tombstone_digests(conn))

    def add_tombstones(self, source_ids: Sequence[str], at: datetime) -> int:
        from kioku.adapters.store.sqlite import erasure

        with self._writing() as conn:
            return erasure.add_tombstones(conn, source_ids, at)

    def secret_digest(self, text: str) -> str:
        from kioku.adapters.store.sqlite import erasure

        with self._reading() as conn:
            return keyed_digest(erasure.read_key(conn), text)

    def append_audit(
        self, at: datetime, action: str, subject: str, items: int, details: dict[str, object]
    ) -> int:
        from kioku.adapters.store.sqlite import erasure

        with self._writing() as conn:
            return erasure.append_audit(conn, at, action, subject, items, details)

    def read_audit(self, limit: int | None = None) -> builtins.list[AuditEntry]:
        from kioku.adapters.store.sqlite import erasure

        with self._reading() as conn:
            return erasure.read_audit(conn, limit)

    def backups(self) -> builtins.list[BackupRecord]:
        from kioku.adapters.store.sqlite import erasure

        with self._reading() as conn:
            return erasure.list_backups(conn)

    def backups_containing(self, memory_ids: Sequence[str]) -> builtins.list[BackupRecord]:
        from kioku.adapters.store.sqlite import erasure

        with self._reading() as conn:
            return erasure.backups_containing(conn, memory_ids)

    def delete_log(self, user_id: str) -> int:
        """Also deletes the user's consolidation runs, resolutions and mid-term entries."""
        from kioku.adapters.store.sqlite import erasure

        with self._writing() as conn:
            erasure.delete_user_rows(conn, user_id)
            return conn.execute("DELETE FROM lifecycle_log WHERE user_id = ?", (user_id,)).rowcount

    def delete_state(self, prefix: str) -> int:
        with self._writing() as conn:
            return conn.execute(
                "DELETE FROM state WHERE substr(key, 1, length(?)) = ?", (prefix, prefix)
            ).rowcount
