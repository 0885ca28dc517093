"""Erasure bookkeeping of the SQLite store (schema version 6): tombstones, the audit log and
the backups manifest, and the work that takes erased bytes off the files.

* ``tombstones``: one keyed digest per erased source id (see :mod:`kioku.ports.erasure`); the
  key is a random secret kept in ``state`` (:data:`KEY_STATE`), made by the migration.
* ``erasure_audit``: append-only (triggers refuse ``UPDATE`` and ``DELETE``).
* ``backups`` and ``backup_ids``: per backup, its path, time, counts per user (keyed digests)
  and a 64-bit hash of every memory id it holds, read from the copy itself.

Erasing a user also empties schema 9's tables of that user (consolidation runs, resolutions,
the mid-term tier: :func:`delete_user_rows`); a memory's saved versions go with the memory.

Scrubbing, after an erasure has committed: SQLite's ``secure_delete`` (set on every
connection, see :mod:`.connection`) zeroes the cells and pages freed by the delete; the FTS5
index keeps a deleted row's terms in its older segments until they are merged, so the index is
merged (``'optimize'``); and the write-ahead log, which still holds the pages as they were, is
checkpointed and truncated (``PRAGMA wal_checkpoint(TRUNCATE)``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Final

from kioku.adapters.store.sqlite.connection import is_busy
from kioku.adapters.store.sqlite.consolidation_schema import CONSOLIDATION_TABLES
from kioku.core.timefmt import format_ts, parse_ts
from kioku.digests import blake2b
from kioku.ports.erasure import AuditEntry, BackupRecord, ErasedSourceError, keyed_digest

__all__ = [
    "CREATE_ERASURE",
    "FTS_SECURE_DELETE",
    "KEY_STATE",
    "add_tombstones",
    "append_audit",
    "backup_held",
    "backups_containing",
    "checkpoint_truncate",
    "create_key",
    "delete_user_rows",
    "id_hash",
    "list_backups",
    "merge_index",
    "read_audit",
    "read_key",
    "record_backup",
    "refuse_erased",
    "tombstone_digests",
    "utc_now",
]

#: The ``state`` row holding the store's secret key (hex) for keyed digests.
KEY_STATE: Final = "erasure_key"

CREATE_ERASURE: Final = (
    """CREATE TABLE tombstones (
    digest TEXT NOT NULL PRIMARY KEY,
    erased_at TEXT NOT NULL
) WITHOUT ROWID""",
    """CREATE TABLE erasure_audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    action TEXT NOT NULL,
    subject TEXT NOT NULL,
    items INTEGER NOT NULL,
    details TEXT NOT NULL DEFAULT '{}'
)""",
    """CREATE TRIGGER erasure_audit_no_update BEFORE UPDATE ON erasure_audit
BEGIN SELECT RAISE(ABORT, 'the erasure audit log is append-only'); END""",
    """CREATE TRIGGER erasure_audit_no_delete BEFORE DELETE ON erasure_audit
BEGIN SELECT RAISE(ABORT, 'the erasure audit log is append-only'); END""",
    """CREATE TABLE backups (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    path TEXT NOT NULL,
    made_at TEXT NOT NULL,
    memories INTEGER NOT NULL,
    users TEXT NOT NULL DEFAULT '{}'
)""",
    """CREATE TABLE backup_ids (
    backup_seq INTEGER NOT NULL REFERENCES backups(seq) ON DELETE CASCADE,
    id_hash INTEGER NOT NULL,
    PRIMARY KEY (id_hash, backup_seq)
) WITHOUT ROWID""",
)


def create_key(conn: sqlite3.Connection) -> None:
    """Migration step: the store's secret for keyed digests (kept if one exists)."""
    conn.execute(
        "INSERT OR IGNORE INTO state (key, value) VALUES (?, ?)",
        (KEY_STATE, os.urandom(32).hex()),
    )


def read_key(conn: sqlite3.Connection) -> bytes:
    row = conn.execute("SELECT value FROM state WHERE key = ?", (KEY_STATE,)).fetchone()
    if row is None:  # a state row deleted by hand: make a new secret (old digests lapse)
        create_key(conn)
        return read_key(conn)
    return bytes.fromhex(str(row[0]))


def tombstone_digests(conn: sqlite3.Connection) -> frozenset[str]:
    return frozenset(str(row[0]) for row in conn.execute("SELECT digest FROM tombstones"))


def add_tombstones(conn: sqlite3.Connection, source_ids: Iterable[str], at: datetime) -> int:
    key = read_key(conn)
    digests = sorted({keyed_digest(key, source) for source in source_ids})
    before = conn.total_changes
    conn.executemany(
        "INSERT OR IGNORE INTO tombstones (digest, erased_at) VALUES (?, ?)",
        [(digest, format_ts(at.astimezone(UTC))) for digest in digests],
    )
    return conn.total_changes - before


def refuse_erased(conn: sqlite3.Connection, source_ids: Sequence[str]) -> None:
    """Raise ErasedSourceError when one of ``source_ids`` is tombstoned."""
    if not source_ids:
        return
    key = read_key(conn)
    for source in source_ids:
        found = conn.execute(
            "SELECT 1 FROM tombstones WHERE digest = ?", (keyed_digest(key, source),)
        ).fetchone()
        if found is not None:
            raise ErasedSourceError(source)


