"""The PostgreSQL store's erasure bookkeeping (schema version 7, as SQLite's schema 6): the
append-only audit log and the backups manifest.

The tables (:data:`.schema.V7_ERASURE`):

* ``erasure_audit``: one row per erasure; ``seq`` is an identity, ``details`` ``jsonb``.
  Triggers refuse ``UPDATE``, ``DELETE`` and ``TRUNCATE``: the log is append-only.
* ``backups`` and ``backup_ids``: per backup (see :mod:`.maintenance`), its path, time, the
  number of memories per user (keyed digests, never user ids) and a signed 64-bit hash of
  every memory id it holds (the same hash as SQLite's), read in the snapshot that was copied.

A mixin of :class:`.store.PostgresStore`.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Final

from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.writes import read_key
from kioku.adapters.store.sqlite.erasure import id_hash
from kioku.core.timefmt import format_ts, parse_ts
from kioku.errors import ValidationError
from kioku.ports.erasure import AuditEntry, BackupRecord, keyed_digest

__all__ = ["ErasurePart", "record_backup"]

_BACKUP_COLUMNS: Final = "seq, path, made_at, memories, users::text"


def _json(details: dict[str, object]) -> str:
    try:
        return json.dumps(details, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError("details", details, f"JSON without NaN ({exc})") from exc


def _record(row: tuple[object, ...]) -> BackupRecord:
    return BackupRecord(
        seq=int(str(row[0])),
        path=str(row[1]),
        made_at=parse_ts(str(row[2]), UTC),
        memories=int(str(row[3])),
        users={str(k): int(v) for k, v in json.loads(str(row[4])).items()},
    )


def record_backup(
    conn: Conn, path: str, at: datetime, held: Sequence[tuple[str, str]]
) -> BackupRecord:
    """Record a backup holding ``held`` (memory id, user id) pairs."""
    key = read_key(conn)
    users: dict[str, int] = {}
    for _memory, user in held:
        digest = keyed_digest(key, user)
        users[digest] = users.get(digest, 0) + 1
    row = conn.execute(
        "INSERT INTO backups (path, made_at, memories, users) VALUES (%s, %s, %s, %s::jsonb) "
        "RETURNING seq",
        (path, format_ts(at), len(held), json.dumps(users, sort_keys=True)),
    ).fetchone()
    assert row is not None
    seq = int(str(row[0]))
    conn.execute(
        "INSERT INTO backup_ids (backup_seq, id_hash) SELECT %s, h FROM unnest(%s::bigint[]) "
        "AS h ON CONFLICT DO NOTHING",
        (seq, sorted({id_hash(memory) for memory, _user in held})),
    )
    return BackupRecord(seq=seq, path=path, made_at=at, memories=len(held), users=users)


class ErasurePart:
    """Store methods of the erasure audit log and the backups manifest."""

    def _reading(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def append_audit(
        self, at: datetime, action: str, subject: str, items: int, details: dict[str, object]
    ) -> int:
        with self._writing() as conn:
            row = conn.execute(
                "INSERT INTO erasure_audit (at, action, subject, items, details) "
                "VALUES (%s, %s, %s, %s, %s::jsonb) RETURNING seq",
                (format_ts(at), action, subject, int(items), _json(dict(details))),
            ).fetchone()
        assert row is not None
        return int(str(row[0]))

    def read_audit(self, limit: int | None = None) -> builtins.list[AuditEntry]:
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT seq, at, action, subject, items, details::text FROM erasure_audit "
                "ORDER BY seq DESC LIMIT %s",
                (None if limit is None else max(0, int(limit)),),
            ).fetchall()
        return [
            AuditEntry(
                seq=int(str(r[0])),
                at=parse_ts(str(r[1]), UTC),
                action=str(r[2]),
                subject=str(r[3]),
                items=int(str(r[4])),
                details=dict(json.loads(str(r[5]))),
            )
            for r in reversed(rows)
        ]

    def backups(self) -> builtins.list[BackupRecord]:
        with self._reading() as conn:
            rows = conn.execute(f"SELECT {_BACKUP_COLUMNS} FROM backups ORDER BY seq").fetchall()
        return [_record(tuple(row)) for row in rows]

    def backups_containing(self, memory_ids: Sequence[str]) -> builtins.list[BackupRecord]:
        hashes = sorted({id_hash(memory_id) for memory_id in memory_ids})
        if not hashes:
            return []
        with self._reading() as conn:
            rows = conn.execute(
                f"SELECT {_BACKUP_COLUMNS} FROM backups WHERE seq IN "
                "(SELECT backup_seq FROM backup_ids WHERE id_hash = ANY(%s::bigint[])) "
                "ORDER BY seq",
                (hashes,),
            ).fetchall()
        return [_record(tuple(row)) for row in rows]
