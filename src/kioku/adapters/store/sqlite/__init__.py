"""The SQLite store adapter (kioku's default): one file, WAL mode, versioned migrations."""

from __future__ import annotations

from kioku.adapters.store.sqlite.store import SqliteStore, open_sqlite_store

__all__ = ["SqliteStore", "open_sqlite_store"]
