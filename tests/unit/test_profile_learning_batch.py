"""Profiles learned by the turns of one ``store_turns`` call, and the capability checks of the
analyzer and embedder decided once per type.

``store_turns`` lists the profiles once for a run of turns and again only after a turn writes
one; a turn must still see what the turns before it in the same call taught (a profile made,
a mention counted), exactly as when the turns are stored one at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.adapters.analyzers.offline.tokenize_en import Word, tokenize_en
from kioku.adapters.clock import FixedClock
from kioku.adapters.embedders.offline import HashEmbedder
from kioku.core.kinds import ProfileDetails
from kioku.core.profiles import ProfileClaim
from kioku.service.kinds import profiles as profile_service
from kioku.service.remember.storing import PreparedTurn
from kioku.service.vectors import _embeds_one, embed_memory

_NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
_START = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Kioku, Kioku]]:
    one = Kioku.open(tmp_path / "one", user_id="ann", clock=FixedClock(_NOW), env={})
    many = Kioku.open(tmp_path / "many", user_id="ann", clock=FixedClock(_NOW), env={})
    yield one, many
    one.close()
    many.close()


def _prepared(kioku: Kioku, texts: Sequence[str]) -> list[PreparedTurn]:
    return [
        kioku.prepare_turn(
            text,
            "",
            at=_START + timedelta(minutes=n),
            session_id="s1",
            source_ids=[f"t{n}"],
            source_timestamps=[_START + timedelta(minutes=n)],
        )
        for n, text in enumerate(texts)
    ]


def _details(kioku: Kioku) -> dict[str, ProfileDetails]:
    found = {}
    for memory in kioku.profiles():
        assert isinstance(memory.details, ProfileDetails)
        found[memory.details.person] = memory.details
    return found


def test_a_profile_made_by_one_turn_is_the_one_the_next_turn_adds_to(
    pair: tuple[Kioku, Kioku],
) -> None:
    one, many = pair
    texts = ["I love hiking in the mountains.", "I work as a nurse.", "I hate cold coffee."]
    turns = _prepared(one, texts)
    assert all(turn.claims for turn in turns), "each turn says something about Ann"
    for turn in turns:
        one.store_turn(turn)
    many.store_turns(turns)

    assert len(many.profiles()) == 1, "the later turns add to the profile the first one made"
    learned = _details(many)["ann"]
    assert len(learned.preferences) == 2
    assert [fact.key for fact in learned.facts] == ["occupation"]
    assert _details(many) == _details(one)


def test_mentions_are_counted_turn_after_turn(pair: tuple[Kioku, Kioku]) -> None:
    one, many = pair
    for kioku in pair:
        kioku.edit_profile("Bob", likes=["chess"])
        kioku.edit_profile("Carol", likes=["tennis"], aliases=["Caz"])
    texts = [
        "Bob came over for dinner.",
        "I love baking bread.",  # Ann's own profile is made between the mentions
        "Bob and Caz went fishing.",
        "Bob called again.",
    ]
    turns = _prepared(one, texts)
    for turn in turns:
        one.store_turn(turn)
    many.store_turns(turns)

    learned = _details(many)
    assert dict(learned["Bob"].mentions) == {"ann": 3}
    assert dict(learned["Carol"].mentions) == {"ann": 1}
    assert "ann" in learned
    assert learned == _details(one)


def test_profiles_written_by_hand_between_calls_are_seen(pair: tuple[Kioku, Kioku]) -> None:
    _, many = pair
    many.store_turns(_prepared(many, ["Dave is late again."]))
    assert "Dave" not in _details(many)
    many.edit_profile("Dave", likes=["jazz"])
    turns = _prepared(many, ["Dave is late again, twice.", "Dave phoned."])
    many.store_turns(turns)
    assert dict(_details(many)["Dave"].mentions) == {"ann": 2}


class _Reader:
    """An analyzer's profile reading: every text says the speaker likes tea."""

    def extract_profile(self, text: str, speaker: str | None) -> list[ProfileClaim]:
        return profile_service.extract_profile_claims("I like tea.", speaker=speaker)


class _NoReader:
    name = "no-reader"


def test_the_profile_capability_is_decided_per_type() -> None:
    for _ in range(2):  # the second time from what was decided the first
        assert profile_service._extracts_profiles(_Reader())
        assert not profile_service._extracts_profiles(_NoReader())
        assert not profile_service._extracts_profiles(object())


class _MatrixOnly:
    """An embedder with ``embed`` only (no ``embed_one``): the offline one's matrices."""

    def __init__(self) -> None:
        self._inner = HashEmbedder(64, japanese="script")

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> object:
        return self._inner.embed(texts)


class _Engine:
    def __init__(self, embedder: object) -> None:
        self.embedder = embedder


def test_the_vector_of_a_memory_is_the_same_by_either_capability(
    pair: tuple[Kioku, Kioku],
) -> None:
    offline = HashEmbedder(64, japanese="script")
    assert _embeds_one(offline)
    assert not _embeds_one(_MatrixOnly())
    memory = replace(_prepared(pair[0], ["A walk in the rain."])[0].memory, embedding=None)
    for _ in range(2):
        by_one = embed_memory(_Engine(offline), memory)  # type: ignore[arg-type]
        by_matrix = embed_memory(_Engine(_MatrixOnly()), memory)  # type: ignore[arg-type]
        assert by_one.embedding is not None
        assert by_matrix.embedding is not None
        assert by_one.embedding == by_matrix.embedding
        assert any(by_one.embedding.vector)


def test_words_compare_and_hash_by_their_fields() -> None:
    first, again = tokenize_en("Rex barked, Rex ran."), tokenize_en("Rex barked, Rex ran.")
    assert first == again
    assert [hash(w) for w in first] == [hash(w) for w in again]
    assert first[0] != first[3], "the same word at another place"
    assert first[0] == Word("Rex", "rex", 0)
    assert len({*first, *again}) == len(first)


def test_a_turn_that_names_the_speaker_by_another_name_keeps_both_changes(
    pair: tuple[Kioku, Kioku],
) -> None:
    """The speaker's own profile found by an alias is also a person the turn names: the
    mention written first and the claims after it both stay."""
    one, many = pair
    for kioku in pair:
        kioku.edit_profile("Annie", likes=["tea"], aliases=["ann"])
    turns = _prepared(one, ["Annie here: I love baking bread.", "I work as a nurse."])
    for turn in turns:
        one.store_turn(turn)
    many.store_turns(turns)

    learned = _details(many)
    assert list(learned) == ["Annie"]
    assert dict(learned["Annie"].mentions) == {"ann": 1}
    assert len(learned["Annie"].preferences) == 2
    assert [fact.key for fact in learned["Annie"].facts] == ["occupation"]
    assert learned == _details(one)
