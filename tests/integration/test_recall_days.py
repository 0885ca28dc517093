"""Days a query names, and coverage in the lexical match: recall on a real SQLite home."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.presets import effective_weights
from kioku.service.recall.periods import DAY_WEIGHT, WEIGHT
from kioku.service.recall.scoring import match_of

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2025, 12, 1, 12, 0, tzinfo=TOKYO)


def _ranked(k: Kioku, query: str) -> list[str]:
    return [item.memory.id for item in k.recall(query, mark=False, top_k=10).items]


def _open(home: Path) -> Kioku:
    """A home whose recall lets every candidate through (no relevance floor): these tests
    look at the order of the candidates."""
    k = Kioku.open(home, clock=FixedClock(NOW), env={})
    k.config = replace(k.config, retrieval=replace(k.config.retrieval, min_relevance=0.0))
    return k


def _turn(k: Kioku, text: str, at: datetime, session: str) -> str:
    return k.remember_turn(text, at=at, session_id=session)[0].id


def test_a_memory_made_on_the_named_day_comes_first(tmp_path: Path) -> None:
    with _open(tmp_path / "home") as k:
        ninth = _turn(
            k,
            "Nate baked a coconut cake for the family.",
            datetime(2025, 11, 9, 18, tzinfo=TOKYO),
            "s1",
        )
        later = _turn(
            k,
            "Nate baked a coconut cake for the family!",
            datetime(2025, 11, 20, 18, tzinfo=TOKYO),
            "s2",
        )
        # Both in November: the month alone leaves the newer first; the day turns it.
        assert _ranked(k, "What cake did Nate bake in November?")[:2] == [later, ninth]
        assert _ranked(k, "What cake did Nate bake on 9 November, 2025?")[:2] == [ninth, later]
        assert _ranked(k, "What cake did Nate bake on November 9th?")[:2] == [ninth, later]
        items = {i.memory.id: i for i in k.recall("Nate cake on 9 November", mark=False).items}
        month = {i.memory.id: i for i in k.recall("Nate cake in November", mark=False).items}
        assert items[ninth].recency == pytest.approx(month[ninth].recency * (1 + DAY_WEIGHT))
        assert items[later].recency == pytest.approx(month[later].recency)
        plain = {i.memory.id: i for i in k.recall("Nate cake", mark=False).items}
        assert month[ninth].recency == pytest.approx(plain[ninth].recency * (1 + WEIGHT))


def test_a_memory_of_the_named_day_is_a_candidate(tmp_path: Path) -> None:
    """A memory made on the named day is read as a candidate although the lexical search,
    stopping at ``candidates``, did not return it."""
    with _open(tmp_path / "home") as k:
        retrieval = replace(k.config.retrieval, candidates=1, vector_weight=0.0)
        k.config = replace(k.config, retrieval=retrieval)
        _turn(
            k,
            "Tournament tournament! The tournament was fun.",
            datetime(2025, 10, 2, tzinfo=TOKYO),
            "s1",
        )
        ninth = _turn(
            k,
            "My game tournament got pushed back, so I tried out some cooking at home tonight.",
            datetime(2025, 11, 9, 18, tzinfo=TOKYO),
            "s2",
        )
        assert ninth not in _ranked(k, "How did the tournament go?")
        assert ninth in _ranked(k, "How did the tournament go on 9 November?")


def test_a_named_day_makes_no_memory_recalled(tmp_path: Path) -> None:
    """The day's memories are candidates, not qualified: an off-topic prompt naming the day
    recalls nothing."""
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        k.config = replace(k.config, retrieval=replace(k.config.retrieval, min_relevance=0.1))
        _turn(k, "Nate baked a coconut cake.", datetime(2025, 11, 9, 18, tzinfo=TOKYO), "s1")
        assert k.recall("What is the tallest building in the world? 9 November 2025").items == ()


def test_coverage_counts_in_the_match_with_context_on(tmp_path: Path) -> None:
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        at = datetime(2025, 11, 9, 18, tzinfo=TOKYO)
        for n, text in enumerate(
            [
                "Melanie painted a sunrise over the lake.",
                "The lake was calm that morning.",
                "Melanie loves painting with her kids.",
                "We walked to the lake after lunch.",
            ]
        ):
            _turn(k, text, at.replace(minute=n), "s1")
        for context in (0.25, 0.0):
            retrieval = replace(k.config.retrieval, context_weight=context)
            k.config = replace(k.config, retrieval=retrieval)
            weights = effective_weights(retrieval)
            items = k.recall("Melanie painting lake sunrise", mark=False).items
            assert len(items) >= 3
            for i in items:
                own = i.coverage if context > 0 else None
                assert i.relevance == pytest.approx(
                    min(1.0, match_of(i.similarity, i.lexical, weights, own) + i.context)
                )
            if context > 0:
                assert any(
                    match_of(i.similarity, i.lexical, weights, i.coverage)
                    != pytest.approx(match_of(i.similarity, i.lexical, weights))
                    for i in items
                )
