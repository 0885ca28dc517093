"""Recall through the service on a real SQLite home (spec 000: 参照方法, 参照優先度の計算)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku, Level, Relation, RelationType
from kioku.adapters.clock import FixedClock
from kioku.adapters.embedders.offline import HashEmbedder
from kioku.ports.store import MemoryPatch

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=TOKYO)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(NOW)


@pytest.fixture
def kioku(tmp_path: Path, clock: FixedClock) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=clock, env={}) as k:
        yield k


def _add(k: Kioku, trigger: str, content: str, **kw: object) -> str:
    fields: dict[str, object] = {"intensity": 50, "category": "work", **kw}
    return k.remember(trigger, content, **fields).id  # type: ignore[arg-type]


def test_japanese_two_character_words_are_found(kioku: Kioku) -> None:
    sushi = _add(kioku, "昨日お寿司を食べた", "駅前のお店で、とても美味しかった", category="casual")
    _add(kioku, "会議の議事録をまとめた", "来週の予定を確認した")
    result = kioku.recall("寿司", mark=False)
    assert result.items[0].memory.id == sushi


def test_english_stems_and_ranking(kioku: Kioku) -> None:
    paint = _add(kioku, "She has been painting sunsets", "Watercolours by the sea")
    _add(kioku, "Fixed the deploy script", "Docker volume permissions")
    result = kioku.recall("Does she still paint?", mark=False)
    assert result.items[0].memory.id == paint


def test_score_components_add_up(kioku: Kioku) -> None:
    _add(kioku, "We chose PostgreSQL with pgvector", "for the server mode", intensity=70)
    _add(kioku, "PostgreSQL backups", "run pg_dump nightly", intensity=30)
    for item in kioku.recall("postgresql", mark=False).items:
        assert item.adjusted_relevance == pytest.approx(
            item.relevance * item.recency * item.category_factor * item.coverage_factor
        )
        assert item.base == pytest.approx(
            item.retention * item.adjusted_relevance * item.recall_weight
        )
        assert item.final == pytest.approx(item.base + item.resonance_term)


def test_relevance_is_the_weighted_match_plus_context(kioku: Kioku) -> None:
    from datetime import timedelta

    from kioku.core.presets import effective_weights

    start = kioku.clock.now() - timedelta(hours=1)
    turns = [
        ("What did you cook for the party?", "I asked about the party menu"),
        ("A lasagne with spinach", "They answered with the dish"),
        ("Unrelated talk about trains", "Nothing about food"),
    ]
    for n, (trigger, content) in enumerate(turns):
        _add(kioku, trigger, content, session_id="s1", at=start + timedelta(minutes=n))
    from kioku.service.recall.scoring import COVERAGE_SHARE

    w = effective_weights(kioku.config.retrieval)
    items = kioku.recall("party cook", mark=False).items
    assert any(item.context > 0 for item in items)
    for item in items:
        # With conversation context on, the memory's coverage is a share of its lexical match.
        words = (1 - COVERAGE_SHARE) * item.lexical + COVERAGE_SHARE * item.coverage
        match = (w.vector * max(0.0, item.similarity) + w.lexical * words) / (w.vector + w.lexical)
        assert item.relevance == pytest.approx(min(1.0, match + item.context))


def test_stronger_memory_wins_a_tie(kioku: Kioku) -> None:
    weak = _add(kioku, "talked about the garden", "tomatoes", intensity=10)
    strong = _add(kioku, "talked about the garden", "tomatoes", intensity=90)
    ids = [i.memory.id for i in kioku.recall("garden tomatoes", mark=False).items]
    assert ids.index(strong) < ids.index(weak)


def test_recall_marks_memories_and_mark_false_does_not(kioku: Kioku) -> None:
    memory_id = _add(kioku, "The river walk with Momo", "every evening")
    kioku.recall("river walk", mark=False)
    assert not kioku.get(memory_id).recalled_since_last_batch
    kioku.recall("river walk")
    assert kioku.get(memory_id).recalled_since_last_batch


def test_archived_memory_is_found_marked_and_asked_back(kioku: Kioku, clock: FixedClock) -> None:
    memory_id = _add(kioku, "Kyoto trip planning", "temples and tea")
    kioku.store.update(
        memory_id,
        MemoryPatch(current_level=Level.ARCHIVED, archived_at=NOW - timedelta(days=3)),
    )
    result = kioku.recall("Kyoto trip")
    assert result.items[0].archived
    assert "[archived]" in result.block
    revived = kioku.get(memory_id)
    assert revived.revival_requested
    assert revived.revival_requested_at == NOW
    assert not revived.recalled_since_last_batch  # archived memories are not reinforced


def test_archive_recall_can_be_turned_off(tmp_path: Path) -> None:
    env = {"KIOKU_ARCHIVE__ENABLE_ARCHIVE_RECALL": "false"}
    with Kioku.open(tmp_path / "h", env=env) as k:
        memory_id = _add(k, "Kyoto trip planning", "temples and tea")
        k.store.update(memory_id, MemoryPatch(current_level=Level.ARCHIVED, archived_at=NOW))
        assert k.recall("Kyoto trip").items == ()


def test_session_emotion_adds_resonance(kioku: Kioku) -> None:
    angry = _add(
        kioku, "the build broke again", "furious about flaky tests",
        valence="negative", arousal=90, tags=["anger", "frustration"],
    )  # fmt: skip
    plain = _add(kioku, "the build passed", "tests are green", valence="positive", arousal=30)
    assert all(i.resonance == 0 for i in kioku.recall("build tests", mark=False).items)
    kioku.remember_turn("ふざけんな！またビルドが壊れた！", "", session_id="s1")
    items = {i.memory.id: i for i in kioku.recall("build tests", session_id="s1", mark=False).items}
    assert items[angry].resonance > items[plain].resonance


def test_temporal_reference_favours_recent_memories(kioku: Kioku, clock: FixedClock) -> None:
    old = kioku.remember("discussed the cache design", "LRU", intensity=50, category="work",
                         at=NOW - timedelta(days=200)).id  # fmt: skip
    new = kioku.remember("discussed the cache design", "LRU", intensity=50, category="work",
                         at=NOW - timedelta(days=1)).id  # fmt: skip
    plain = {i.memory.id: i.final for i in kioku.recall("cache design", mark=False).items}
    past = {
        i.memory.id: i.final for i in kioku.recall("last time, the cache design?", mark=False).items
    }
    assert past[new] / past[old] > plain[new] / plain[old] > 1


def test_related_memories_come_along(kioku: Kioku) -> None:
    detail = _add(kioku, "zebra crossing repainted", "white stripes", intensity=20)
    anchor = _add(kioku, "town meeting about roads", "council decided")
    kioku.store.update(anchor, MemoryPatch(relations=(Relation(detail, RelationType.SAME_TOPIC),)))
    result = kioku.recall("town meeting roads", mark=False, top_k=1)
    assert [(i.memory.id, i.via) for i in result.items] == [(anchor, None), (detail, "relation")]
    assert "zebra crossing" in result.block


def test_bad_queries_never_crash(kioku: Kioku) -> None:
    assert kioku.recall("", mark=False).items == ()
    assert kioku.recall("   \n", mark=False).block == ""
    _add(kioku, "an ordinary memory", "nothing special")
    for query in ("x" * 100_000, "مرحبا بالعالم", "😀😀", '"quoted" AND (NEAR OR *)', "\x00"):
        kioku.recall(query, mark=False)


def test_empty_store(kioku: Kioku) -> None:
    result = kioku.recall("anything at all", mark=False)
    assert result.items == ()
    assert result.block == ""


def test_vectors_of_another_model_are_not_compared_until_reembedded(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with Kioku.open(home, env={}, embedder=HashEmbedder(dim=64)) as k:
        memory_id = _add(k, "Momo the dog", "walks by the river")
    with Kioku.open(home, env={}, embedder=HashEmbedder(dim=128)) as k:
        assert k.store.embedding_models(k._scoped(archived=None)) == {"offline:hash-v1-64": 1}
        dense = {i.memory.id: i.similarity for i in k.recall("Momo dog river", mark=False).items}
        assert dense.get(memory_id, 0.0) == 0.0  # found lexically at most, never by a 64-d vector
        assert k.reembed() == 1
        assert k.store.embedding_models(k._scoped(archived=None)) == {"offline:hash-v1-128": 1}
        dense = {i.memory.id: i.similarity for i in k.recall("Momo dog river", mark=False).items}
        assert dense[memory_id] > 0


def test_the_fallback_does_not_inject_unrelated_memories(kioku: Kioku) -> None:
    related = _add(kioku, "Kyoto trip planning", "temples and tea", intensity=20)
    _add(kioku, "quarterly invoice numbers", "accounts payable", intensity=90)
    ids = [i.memory.id for i in kioku.recall("Kyoto", mark=False).items]
    assert ids == [related]


def test_a_changed_embedding_model_is_detected_with_the_fix(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with Kioku.open(home, env={}, embedder=HashEmbedder(dim=64)) as k:
        _add(k, "Momo the dog", "walks by the river")
    warnings: list[str] = []
    with Kioku.open(home, env={}, embedder=HashEmbedder(dim=128), on_warning=warnings.append) as k:
        k.recall("Momo", mark=False)
        k.recall("Momo", mark=False)
        assert len(warnings) == 1
        assert "offline:hash-v1-64" in warnings[0]
        assert "kioku reembed" in warnings[0]
        k.reembed()
        k.recall("Momo", mark=False)
        assert len(warnings) == 1
