"""Editing a memory by hand, on a real SQLite home: checked, versioned, re-indexed, scoped."""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.errors import MemoryNotFoundError, ValidationError

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=ZoneInfo("Asia/Tokyo"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def kioku(home: Path) -> Iterator[Kioku]:
    with Kioku.open(home, clock=FixedClock(NOW), env={}) as k:
        yield k


def _episode(k: Kioku) -> str:
    return k.remember(
        "we planned the lighthouse trip",
        "the ferry leaves from the harbour at dawn",
        intensity=40,
        category="casual",
    ).id


def _found(k: Kioku, query: str) -> list[str]:
    """The ids whose current text holds the query's words (not a vector's guess)."""
    return [item.memory.id for item in k.search_memory(query).items if "text" in item.matched_in]


def test_edit_changes_only_the_given_fields(kioku: Kioku) -> None:
    memory_id = _episode(kioku)
    before = kioku.get(memory_id)
    edited = kioku.edit_memory(memory_id, content="the ferry leaves from the pier at noon")
    assert edited.content == "the ferry leaves from the pier at noon"
    assert edited.trigger == before.trigger
    assert edited.category == before.category
    assert edited.emotional_intensity == before.emotional_intensity
    assert edited.created == before.created
    assert kioku.get(memory_id).content == edited.content


def test_edit_reindexes_the_words_and_the_vector(kioku: Kioku) -> None:
    memory_id = _episode(kioku)
    old_vector = kioku.get(memory_id).embedding
    assert memory_id in _found(kioku, "harbour")
    kioku.edit_memory(
        memory_id, trigger="zeppelin rehearsal", content="quokka marmalade festival", keywords=["x"]
    )
    assert memory_id in _found(kioku, "quokka marmalade")
    assert memory_id not in _found(kioku, "harbour dawn")
    new_vector = kioku.get(memory_id).embedding
    assert new_vector is not None
    assert old_vector is not None
    assert new_vector.vector != old_vector.vector


def test_an_unrankable_stored_vector_is_made_again_by_an_edit(home: Path, kioku: Kioku) -> None:
    """A vector written before stores refused vectors too long to rank (here 1e20 a value)
    does not block an edit of its memory: the edit embeds the text again."""
    memory_id = _episode(kioku)
    good = kioku.get(memory_id).embedding
    assert good is not None
    with sqlite3.connect(home / "memories.db") as conn:
        conn.execute(
            "UPDATE memories SET embedding = ? WHERE id = ?",
            (struct.pack(f"<{len(good.vector)}f", *([1e20] * len(good.vector))), memory_id),
        )
    conn.close()
    with Kioku.open(home, clock=FixedClock(NOW), env={}) as fresh:
        stored = fresh.get(memory_id).embedding
        assert stored is not None
        assert stored.vector[0] == pytest.approx(1e20, rel=1e-6)
        edited = fresh.edit_memory(memory_id, intensity=55)
        assert edited.emotional_intensity == 55
        assert edited.embedding == good  # the same text, the same vector as first made


def test_edit_keeps_the_old_state_as_a_version(kioku: Kioku) -> None:
    memory_id = _episode(kioku)
    kioku.edit_memory(memory_id, content="first correction")
    kioku.edit_memory(memory_id, content="second correction")
    versions = kioku.versions(memory_id)
    assert [v.content for v in versions] == [
        "the ferry leaves from the harbour at dawn",
        "first correction",
    ]
    texts = [v["text"] for v in kioku.history(memory_id)["versions"]]
    assert texts == ["the ferry leaves from the harbour at dawn", "first correction"]


def test_edit_of_emotion_category_and_words(kioku: Kioku) -> None:
    memory_id = _episode(kioku)
    edited = kioku.edit_memory(
        memory_id,
        category="work",
        intensity=90,
        tags=["Joy", "joy", "hope"],
        keywords=[" ferry ", "ferry", "pier"],
    )
    assert edited.category == "work"
    assert edited.emotional_intensity == 90
    assert edited.emotional_tags == ("joy", "hope")
    assert edited.keywords == ("ferry", "pier")


def test_edit_is_logged_as_a_memory_write(kioku: Kioku) -> None:
    memory_id = _episode(kioku)
    kioku.edit_memory(memory_id, intensity=70)
    events = [e for _, e in kioku.activity(types=["memory_write"]) if e is not None]
    assert any(memory_id in e.memory_ids and "edited" in e.summary for e in events)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({}, "change"),
        ({"content": "   "}, "content"),
        ({"trigger": ""}, "trigger"),
        ({"content": "a\x00b"}, "content"),
        ({"category": "no-such-category"}, "category"),
        ({"intensity": 101}, "emotional_intensity"),
        ({"intensity": True}, "emotional_intensity"),
        ({"tags": ["not-a-tag"]}, "emotional_tags"),
        ({"keywords": "one string"}, "keywords"),
    ],
)
def test_invalid_edits_change_nothing(kioku: Kioku, change: dict[str, object], field: str) -> None:
    memory_id = _episode(kioku)
    before = kioku.get(memory_id)
    with pytest.raises(ValidationError) as caught:
        kioku.edit_memory(memory_id, **change)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert kioku.get(memory_id) == before
    assert kioku.versions(memory_id) == []


def test_an_unchanged_edit_writes_nothing(kioku: Kioku) -> None:
    memory_id = _episode(kioku)
    before = kioku.get(memory_id)
    same = kioku.edit_memory(memory_id, category=before.category, content=before.content)
    assert same == before
    assert kioku.versions(memory_id) == []


def test_edit_is_scoped_to_the_owner(home: Path, kioku: Kioku) -> None:
    memory_id = _episode(kioku)
    with (
        Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="mallory") as other,
        pytest.raises(MemoryNotFoundError),
    ):
        other.edit_memory(memory_id, content="overwritten")
    assert kioku.get(memory_id).content == "the ferry leaves from the harbour at dawn"


def test_profiles_are_not_edited_here(kioku: Kioku) -> None:
    profile = kioku.edit_profile("Hana", likes=["tea"])
    with pytest.raises(ValidationError):
        kioku.edit_memory(profile.id, content="something else")


def test_edit_of_knowledge_is_stored_in_the_file(home: Path, kioku: Kioku) -> None:
    item = kioku.write_memory("knowledge", "The office moved to Osaka.", title="office")
    kioku.edit_memory(item.id, content="The office moved to Kobe.")
    kioku.close()
    with sqlite3.connect(home / "memories.db") as conn:
        row = conn.execute("SELECT content FROM memories WHERE id = ?", (item.id,)).fetchone()
        saved = conn.execute(
            "SELECT content FROM memory_versions WHERE memory_id = ?", (item.id,)
        ).fetchall()
    assert row == ("The office moved to Kobe.",)
    assert saved == [("The office moved to Osaka.",)]
