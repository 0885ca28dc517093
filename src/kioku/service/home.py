"""Where a home's files live, and how its store is opened."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from kioku.config.schema import Config
from kioku.ports.store import Store

__all__ = ["DB_FILENAME", "resolve_home", "store_factory"]

DB_FILENAME = "memories.db"


def resolve_home(home: str | os.PathLike[str] | None, env: Mapping[str, str] | None = None) -> Path:
    """The home directory: the argument, else ``$KIOKU_HOME``, else ``~/.kioku``."""
    environ = os.environ if env is None else env
    if home is not None and str(home):
        return Path(home).expanduser()
    if environ.get("KIOKU_HOME"):
        return Path(environ["KIOKU_HOME"]).expanduser()
    return Path("~/.kioku").expanduser()


def store_factory(home: Path, config: Config) -> Callable[[], Store]:
    """A function that opens the store ``config`` names for ``home`` (called on first use)."""

    def open_store() -> Store:
        from kioku.adapters.store.sqlite import open_sqlite_store

        return open_sqlite_store(home / DB_FILENAME, busy_timeout_ms=config.store.busy_timeout_ms)

    return open_store
