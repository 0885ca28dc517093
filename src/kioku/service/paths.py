"""Where a home is and what its files are called; light enough for the hook path."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["DB_FILENAME", "resolve_home"]

DB_FILENAME = "memories.db"


def resolve_home(home: str | os.PathLike[str] | None, env: Mapping[str, str] | None = None) -> Path:
    """The home directory: the argument, else ``$KIOKU_HOME``, else ``~/.kioku``."""
    environ = os.environ if env is None else env
    if home is not None and str(home):
        return Path(home).expanduser()
    if environ.get("KIOKU_HOME"):
        return Path(environ["KIOKU_HOME"]).expanduser()
    return Path("~/.kioku").expanduser()
