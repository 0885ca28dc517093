"""The nightly batch on a real SQLite store (spec 000 圧縮処理の内容, アーカイブ層, 関連付け)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.lifecycle.log import Event
from kioku.core.model import Level
from kioku.ports.analyzer import Compressed
from kioku.ports.store import MemoryFilter, MemoryPatch
from kioku.service.lifecycle.batch import LAST_DAY_KEY, batch_lock

TZ = ZoneInfo("Asia/Tokyo")
START = datetime(2026, 4, 1, 12, 0, tzinfo=TZ)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def kioku(tmp_path: Path, clock: FixedClock) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", env={}, clock=clock) as k:
        yield k


def add(k: Kioku, intensity: int, category: str = "work", text: str = "") -> str:
    memory = k.remember(
        text or f"We planned the database migration for service {intensity}",
        "I wrote down the steps: back up, migrate, verify the row counts, then switch.",
        intensity=intensity,
        category=category,
        valence="neutral",
        arousal=40,
    )
    return memory.id


def test_batch_applies_each_day_once(kioku: Kioku, clock: FixedClock) -> None:
    mid = add(kioku, 80)
    first_days = kioku.get(mid).memory_days
    clock.advance(timedelta(days=1))
    report = kioku.batch()
    assert report.status == "done"
    assert [d.day for d in report.days] == ["2026-04-02"]
    again = kioku.batch()
    assert again.status == "up_to_date"
    assert again.days == []
    memory = kioku.get(mid)
    # Made after the previous batch: its first memory_days already counted to this batch.
    assert memory.memory_days == pytest.approx(first_days)
    assert memory.retention_score == pytest.approx(80 * memory.decay_coefficient**first_days)
    assert kioku.store.get_state(LAST_DAY_KEY) == "2026-04-02"


def test_missed_days_are_caught_up_in_order(kioku: Kioku, clock: FixedClock) -> None:
    mid = add(kioku, 90, "emotional")
    clock.advance(timedelta(days=1))
    kioku.batch()
    days_before = kioku.get(mid).memory_days
    clock.advance(timedelta(days=7))  # asleep for a week
    report = kioku.batch()
    assert [d.day for d in report.days] == [f"2026-04-{n:02d}" for n in range(3, 10)]
    assert kioku.get(mid).memory_days == pytest.approx(days_before + 7)


def test_recalled_memory_is_reinforced_and_logged(kioku: Kioku, clock: FixedClock) -> None:
    mid = add(kioku, 70)
    clock.advance(timedelta(days=3))
    kioku.batch()
    before = kioku.get(mid)
    kioku.store.mark_recalled([mid])
    clock.advance(timedelta(days=1))
    kioku.batch()
    after = kioku.get(mid)
    assert after.memory_days == pytest.approx(before.memory_days / 2)
    assert after.decay_coefficient == pytest.approx(min(0.999, before.decay_coefficient + 0.02))
    assert after.recall_count == 1
    assert not after.recalled_since_last_batch
    (entry,) = kioku.lifecycle_log(memory_id=mid, events=["reinforce"])
    assert entry.score_after == pytest.approx(after.retention_score)


def test_compression_rewrites_reembeds_and_reindexes(kioku: Kioku, clock: FixedClock) -> None:
    mid = add(kioku, 45, "casual")  # casual decays fast: below 50 at once, 20 within days
    original = kioku.get(mid)
    clock.advance(timedelta(days=1))
    kioku.batch()
    memory = kioku.get(mid)
    assert memory.current_level == Level.SUMMARY
    assert len(memory.content) < len(original.content)
    assert memory.embedding is not None
    assert memory.embedding != original.embedding
    (entry,) = kioku.lifecycle_log(memory_id=mid, events=["compress"])
    assert (entry.level_before, entry.level_after) == (1, 2)
    assert entry.details["method"] == "summary"
    word = next(w for w in memory.content.split() if len(w) > 4).strip(".,")
    hits = kioku.store.search_lexical([word.lower()], MemoryFilter(), 5)
    assert mid in [h[0] for h in hits]


def test_archive_then_revival_on_request(kioku: Kioku, clock: FixedClock) -> None:
    low = add(kioku, 8, "casual")
    for n in range(20):
        add(kioku, 95, "emotional", text=f"A day to remember number {n}")
    clock.advance(timedelta(days=1))
    kioku.batch()
    clock.advance(timedelta(days=10))
    kioku.batch()
    memory = kioku.get(low)
    assert memory.current_level == Level.ARCHIVED
    assert memory.archived_at is not None
    kioku.store.update(low, MemoryPatch(revival_requested=True, revival_requested_at=clock.now()))
    clock.advance(timedelta(days=1))
    kioku.batch()
    revived = kioku.get(low)
    assert revived.current_level == Level.TRACE
    assert revived.archived_at is None
    assert not revived.revival_requested
    assert revived.recalled_since_last_batch
    assert revived.retention_score == pytest.approx(8.0)  # level3_threshold + margin
    events = [e.event for e in kioku.lifecycle_log(memory_id=low)]
    assert Event.ARCHIVE in events
    assert events[-1] == Event.REVIVE


def test_auto_links_similar_memories_and_unlinks_archived(kioku: Kioku, clock: FixedClock) -> None:
    a = add(kioku, 90, "decision", text="We chose PostgreSQL with pgvector for the server store")
    b = add(kioku, 60, "decision", text="We chose PostgreSQL with pgvector for the server store!")
    clock.advance(timedelta(days=1))
    kioku.batch()
    memory_a, memory_b = kioku.get(a), kioku.get(b)
    linked = [r.id for r in memory_a.relations] + [r.id for r in memory_b.relations]
    assert linked in ([b], [a])
    links = kioku.lifecycle_log(events=["link"])
    assert links
    assert links[0].details["why"] == "similar"


def test_dry_run_writes_nothing(kioku: Kioku, clock: FixedClock, tmp_path: Path) -> None:
    add(kioku, 30, "casual")
    clock.advance(timedelta(days=2))
    report = kioku.batch(dry_run=True)
    assert report.status == "dry_run"
    assert report.days[0].compressed
    assert kioku.store.get_state(LAST_DAY_KEY) is None
    assert kioku.lifecycle_log() == []
    assert kioku.list()[0].current_level == Level.FULL


def test_a_second_batch_reports_already_running(kioku: Kioku, clock: FixedClock) -> None:
    add(kioku, 50)
    clock.advance(timedelta(days=1))
    assert kioku.home is not None
    with batch_lock(kioku.home / "batch.lock"):
        report = kioku.batch()
    assert report.status == "already_running"
    assert kioku.store.get_state(LAST_DAY_KEY) is None
    assert kioku.batch().status == "done"


def test_protected_memory_stays_level_one(kioku: Kioku, clock: FixedClock) -> None:
    mid = add(kioku, 10, "casual")
    kioku.protect(mid)
    clock.advance(timedelta(days=30))
    kioku.batch()
    assert kioku.get(mid).current_level == Level.FULL


def test_forget_is_logged(kioku: Kioku) -> None:
    mid = add(kioku, 50)
    kioku.forget(mid)
    (entry,) = kioku.lifecycle_log(memory_id=mid)
    assert entry.event == Event.DELETE
    assert entry.details["why"] == "forget"


def test_log_survives_in_the_file(kioku: Kioku, clock: FixedClock) -> None:
    add(kioku, 40, "casual")
    clock.advance(timedelta(days=2))
    kioku.batch()
    assert kioku.home is not None
    with sqlite3.connect(kioku.home / "memories.db") as conn:
        (n,) = conn.execute("SELECT COUNT(*) FROM lifecycle_log").fetchone()
    assert n == len(kioku.lifecycle_log())


class CountingAnalyzer:
    """A scripted provider: fixed summaries and keywords, and a count of its calls."""

    name = "scripted"

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def analyze(self, turn: object) -> object:
        raise NotImplementedError

    def summarize(self, trigger: str, content: str) -> Compressed:
        self.calls.append(("summary", trigger))
        return Compressed(f"summary of {trigger[:20]}", "a short summary")

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        self.calls.append(("keywords", trigger))
        return Compressed("alpha, beta", "gamma, delta")


def test_provider_texts_are_made_once_before_the_transaction(
    tmp_path: Path, clock: FixedClock
) -> None:
    analyzer = CountingAnalyzer()
    with Kioku.open(tmp_path / "h", env={}, clock=clock, analyzer=analyzer) as k:  # type: ignore[arg-type]
        ids = [add(k, 45, "casual", text=f"small talk {n}") for n in range(3)]
        clock.advance(timedelta(days=1))
        k.batch()
        memories = [k.get(i) for i in ids]
    assert {m.current_level for m in memories} == {Level.SUMMARY}
    assert all(m.trigger.startswith("summary of small talk") for m in memories)
    # Made before the transaction and reused inside it: one call per memory, not two.
    assert sorted(analyzer.calls) == sorted(("summary", f"small talk {n}") for n in range(3))


def test_first_batch_ages_older_memories_by_every_day_since(
    kioku: Kioku, clock: FixedClock
) -> None:
    mid = add(kioku, 80)  # 2026-04-01 12:00: 0.625 days to the 03:00 batch
    clock.advance(timedelta(days=3, hours=16))  # 2026-04-05 04:00, no batch ever ran
    kioku.batch()
    assert kioku.get(mid).memory_days == pytest.approx(3.625)


def test_a_spec_store_continues_from_its_last_compression_run(
    kioku: Kioku, clock: FixedClock
) -> None:
    mid = add(kioku, 80)
    kioku.store.set_state("last_compression_run", "2026-04-02T03:00:05+09:00")
    clock.advance(timedelta(days=3))  # 2026-04-04 12:00: days 3 and 4 are due
    report = kioku.batch()
    assert [d.day for d in report.days] == ["2026-04-03", "2026-04-04"]
    assert kioku.get(mid).memory_days == pytest.approx(0.625 + 2)
