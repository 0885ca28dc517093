"""The Kioku service on a real SQLite home (spec 000: 記憶生成, 保護記憶, 完全消去)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import (
    Kioku,
    Level,
    MemoryNotFoundError,
    ProtectedMemoryError,
    ProtectionLimitError,
    Relation,
    RelationType,
    ValidationError,
)
from kioku.adapters.clock import FixedClock

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 1, 18, 18, 0, tzinfo=TOKYO)


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        yield k


def test_remember_derives_the_spec_initial_values(kioku: Kioku) -> None:
    m = kioku.remember("t", "c", intensity=50, category="work")
    assert m.decay_coefficient == pytest.approx(0.885)
    assert m.retention_score == 50
    assert m.current_level == Level.FULL
    assert m.memory_days == pytest.approx(9 / 24)  # 18:00 → 03:00
    assert m.recall_count == 0
    assert not m.recalled_since_last_batch
    assert m.created == NOW
    assert m.id.startswith("mem_20260118_180000_")
    assert kioku.get(m.id) == m


def test_nothing_is_created_on_disk_before_valid_input(tmp_path: Path) -> None:
    home = tmp_path / "fresh"
    with Kioku.open(home, env={}) as k, pytest.raises(ValidationError) as info:
        k.remember("t", "c", intensity=150, category="work")
    assert info.value.field == "emotional_intensity"
    assert not home.exists()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"intensity": -1, "category": "work"}, "emotional_intensity"),
        ({"intensity": 30, "category": "gossip"}, "category"),
        ({"intensity": 30, "category": "work", "tags": ["joy", "bliss"]}, "emotional_tags"),
        ({"intensity": 30, "category": "work", "valence": "happy"}, "emotional_valence"),
        ({"intensity": 30, "category": "work", "arousal": 101}, "emotional_arousal"),
    ],
)
def test_bad_fields_are_refused_and_nothing_is_written(
    kioku: Kioku, kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(ValidationError) as info:
        kioku.remember("t", "c", **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
    assert kioku.count() == 0


def test_a_fully_specified_memory_is_kept_as_given(kioku: Kioku) -> None:
    first = kioku.remember("a", "b", intensity=10, category="casual")
    given = replace(
        first,
        id="mem_20250115_001",
        trigger="imported",
        memory_days=12.5,
        retention_score=33.3,
        current_level=Level.SUMMARY,
        relations=(Relation(first.id, RelationType.CONTINUES),),
    )
    stored = kioku.remember(given)
    assert kioku.get("mem_20250115_001") == stored
    assert stored.memory_days == 12.5
    assert stored.relations == (Relation(first.id, RelationType.CONTINUES),)


def test_list_filters_and_scope_isolation(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}, user_id="alice") as alice:
        a = alice.remember("alice's", "x", intensity=40, category="work")
        alice.remember("alice casual", "x", intensity=10, category="casual", protected=True)
    with Kioku.open(home, env={}, user_id="bob") as bob:
        bob.remember("bob's", "x", intensity=40, category="work")
        assert [m.trigger for m in bob.list()] == ["bob's"]
        with pytest.raises(MemoryNotFoundError):
            bob.get(a.id)
        with pytest.raises(MemoryNotFoundError):
            bob.forget(a.id)
    with Kioku.open(home, env={}, user_id="alice") as alice:
        assert {m.trigger for m in alice.list()} == {"alice's", "alice casual"}
        assert [m.trigger for m in alice.list(category="work")] == ["alice's"]
        assert [m.trigger for m in alice.list(protected=True)] == ["alice casual"]
        assert alice.list(archived=True) == []
        assert alice.stats().store.total == 2


def test_protection_cap_refuses_and_lists_the_oldest(tmp_path: Path) -> None:
    clock = FixedClock(NOW)
    env = {"KIOKU_PROTECTION__MAX_PROTECTED_MEMORIES": "3"}
    with Kioku.open(tmp_path / "h", clock=clock, env=env) as k:
        ids = []
        for i in range(3):
            ids.append(k.remember(f"p{i}", "c", intensity=60, category="emotional").id)
            k.protect(ids[-1])
            clock.advance(timedelta(hours=1))
        extra = k.remember("one more", "c", intensity=60, category="emotional")
        with pytest.raises(ProtectionLimitError) as info:
            k.protect(extra.id)
        assert info.value.limit == 3
        assert [c.id for c in info.value.candidates] == ids  # oldest first
        assert not k.get(extra.id).protected
        with pytest.raises(ProtectionLimitError):
            k.remember("protected at birth", "c", intensity=60, category="work", protected=True)
        assert k.count() == 4  # the refused one was not written
        k.unprotect(ids[0])
        assert k.protect(extra.id).protected


def test_forget_erases_the_memory_and_references_to_it(kioku: Kioku) -> None:
    low = kioku.remember("low", "c", intensity=10, category="casual")
    high = kioku.remember(
        replace(
            low,
            id="mem_20260118_180000_0000beef",
            trigger="high",
            relations=(Relation(low.id, RelationType.SAME_TOPIC),),
        )
    )
    assert kioku.store.referencing(low.id) == [high.id]
    kioku.forget(low.id)
    with pytest.raises(MemoryNotFoundError):
        kioku.get(low.id)
    assert kioku.get(high.id).relations == ()


def test_forget_a_protected_memory_needs_force(kioku: Kioku) -> None:
    m = kioku.remember("p", "c", intensity=90, category="emotional", protected=True)
    with pytest.raises(ProtectedMemoryError):
        kioku.forget(m.id)
    assert kioku.get(m.id).protected
    kioku.forget(m.id, force=True)
    assert kioku.count() == 0


def test_explain_forecasts_the_next_level(kioku: Kioku) -> None:
    work = kioku.remember("t", "c", intensity=50, category="work")
    e = kioku.explain(work)
    assert e.score_now == 50
    assert e.level == 1
    assert e.days_until_next_level == 1  # 50 × 0.885^1.375 < 50 at the next batch
    assert e.next_batch_at == datetime(2026, 1, 19, 3, 0, tzinfo=TOKYO)
    emotional = kioku.remember("t", "c", intensity=90, category="emotional")
    e2 = kioku.explain(emotional)
    # decay 0.98 + 0.019 × 0.9 = 0.9971; 90 × 0.9971^d <= 50 ⇔ d >= ln(50/90)/ln(0.9971) ≈ 202.4,
    # and the first batch leaves it at 0.375 days: 0.375 + 203 ≥ 202.4 at the 204th batch.
    assert emotional.decay_coefficient == pytest.approx(0.9971)
    assert e2.days_until_next_level == 204
    assert [m.level for m in e2.milestones] == [2, 3, 4]
    assert [m.threshold for m in e2.milestones] == [50.0, 20.0, 5.0]
    assert e2.milestones[0].days < e2.milestones[1].days < e2.milestones[2].days
    protected = kioku.protect(emotional.id)
    assert kioku.explain(protected).days_until_next_level is None


@pytest.mark.parametrize(
    "text",
    ["\x00\x00binary\x00", "\ufffd\ufffd broken utf-8", "x" * 1_048_576, "Привет мир"],
)
def test_remember_turn_keeps_any_turn(kioku: Kioku, text: str) -> None:
    memory, analysis = kioku.remember_turn(text, "")
    assert kioku.get(memory.id) == memory
    assert memory.trigger.strip()
    assert memory.content.strip()
    assert "\x00" not in memory.trigger + memory.content
    assert 0 <= analysis.intensity <= 100
