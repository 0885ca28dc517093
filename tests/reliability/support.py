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

from tests.cli.conftest import clean_env

__all__ = [
    "Finished",
    "integrity",
    "kioku_argv",
    "level_counts",
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


def _connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, timeout=30)
    conn.execute("PRAGMA busy_timeout = 30000")
    return conn


def integrity(db: Path) -> str:
    """``PRAGMA integrity_check`` of the database, joined into one string ("ok" when sound)."""
    conn = _connect(db)
    try:
        rows = conn.execute("PRAGMA integrity_check").fetchall()
    finally:
        conn.close()
    return "; ".join(str(row[0]) for row in rows)


def source_id_counts(db: Path) -> Counter[str]:
    """How many stored memories (active or archived) carry each source id."""
    conn = _connect(db)
    try:
        rows = conn.execute("SELECT source_ids FROM memories").fetchall()
    finally:
        conn.close()
    counts: Counter[str] = Counter()
    for (raw,) in rows:
        counts.update(json.loads(raw))
    return counts


def level_counts(db: Path) -> dict[int, int]:
    """Memories per ``current_level`` (archived memories are level 4)."""
    conn = _connect(db)
    try:
        rows = conn.execute(
            "SELECT current_level, COUNT(*) FROM memories GROUP BY current_level"
        ).fetchall()
    finally:
        conn.close()
    return {int(level): int(n) for level, n in rows}


def state_value(db: Path, key: str) -> str | None:
    """A value of the ``state`` table, or None."""
    conn = _connect(db)
    try:
        row = conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
    finally:
        conn.close()
    return None if row is None else str(row[0])