def append_audit(
    conn: sqlite3.Connection,
    at: datetime,
    action: str,
    subject: str,
    items: int,
    details: dict[str, object],
) -> int:
    cursor = conn.execute(
        "INSERT INTO erasure_audit (at, action, subject, items, details) VALUES (?, ?, ?, ?, ?)",
        (format_ts(at), action, subject, int(items), json.dumps(details, ensure_ascii=False)),
    )
    return int(cursor.lastrowid or 0)


def read_audit(conn: sqlite3.Connection, limit: int | None) -> list[AuditEntry]:
    rows = conn.execute(
        "SELECT seq, at, action, subject, items, details FROM erasure_audit "
        "ORDER BY seq DESC LIMIT ?",
        (-1 if limit is None else int(limit),),
    ).fetchall()
    return [
        AuditEntry(
            seq=int(r[0]),
            at=parse_ts(str(r[1]), UTC),
            action=str(r[2]),
            subject=str(r[3]),
            items=int(r[4]),
            details=dict(json.loads(str(r[5]))),
        )
        for r in reversed(rows)
    ]


def delete_user_rows(conn: sqlite3.Connection, user_id: str) -> int:
    """Delete the consolidation runs, resolutions and mid-term entries of ``user_id``."""
    # Table names come from the fixed tuple of the schema, never from a caller.
    return sum(
        conn.execute(f"DELETE FROM {table} WHERE user_id = ?", (user_id,)).rowcount
        for table in CONSOLIDATION_TABLES
    )


def id_hash(memory_id: str) -> int:
    """A signed 64-bit hash of a memory id (SQLite integers are signed)."""
    digest = blake2b(memory_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def record_backup(
    conn: sqlite3.Connection,
    path: str,
    at: datetime,
    held: Sequence[tuple[str, str]],
) -> BackupRecord:
    """Record a backup holding ``held`` (memory id, user id) pairs."""
    key = read_key(conn)
    users: dict[str, int] = {}
    for _memory, user in held:
        digest = keyed_digest(key, user)
        users[digest] = users.get(digest, 0) + 1
    cursor = conn.execute(
        "INSERT INTO backups (path, made_at, memories, users) VALUES (?, ?, ?, ?)",
        (path, format_ts(at), len(held), json.dumps(users, sort_keys=True)),
    )
    seq = int(cursor.lastrowid or 0)
    conn.executemany(
        "INSERT OR IGNORE INTO backup_ids (backup_seq, id_hash) VALUES (?, ?)",
        [(seq, id_hash(memory)) for memory, _user in held],
    )
    return BackupRecord(seq=seq, path=path, made_at=at, memories=len(held), users=users)


def _record(row: sqlite3.Row | tuple[object, ...]) -> BackupRecord:
    return BackupRecord(
        seq=int(str(row[0])),
        path=str(row[1]),
        made_at=parse_ts(str(row[2]), UTC),
        memories=int(str(row[3])),
        users={str(k): int(v) for k, v in json.loads(str(row[4])).items()},
    )


def list_backups(conn: sqlite3.Connection) -> list[BackupRecord]:
    rows = conn.execute(
        "SELECT seq, path, made_at, memories, users FROM backups ORDER BY seq"
    ).fetchall()
    return [_record(row) for row in rows]


def backups_containing(conn: sqlite3.Connection, memory_ids: Sequence[str]) -> list[BackupRecord]:
    """The recorded backups that hold at least one of ``memory_ids``."""
    seqs: set[int] = set()
    for memory_id in dict.fromkeys(memory_ids):
        seqs.update(
            int(row[0])
            for row in conn.execute(
                "SELECT backup_seq FROM backup_ids WHERE id_hash = ?", (id_hash(memory_id),)
            )
        )
    return [record for record in list_backups(conn) if record.seq in seqs]


#: FTS5 removes a deleted row's terms from its segments at once from SQLite 3.42 on.
FTS_SECURE_DELETE: Final = sqlite3.sqlite_version_info >= (3, 42, 0)


def merge_index(conn: sqlite3.Connection) -> None:
    """Merge every segment of the lexical index into one, dropping deleted rows' terms.

    Where FTS5 has its ``secure-delete`` option (SQLite 3.42 or newer) it is switched on
    too, so later deletes leave no terms behind even before a merge; the merge runs either
    way (it is what the tests prove on older SQLite).
    """
    if FTS_SECURE_DELETE:
        conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('secure-delete', 1)")
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")


#: How long one checkpoint attempt may wait for readers, and how many attempts.
_CHECKPOINT_WAIT_MS: Final = 1000
_CHECKPOINT_ATTEMPTS: Final = 3


def checkpoint_truncate(conn: sqlite3.Connection, busy_timeout_ms: int) -> tuple[bool, str]:
    """Copy the write-ahead log into the database and truncate it to zero bytes.

    A reader with an open transaction keeps the log in use: wait for it briefly a few times,
    then give up and say so. Returns ``(truncated, why not)``.
    """
    detail = ""
    conn.execute(f"PRAGMA busy_timeout = {_CHECKPOINT_WAIT_MS}")
    try:
        for attempt in range(_CHECKPOINT_ATTEMPTS):
            try:
                row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                detail = "another process is writing"
            else:
                if row is not None and int(row[0]) == 0:
                    return True, ""
                detail = "another process holds a read transaction open"
            time.sleep(0.05 * (attempt + 1))
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    return False, detail


def backup_held(copy: sqlite3.Connection) -> list[tuple[str, str]]:
    """``(memory id, user id)`` of every memory in a backup copy."""
    return [(str(r[0]), str(r[1])) for r in copy.execute("SELECT id, user_id FROM memories")]


def utc_now() -> datetime:
    return datetime.now(UTC)
