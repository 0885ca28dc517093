"""The PostgreSQL store's erasure bookkeeping (schema version 7, as SQLite's schema 6): the
append-only audit log and the backups manifest.

The tables (:data:`.schema.V7_ERASURE`):

* ``erasure_audit``: one row per erasure; ``seq`` is an identity, ``details`` ``jsonb``.
  Triggers refuse ``UPDATE``, ``DELETE`` and ``TRUNCATE``: the log is append-only.
* ``backups`` and ``backup_ids``: per backup (see :mod:`.maintenance`), its path, time, the
  number of memories per user (keyed digests, never user ids) and a signed 64-bit hash of
  every memory id it holds (the same hash as SQLite's), read in the snapshot that was copied.

A mixin of :class:`.store.PostgresStore`.

After an erasure has committed, :func:`rewrite_tables` and :func:`drop_old_wal` take its text
off the server's files (the store's ``scrub``; see docs/postgres.md): a committed ``DELETE``
leaves the rows' bytes in table, TOAST and index pages (plain ``VACUUM`` frees the space but
does not overwrite it), in the planner statistics that ``ANALYZE`` sampled, and in the
write-ahead log. Each step reports what it could not do and what an administrator must run
or set, so the report never claims more than was done.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Final

from psycopg import errors as pg_errors
from psycopg import sql

from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.writes import read_key
from kioku.adapters.store.sqlite.erasure import id_hash
from kioku.core.timefmt import format_ts, parse_ts
from kioku.errors import ValidationError
from kioku.ports.erasure import AuditEntry, BackupRecord, keyed_digest

__all__ = ["ErasurePart", "drop_old_wal", "record_backup", "rewrite_tables"]

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


# -- taking erased text off the server's files ------------------------------------------------

_TABLES: Final = (
    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
    'ORDER BY tablename COLLATE "C"'
)
#: Transactions, prepared transactions and replication slots whose snapshot may still see
#: rows deleted before ``%s`` (the time the scrub began): a rewrite copies such rows. Other
#: roles' transactions show only to members of pg_read_all_stats (superusers are).
_OLD_SNAPSHOTS: Final = (
    "SELECT (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
    "AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL "
    "AND backend_type <> 'autovacuum worker' AND xact_start < %s) "
    "+ (SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()) "
    "+ (SELECT count(*) FROM pg_replication_slots "
    "WHERE xmin IS NOT NULL OR catalog_xmin IS NOT NULL)"
)
#: May this role rewrite ``pg_statistic``: as the database's owner (superusers are) or, from
#: PostgreSQL 17, with the MAINTAIN privilege.
_MAY_REWRITE_STATISTICS: Final = (
    "SELECT pg_has_role(current_user, d.datdba, 'USAGE') OR "
    "CASE WHEN current_setting('server_version_num')::int >= 170000 "  # no pg_maintain before
    "THEN pg_has_role(current_user, 'pg_maintain', 'USAGE') ELSE false END "
    "FROM pg_database AS d WHERE d.datname = current_database()"
)
#: Tables of the schema this role may not rewrite (VACUUM skips them with a warning only).
_NOT_OWNED: Final = (
    "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() "
    "AND NOT pg_has_role(current_user, tableowner, 'USAGE')"
)
_KEEPS_WAL: Final = (
    "SELECT current_setting('wal_recycle'), current_setting('wal_keep_size'), "
    "current_setting('archive_mode'), "
    "(SELECT count(*) FROM pg_replication_slots WHERE restart_lsn IS NOT NULL)"
)


def _one(conn: Conn, query: str, params: tuple[object, ...] = ()) -> object:
    row = conn.execute(query, params).fetchone()
    assert row is not None
    return row[0]


def _wal_kept(conn: Conn) -> list[str]:
    """What in the server's settings keeps old write-ahead log after a checkpoint."""
    row = conn.execute(_KEEPS_WAL).fetchone()
    assert row is not None
    recycle, keep, archive, slots = (str(v) for v in row)
    kept = []
    if recycle != "off":
        kept.append(
            "the server recycles old WAL segments (wal_recycle = on), which keeps their "
            "bytes: an administrator must set wal_recycle = off"
        )
    if keep not in ("0", "0MB", "0kB"):
        kept.append(f"wal_keep_size = {keep} keeps old WAL: an administrator must set it to 0")
    if archive != "off":
        kept.append(
            "WAL archiving is on (archive_mode): the archive keeps copies kioku cannot erase"
        )
    if slots != "0":
        kept.append(f"{slots} replication slot(s) keep old WAL and replicas hold copies")
    return kept


def rewrite_tables(conn: Conn) -> list[str]:
    """``VACUUM (FULL)``, then ``ANALYZE``, every table of the schema, on an autocommit
    connection: each table and its indexes and TOAST are written into new files and the old
    ones unlinked, and the planner statistics are taken again from what is left. What could
    not be done, for the report (empty when all was)."""
    problems = []
    if _one(conn, "SELECT pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')") is not True:
        problems.append(
            "this role cannot see other roles' transactions, so it cannot tell whether one "
            "older than this erasure kept the erased rows through the rewrite: an "
            "administrator must GRANT pg_read_all_stats TO <role>"
        )
    began = _one(conn, "SELECT clock_timestamp()")  # the server's clock, not this host's
    held = int(str(_one(conn, _OLD_SNAPSHOTS, (began,))))
    if held:
        problems.append(
            f"{held} transaction(s) or replication slot(s) older than this erasure could still "
            "see the erased rows, so rewriting the tables kept them: run `kioku vacuum` when "
            "they have ended"
        )
    if int(str(_one(conn, _NOT_OWNED))):
        problems.append(
            "this role does not own every table of the schema, and VACUUM FULL skips those: "
            "run `kioku vacuum` as their owner"
        )
    schema = str(_one(conn, "SELECT current_schema()"))
    tables = [str(r[0]) for r in conn.execute(_TABLES).fetchall()]
    for command in ("VACUUM (FULL) {}.{}", "ANALYZE {}.{}"):
        for table in tables:
            statement = sql.SQL(command).format(sql.Identifier(schema), sql.Identifier(table))
            conn.execute(statement)
    if _one(conn, _MAY_REWRITE_STATISTICS) is True:
        conn.execute("VACUUM (FULL) pg_catalog.pg_statistic")
    else:
        problems.append(
            "this role may not rewrite pg_catalog.pg_statistic (it must own the database), "
            "where ANALYZE keeps sample values of the tables: an administrator must run "
            "VACUUM (FULL) pg_catalog.pg_statistic"
        )
    return problems


def drop_old_wal(conn: Conn) -> list[str]:
    """Start a new WAL segment, then CHECKPOINT, so the segments written before (which hold
    the erased rows' inserts and any page images) are removed. What could not be done, or
    what the server's settings keep (empty when the old log is gone)."""
    kept = _wal_kept(conn)
    for statement, grant in (
        ("SELECT pg_switch_wal()", "GRANT EXECUTE ON FUNCTION pg_switch_wal() TO <role>"),
        ("CHECKPOINT", "GRANT pg_checkpoint TO <role> (PostgreSQL 15+)"),
    ):
        try:
            conn.execute(statement)
        except pg_errors.InsufficientPrivilege:
            return [
                f"this role may not run {statement.removeprefix('SELECT ')}: an administrator "
                f"must run SELECT pg_switch_wal(); CHECKPOINT; after each erasure, or {grant}",
                *kept,
            ]
    return kept
