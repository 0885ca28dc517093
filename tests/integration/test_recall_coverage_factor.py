"""The coverage factor in a real recall (a real SQLite home): with conversation context on, a
memory holding the query's words itself counts more; with it off, nothing changes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.service.recall.scoring import COVERAGE_FACTOR

TOKYO = ZoneInfo("Asia/Tokyo")
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=TOKYO)
TURNS = [
    "Caroline: I went to the pottery class with my sister on Sunday.",
    "Melanie: Nice! What did you make there?",
    "Caroline: A bowl with a blue glaze, it is drying in the kitchen now.",
    "Melanie: The pottery teacher sounds lovely, is the class every Sunday?",
    "Caroline: Yes, and next week we try the wheel.",
]


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=FixedClock(T0 + timedelta(days=1)), env={}) as k:
        for i, text in enumerate(TURNS):
            k.remember_turn(text, at=T0 + timedelta(minutes=i), session_id="s1")
        yield k


def test_each_memory_is_favoured_by_its_own_coverage(kioku: Kioku) -> None:
    items = kioku.recall("pottery class Sunday", mark=False, top_k=10).items
    assert len(items) >= 3
    assert any(item.coverage > 0.5 for item in items)
    assert any(item.coverage == 0.0 for item in items)
    for item in items:
        assert item.coverage_factor == pytest.approx(1.0 + COVERAGE_FACTOR * item.coverage)
        assert item.adjusted_relevance == pytest.approx(
            item.relevance * item.recency * item.category_factor * item.coverage_factor
        )


def test_with_context_off_the_factor_is_one(kioku: Kioku) -> None:
    retrieval = replace(kioku.config.retrieval, context_weight=0.0)
    kioku.config = replace(kioku.config, retrieval=retrieval)
    items = kioku.recall("pottery class Sunday", mark=False, top_k=10).items
    assert items
    assert all(item.coverage_factor == 1.0 for item in items)
