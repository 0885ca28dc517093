"""Where a home's files live, and how its store is opened."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kioku.config.schema import Config
from kioku.ports.store import Store
from kioku.service.paths import DB_FILENAME, resolve_home

__all__ = ["DB_FILENAME", "resolve_home", "store_factory", "uses_server"]


def uses_server(config: Config) -> bool:
    """Whether ``config`` keeps memories on a PostgreSQL server (``store.url`` is set) rather
    than in the home's SQLite file."""
    return bool(config.store.url)


def store_factory(home: Path, config: Config) -> Callable[[], Store]:
    """A function that opens the store ``config`` names for ``home`` (called on first use):
    the PostgreSQL server of ``store.url`` when it is set, else ``home/memories.db``."""

    def open_store() -> Store:
        if uses_server(config):
            store = _open_postgres(config)
            # The home still holds the journal, locks and hook files: owner-only, as the
            # SQLite store makes it.
            home.mkdir(mode=0o700, parents=True, exist_ok=True)
            return store
        from kioku.adapters.store.sqlite import open_sqlite_store

        return open_sqlite_store(home / DB_FILENAME, busy_timeout_ms=config.store.busy_timeout_ms)

    return open_store


def _open_postgres(config: Config) -> Store:
    from kioku.config.store_url import mask_url
    from kioku.errors import ConfigError

    try:
        from kioku.adapters.store.postgres import open_postgres_schema
    except ImportError as exc:
        raise ConfigError(
            "store.url",
            mask_url(config.store.url),
            "a URL kioku can open: the postgres extra (psycopg 3) must be installed",
            hint=f"pip install 'kioku[postgres]' ({exc.name or 'psycopg'} is missing), "
            "or leave store.url empty for SQLite",
        ) from None
    return open_postgres_schema(config.store.url, config.store.schema)
