"""Spec 000's five relation types made by the batch on a real store, directed by the scores,
and found backwards with Store.referencing (逆方向の参照)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.lifecycle.log import Event

TZ = ZoneInfo("Asia/Tokyo")
START = datetime(2026, 4, 1, 12, 0, tzinfo=TZ)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def kioku(tmp_path: Path, clock: FixedClock) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", env={}, clock=clock) as k:
        yield k


def _add(k: Kioku, trigger: str, content: str, category: str, at: datetime, session: str) -> str:
    return k.remember(
        trigger, content, intensity=60, category=category, at=at, session_id=session
    ).id


def _types(k: Kioku, ids: list[str]) -> dict[frozenset[str], str]:
    out: dict[frozenset[str], str] = {}
    for memory_id in ids:
        for rel in k.get(memory_id).relations:
            out[frozenset((memory_id, rel.id))] = rel.type
    return out


def test_the_batch_makes_each_relation_type_where_its_rule_applies(
    kioku: Kioku, clock: FixedClock
) -> None:
    day0 = START.replace(hour=10)
    ask = _add(
        kioku,
        "Should the memory store use MongoDB?",
        "We compared MongoDB with plain JSON files for the memory store.",
        "work",
        day0,
        "s1",
    )
    follow = _add(
        kioku,
        "What about MongoDB performance for the memory store?",
        "MongoDB is fast but JSON files are simpler.",
        "work",
        day0 + timedelta(minutes=5),
        "s1",
    )
    decided = _add(
        kioku,
        "We decided to keep the memory store in JSON files",
        "Decision: JSON files, not MongoDB.",
        "decision",
        day0 + timedelta(hours=1),
        "s2",
    )
    clock.advance(timedelta(days=1))
    kioku.batch()
    day1 = day0 + timedelta(days=1)
    refer = _add(
        kioku,
        "As we discussed, the MongoDB question for the memory store",
        "We went through it again.",
        "work",
        day1,
        "s3",
    )
    overturn = _add(
        kioku,
        "We will use SQLite instead of JSON files for the memory store; no longer JSON",
        "Changed the decision.",
        "decision",
        day1 + timedelta(hours=1),
        "s4",
    )
    clock.advance(timedelta(days=1))
    kioku.batch()
    ids = [ask, follow, decided, refer, overturn]
    types = _types(kioku, ids)
    assert types[frozenset((follow, ask))] == "continues"
    assert types[frozenset((decided, ask))] == "derived_from"
    assert types[frozenset((refer, ask))] == "references"
    assert types[frozenset((overturn, decided))] == "contradicts"
    # Every link points from the higher score to the lower, or newer → older when near.
    proximity = kioku.config.relations.score_proximity_threshold
    for memory_id in ids:
        source = kioku.get(memory_id)
        for rel in source.relations:
            target = kioku.get(rel.id)
            if abs(source.retention_score - target.retention_score) < proximity:
                assert source.created >= target.created
            else:
                assert source.retention_score > target.retention_score
    # The reverse index finds who refers to a memory.
    pointing = set(kioku.store.referencing(ask))
    assert {
        m for m in (follow, decided, refer) if any(r.id == ask for r in kioku.get(m).relations)
    } <= pointing
    assert set(kioku.explain(ask).referenced_by) == pointing
    logged = kioku.lifecycle_log(events=[Event.LINK.value])
    assert {str(e.details["type"]) for e in logged} >= {
        "continues",
        "derived_from",
        "references",
        "contradicts",
    }


def test_same_topic_still_links_near_duplicates(kioku: Kioku, clock: FixedClock) -> None:
    text = "We planned the database migration: back up, migrate, verify, switch."
    a = kioku.remember(text, "steps written down", intensity=60, category="work").id
    b = kioku.remember(text, "steps written down again", intensity=60, category="work").id
    clock.advance(timedelta(days=1))
    kioku.batch()
    assert _types(kioku, [a, b]) == {frozenset((a, b)): "same_topic"}


def test_max_relations_per_memory_holds_for_typed_links(tmp_path: Path, clock: FixedClock) -> None:
    env = {"KIOKU_RELATIONS__MAX_RELATIONS_PER_MEMORY": "1"}
    with Kioku.open(tmp_path / "h", env=env, clock=clock) as k:
        at = START.replace(hour=9)
        ids = [
            _add(k, f"turn {n} about the deploy", "ok", "work", at + timedelta(minutes=n), "s")
            for n in range(4)
        ]
        clock.advance(timedelta(days=1))
        k.batch()
        for memory_id in ids:
            assert len(k.get(memory_id).relations) + len(k.store.referencing(memory_id)) <= 1


def test_recall_brings_memories_linked_either_way(kioku: Kioku, clock: FixedClock) -> None:
    # 関連記憶の想起 follows a recalled memory's relations, and 逆方向の参照 the ones to it.
    at = START.replace(hour=9)
    ids = [
        _add(kioku, "We set up the CI pipeline for the deploy", "GitHub Actions", "work", at, "s"),
        _add(
            kioku,
            "Then the deploy job failed",
            "a missing secret",
            "work",
            at.replace(minute=5),
            "s",
        ),
        _add(kioku, "And the secret was fixed", "deploy passed", "work", at.replace(minute=9), "s"),
    ]
    clock.advance(timedelta(days=1))
    kioku.batch()
    middle = kioku.get(ids[1])
    linked = {r.id for r in middle.relations} | set(kioku.store.referencing(middle.id))
    assert linked == {ids[0], ids[2]}
    result = kioku.recall("the deploy job failed: a missing secret", top_k=1, mark=False)
    assert result.items[0].memory.id == middle.id
    assert {i.memory.id for i in result.items if i.via == "relation"} == linked


def test_imported_history_is_linked_at_its_first_batch(kioku: Kioku, clock: FixedClock) -> None:
    kioku.remember("today", "a turn of today", intensity=60, category="work")
    clock.advance(timedelta(days=1))
    kioku.batch()  # the store has run batches before the import
    old = datetime(2026, 1, 19, 21, 30, tzinfo=TZ)
    # Emotional, so that three months later they are still active (not archived).
    first = _add(
        kioku, "I miss my grandmother", "We talked about her garden.", "emotional", old, "old"
    )
    second = _add(
        kioku,
        "She grew tomatoes",
        "Summers at her house.",
        "emotional",
        old + timedelta(minutes=4),
        "old",
    )
    clock.advance(timedelta(days=1))
    kioku.batch()
    assert _types(kioku, [first, second]) == {frozenset((first, second)): "continues"}
