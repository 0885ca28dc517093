"""The PostgreSQL store's part for API keys (schema version 3, as SQLite's schema 10).

A mixin of :class:`.store.PostgresStore`. Rows are read and written as on SQLite (times as
ISO 8601 text with their offset; :func:`..sqlite.keys_schema.read_key` decodes them).
"""

from __future__ import annotations

import builtins
from contextlib import AbstractContextManager
from datetime import datetime

from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.sqlite.keys_schema import KEY_COLUMNS, read_key
from kioku.core.timefmt import format_ts
from kioku.errors import StoreError
from kioku.ports.store_records import ApiKey

__all__ = ["KeysPart"]


class KeysPart:
    """Store methods of API keys."""

    def _reading(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def add_key(self, key: ApiKey) -> None:
        with self._writing() as conn:
            if conn.execute("SELECT 1 FROM api_keys WHERE id = %s", (key.id,)).fetchone():
                raise StoreError(
                    f"an API key with id {key.id!r} already exists", hint="create the key again"
                )
            conn.execute(
                f"INSERT INTO api_keys ({KEY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    key.id,
                    key.name,
                    key.secret_hash,
                    key.user_id,
                    key.agent_id,
                    key.rights,
                    format_ts(key.created_at),
                    None if key.revoked_at is None else format_ts(key.revoked_at),
                    None if key.last_used_at is None else format_ts(key.last_used_at),
                ),
            )

    def keys(self, include_revoked: bool = False) -> builtins.list[ApiKey]:
        where = "" if include_revoked else " WHERE revoked_at IS NULL"
        with self._reading() as conn:
            rows = conn.execute(
                f"SELECT {KEY_COLUMNS} FROM api_keys{where} ORDER BY created_at, id"
            ).fetchall()
        return [read_key(r) for r in rows]

    def key_by_id(self, key_id: str) -> ApiKey | None:
        with self._reading() as conn:
            row = conn.execute(
                f"SELECT {KEY_COLUMNS} FROM api_keys WHERE id = %s", (key_id,)
            ).fetchone()
        return None if row is None else read_key(row)

    def revoke_key(self, key_id: str, at: datetime) -> bool:
        with self._writing() as conn:
            cursor = conn.execute(
                "UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                (format_ts(at), key_id),
            )
            return cursor.rowcount > 0

    def touch_key(self, key_id: str, at: datetime) -> None:
        with self._writing() as conn:
            conn.execute(
                "UPDATE api_keys SET last_used_at = %s WHERE id = %s", (format_ts(at), key_id)
            )

    def delete_keys(self, user_id: str) -> int:
        with self._writing() as conn:
            return conn.execute("DELETE FROM api_keys WHERE user_id = %s", (user_id,)).rowcount
