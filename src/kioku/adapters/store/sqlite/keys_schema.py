"""Schema version 10: API keys of the server.

``api_keys`` holds one row per key: its public id (the ``kk_<8 hex>`` prefix of the key),
a name, the SHA-256 of the whole key, the one owner scope it grants and its rights. The key
itself is never kept. Times are ISO 8601 text with their offset.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Final

from kioku.adapters.store.sqlite.codec import local_zone
from kioku.core.timefmt import parse_ts
from kioku.errors import StoreCorruptError
from kioku.ports.store_records import ApiKey

__all__ = ["KEYS_SCHEMA", "KEY_COLUMNS", "read_key"]

KEYS_SCHEMA: Final = (
    """CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    rights TEXT NOT NULL CHECK (rights IN ('read', 'read-write')),
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    last_used_at TEXT
)""",
)

KEY_COLUMNS: Final = (
    "id, name, secret_hash, user_id, agent_id, rights, created_at, revoked_at, last_used_at"
)


def _time(text: object, key_id: str) -> datetime:
    try:
        return parse_ts(str(text), local_zone())
    except ValueError as exc:
        raise StoreCorruptError(
            f"API key {key_id!r} is unreadable ({exc})",
            hint="run `kioku doctor`; revoke the key and create a new one",
        ) from exc


def _optional_time(text: object, key_id: str) -> datetime | None:
    return None if text is None else _time(text, key_id)


def read_key(r: Sequence[object]) -> ApiKey:
    key_id = str(r[0])
    return ApiKey(
        id=key_id,
        name=str(r[1]),
        secret_hash=str(r[2]),
        user_id=str(r[3]),
        agent_id=str(r[4]),
        rights=str(r[5]),
        created_at=_time(r[6], key_id),
        revoked_at=_optional_time(r[7], key_id),
        last_used_at=_optional_time(r[8], key_id),
    )
