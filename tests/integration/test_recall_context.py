"""Conversation context in recall: the turns around a strong match (a real SQLite home)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock

TOKYO = ZoneInfo("Asia/Tokyo")
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=TOKYO)


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=FixedClock(T0 + timedelta(days=1)), env={}) as k:
        yield k


def _turns(k: Kioku, session: str, start: datetime, texts: list[str]) -> list[str]:
    return [
        k.remember_turn(text, at=start + timedelta(minutes=i), session_id=session)[0].id
        for i, text in enumerate(texts)
    ]


def _conversation(k: Kioku) -> list[str]:
    return _turns(
        k,
        "s1",
        T0,
        [
            "Caroline: I went to the pottery class with my sister on Sunday.",
            "Melanie: Nice! What did you make there?",
            "Caroline: A bowl with a blue glaze, it is drying in the kitchen now.",
            "Melanie: Maybe you could give it to your mum for her birthday.",
            "Caroline: Good idea, her birthday is in June.",
        ],
    )


def test_turns_around_a_strong_match_share_its_relevance(kioku: Kioku) -> None:
    ids = _conversation(kioku)
    items = {i.memory.id: i for i in kioku.recall("pottery class", mark=False, top_k=10).items}
    top = items[ids[0]]
    match = top.relevance - top.context  # what the best match lends from
    assert top.memory.id == kioku.recall("pottery class", mark=False).items[0].memory.id
    assert items[ids[1]].context == pytest.approx(0.25 * match)
    assert items[ids[2]].context >= 0.125 * match - 1e-9
    assert items[ids[2]].context < items[ids[1]].context
    for item in items.values():
        assert item.context <= item.relevance <= 1.0


def test_other_sessions_and_distant_turns_get_nothing(kioku: Kioku) -> None:
    ids = _conversation(kioku)
    other = _turns(kioku, "s2", T0 + timedelta(seconds=30), ["Caroline: What did you make?"])
    earlier = _turns(kioku, "s1", T0 - timedelta(hours=3), ["Melanie: What did you make?"])
    items = {i.memory.id: i for i in kioku.recall("pottery class", mark=False, top_k=10).items}
    assert items[ids[1]].context > 0
    for memory_id in other + earlier:
        assert memory_id not in items or items[memory_id].context == 0.0


def test_context_can_be_turned_off(kioku: Kioku) -> None:
    _conversation(kioku)
    retrieval = replace(kioku.config.retrieval, context_weight=0.0)
    kioku.config = replace(kioku.config, retrieval=retrieval)
    items = kioku.recall("pottery class", mark=False, top_k=10).items
    assert all(item.context == 0.0 for item in items)
