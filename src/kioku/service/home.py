"""Where a home's files live, and how its store is opened."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kioku.config.schema import Config
from kioku.ports.store import Store
from kioku.service.paths import DB_FILENAME, resolve_home

__all__ = ["DB_FILENAME", "resolve_home", "store_factory"]


def store_factory(home: Path, config: Config) -> Callable[[], Store]:
    """A function that opens the store ``config`` names for ``home`` (called on first use)."""

    def open_store() -> Store:
        from kioku.adapters.store.sqlite import open_sqlite_store

        return open_sqlite_store(home / DB_FILENAME, busy_timeout_ms=config.store.busy_timeout_ms)

    return open_store
