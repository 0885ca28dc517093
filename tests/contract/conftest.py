"""The store contract fixtures: every Store adapter runs the same suite.

``store`` is parametrised over adapters. Add an adapter by adding its name to
``ADAPTERS`` and a branch to :func:`open_store` (PostgreSQL will join as ``"postgres"``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kioku.core.model import Memory, Valence
from kioku.ports.store import Store

ADAPTERS = ["sqlite"]

TOKYO = ZoneInfo("Asia/Tokyo")
#: Timestamps are stored to the second: test times have no microseconds.
BASE_TIME = datetime(2025, 1, 15, 14, 30, 52, tzinfo=TOKYO)

MakeMemory = Callable[..., Memory]


def open_store(adapter: str, tmp_path: Path) -> Store:
    if adapter == "sqlite":
        from kioku.adapters.store.sqlite import open_sqlite_store

        return open_sqlite_store(tmp_path / "kioku" / "memories.db")
    raise ValueError(f"unknown store adapter {adapter!r}")


@pytest.fixture(params=ADAPTERS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    opened = open_store(str(request.param), tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def memory_id(n: int, created: datetime = BASE_TIME) -> str:
    """``mem_20250115_143052_0000abcd``-style ids, unique per ``n``."""
    return f"mem_{created:%Y%m%d_%H%M%S}_{n:08x}"


def build_memory(n: int, **fields: Any) -> Memory:
    """A valid memory; ``n`` picks its id and a creation time ``n`` minutes after BASE_TIME."""
    created = fields.pop("created", BASE_TIME + timedelta(minutes=n))
    values: dict[str, Any] = {
        "id": memory_id(n),
        "created": created,
        "trigger": f"trigger {n}",
        "content": f"content {n}",
        "emotional_intensity": 40,
        "emotional_valence": Valence.NEUTRAL,
        "emotional_arousal": 30,
        "category": "work",
        "decay_coefficient": 0.92,
    }
    values.update(fields)
    return Memory(**values)


@pytest.fixture
def make_memory() -> MakeMemory:
    """``make_memory(**fields)`` builds a valid memory with a fresh id each call."""
    counter = itertools.count(1)

    def make(**fields: Any) -> Memory:
        n = fields.pop("n", None)
        return build_memory(next(counter) if n is None else int(n), **fields)

    return make


def archived(memory: Memory, at: datetime | None = None) -> Memory:
    """``memory`` at level 4, archived at ``at`` (default: a day after creation)."""
    return replace(memory, current_level=4, archived_at=at or memory.created + timedelta(days=1))
