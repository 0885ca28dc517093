"""Where a home's files live, and how its store is opened."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from kioku.config.schema import Config
from kioku.ports.store import Store
from kioku.service.paths import DB_FILENAME, resolve_home

__all__ = [
    "DB_FILENAME",
    "describe_store",
    "resolve_home",
    "store_exists",
    "store_factory",
    "uses_server",
]


def uses_server(config: Config) -> bool:
    """Whether ``config`` keeps memories on a PostgreSQL server (``store.url`` is set) rather
    than in the home's SQLite file."""
    return bool(config.store.url)


def store_exists(
    home: Path, config_path: Path | None = None, env: Mapping[str, str] | None = None
) -> bool:
    """Whether ``home`` has a store to use: its ``memories.db``, or else a PostgreSQL server
    that its configuration (``config_path`` or ``home/config.toml``, with ``KIOKU_*``
    overrides from ``env``) names in ``store.url``. A server's schema is created when the
    store is first opened, as ``memories.db`` is; the server is not contacted here.

    The file is looked for first, so a home on SQLite never reads its configuration here.
    An invalid configuration raises its ConfigError."""
    if (home / DB_FILENAME).is_file():
        return True
    from kioku.config import load_config

    environ = os.environ if env is None else env
    loaded = load_config(home=home, path=config_path, env=environ)
    return uses_server(loaded.config)


def describe_store(home: Path, config: Config) -> str:
    """Where ``config`` keeps the memories of ``home``, fit to print: the server's URL with
    its password masked and the schema, or the SQLite file."""
    if uses_server(config):
        from kioku.config.store_url import mask_url

        where = f"{mask_url(config.store.url)} (PostgreSQL, schema {config.store.schema})"
        if config.store.read_url:
            where += f", searches on the replica {mask_url(config.store.read_url)}"
        return where
    return str(home / DB_FILENAME)


def store_factory(home: Path, config: Config, owner: str | None = None) -> Callable[[], Store]:
    """A function that opens the store ``config`` names for ``home`` (called on first use):
    the PostgreSQL server of ``store.url`` when it is set, else ``home/memories.db``.

    ``owner``: a store for that user only. On PostgreSQL with ``store.row_security`` on,
    the server itself then shows and accepts that user's rows only; elsewhere it changes
    nothing (the service scopes every call to its owner in any case)."""

    def open_store() -> Store:
        if uses_server(config):
            store = _open_postgres(config, owner)
            # The home still holds the journal, locks and hook files: owner-only, as the
            # SQLite store makes it.
            home.mkdir(mode=0o700, parents=True, exist_ok=True)
            return store
        from kioku.adapters.store.sqlite import open_sqlite_store

        return open_sqlite_store(
            home / DB_FILENAME,
            busy_timeout_ms=config.store.busy_timeout_ms,
            ann_min_vectors=config.retrieval.ann_min_vectors,
        )

    return open_store


def _open_postgres(config: Config, owner: str | None) -> Store:
    from kioku.config.store_url import mask_url
    from kioku.errors import ConfigError

    try:
        from kioku.adapters.store.postgres import open_postgres_schema
        from kioku.adapters.store.postgres.vectors import HnswSettings
    except ImportError as exc:
        raise ConfigError(
            "store.url",
            mask_url(config.store.url),
            "a URL kioku can open: the postgres extra (psycopg 3) must be installed",
            hint=f"pip install 'kioku[postgres]' ({exc.name or 'psycopg'} is missing), "
            "or leave store.url empty for SQLite",
        ) from None
    return open_postgres_schema(
        config.store.url,
        config.store.schema,
        owner=owner,
        row_security=config.store.row_security,
        read_url=config.store.read_url or None,
        hnsw=HnswSettings(
            config.store.hnsw_m,
            config.store.hnsw_ef_construction,
            config.store.hnsw_ef_search,
            config.store.hnsw_type,
        ),
    )
