"""Shared by the reliability tests: real ``kioku`` processes, and reading a store from outside.

``KIOKU_RELIABILITY_SCALE`` (a whole number, default 1) multiplies the operations and kill
iterations, for a longer soak run (``benchmarks/reliability.py --scale N``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.cli.conftest import clean_env

__all__ = [
    "Finished",
    "Place",
    "count",
    "integrity",
    "kioku_argv",
    "level_counts",
    "rows",
    "scale",
    "source_id_counts",
    "start",
    "state_value",
]


def scale() -> int:
    """The multiplier for operations and iterations (``KIOKU_RELIABILITY_SCALE``, at least 1)."""
    raw = os.environ.get("KIOKU_RELIABILITY_SCALE", "1")
    try:
        return max(1, int(raw))
    except ValueError:
        return 1


def kioku_argv(home: Path, *args: str) -> list[str]:
    """The command line of ``kioku --home HOME ARGS`` run by this Python."""
    return [sys.executable, "-m", "kioku", "--home", str(home), *args]


@dataclass
class Finished:
    """A finished process: what it was, its exit code and its output."""

    name: str
    code: int
    out: str
    err: str


def start(argv: list[str], **env: str) -> subprocess.Popen[str]:
    """Start ``argv`` in the clean test environment (Tokyo time, no auto batch, no daemon)."""
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(**env),
    )


@dataclass(frozen=True)
class Place:
    """Where a test's store lives: the SQLite file ``memories.db`` of the home, or (with
    ``url``) the schema ``schema`` of a PostgreSQL server, with the home for the rest."""

    home: Path
    url: str = ""
    schema: str = ""

    @property
    def backend(self) -> str:
        return "postgres" if self.url else "sqlite"

    @property
    def db(self) -> Path:
        return self.home / "memories.db"

    @property
    def settings(self) -> dict[str, str]:
        """The ``KIOKU_*`` settings that point kioku at this store (none for SQLite)."""
        if not self.url:
            return {}
        return {"KIOKU_STORE_URL": self.url, "KIOKU_STORE__SCHEMA": self.schema}

    def env(self, **extra: str) -> dict[str, str]:
        """The clean test environment of a process using this store."""
        return clean_env(**self.settings, **extra)

    def at(self, home: Path, suffix: str) -> Place:
        """The same backend with another home (and, on PostgreSQL, the schema named after
        this one with ``_suffix``, dropped with it)."""
        return Place(home, self.url, f"{self.schema}_{suffix}" if self.url else "")


def rows(place: Place | Path, query: str, params: tuple[object, ...] = ()) -> list[Any]:
    """The rows of ``query`` (``?`` placeholders) on the store, from outside kioku."""
    if isinstance(place, Path):
        place = Place(place.parent)
    if place.url:
        import psycopg
        from psycopg import sql

        statement = sql.SQL(query.replace("?", "%s"))  # type: ignore[arg-type]  # fixed text
        with psycopg.connect(place.url, autocommit=True) as conn:
            conn.execute(sql.SQL("SET search_path = {}").format(sql.Identifier(place.schema)))
            return list(conn.execute(statement, params).fetchall())
    conn = sqlite3.connect(place.db, timeout=30)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        return list(conn.execute(query, params).fetchall())
    finally:
        conn.close()


def integrity(place: Place | Path) -> str:
    """SQLite: ``PRAGMA integrity_check``; PostgreSQL: the store's own check (schema version,
    dangling relations, vectors without an index); joined into one string ("ok" when sound)."""
    if isinstance(place, Path) or not place.url:
        return "; ".join(str(row[0]) for row in rows(place, "PRAGMA integrity_check"))
    from psycopg.conninfo import make_conninfo

    from kioku.adapters.store.postgres import open_postgres_store

    url = make_conninfo(place.url, options=f"-c search_path={place.schema},public")
    store = open_postgres_store(url, pool_max=1)
    try:
        report = store.check_integrity()
    finally:
        store.close()
    return "ok" if report.ok else "; ".join(report.problems) or "not ok"


def count(place: Place | Path) -> int:
    """How many memories the store holds."""
    return int(rows(place, "SELECT COUNT(*) FROM memories")[0][0])


def source_id_counts(place: Place | Path) -> Counter[str]:
    """How many stored memories (active or archived) carry each source id."""
    counts: Counter[str] = Counter()
    for (raw,) in rows(place, "SELECT source_ids FROM memories"):
        counts.update(raw if isinstance(raw, list) else json.loads(raw))
    return counts


def level_counts(place: Place | Path) -> dict[int, int]:
    """Memories per ``current_level`` (archived memories are level 4)."""
    found = rows(place, "SELECT current_level, COUNT(*) FROM memories GROUP BY current_level")
    return {int(level): int(n) for level, n in found}


def state_value(place: Place | Path, key: str) -> str | None:
    """A value of the ``state`` table, or None."""
    found = rows(place, "SELECT value FROM state WHERE key = ?", (key,))
    return None if not found else str(found[0][0])
