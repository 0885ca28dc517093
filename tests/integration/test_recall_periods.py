"""Periods a query names: recall favours the memories made in them (a real SQLite home)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.service.recall.periods import WEIGHT

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2025, 10, 1, 12, 0, tzinfo=TOKYO)


def _ranked(k: Kioku, query: str) -> list[str]:
    return [item.memory.id for item in k.recall(query, mark=False, top_k=10).items]


def test_a_memory_made_in_the_named_month_comes_first(tmp_path: Path) -> None:
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        june = k.remember_turn(
            "We went camping by the lake with the kids.",
            at=datetime(2025, 6, 14, 10, 0, tzinfo=TOKYO),
            session_id="s1",
        )[0].id
        september = k.remember_turn(
            "We went camping by the lake with the kids again.",
            at=datetime(2025, 9, 20, 10, 0, tzinfo=TOKYO),
            session_id="s2",
        )[0].id
        # Without a month, the newer memory comes first (recency); naming June turns it.
        assert _ranked(k, "When did we go camping by the lake?")[:2] == [september, june]
        assert _ranked(k, "When did we go camping by the lake in June?")[:2] == [june, september]
        assert _ranked(k, "2025年6月にキャンプに行った湖は？ camping lake")[:2] == [
            june,
            september,
        ]
        items = {i.memory.id: i for i in k.recall("camping lake in June", mark=False).items}
        plain = {i.memory.id: i for i in k.recall("camping lake", mark=False).items}
        assert items[june].recency == plain[june].recency * (1 + WEIGHT)
        assert items[september].recency == plain[september].recency


def test_a_named_month_makes_no_memory_recalled(tmp_path: Path) -> None:
    """A period only orders the candidates: an off-topic prompt naming a month recalls
    nothing, although memories were made in it."""
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        k.config = replace(k.config, retrieval=replace(k.config.retrieval, min_relevance=0.1))
        k.remember_turn(
            "We went camping by the lake with the kids.",
            at=datetime(2025, 6, 14, 10, 0, tzinfo=TOKYO),
            session_id="s1",
        )
        assert k.recall("What is the tallest building in the world in June?").items == ()


def test_no_period_factor_when_time_plays_no_part(tmp_path: Path) -> None:
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        retrieval = replace(k.config.retrieval, recency_weight=0.0, temporal_recency_weight=0.0)
        k.config = replace(k.config, retrieval=retrieval)
        june = k.remember_turn(
            "We went camping by the lake with the kids.",
            at=datetime(2025, 6, 14, 10, 0, tzinfo=TOKYO),
            session_id="s1",
        )[0].id
        [item] = k.recall("camping lake in June", mark=False).items
        assert item.memory.id == june
        assert item.recency == 1.0
