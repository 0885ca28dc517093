"""The offline embedder's caches change no number: a feature's slot is shared by every
embedder of one dimension (and never across dimensions), a word's term is remembered, and a
cache that is emptied when full is filled again with the same values.

Every vector is compared bit for bit with the definition written out the plain way in
:mod:`tests.unit.test_embedder_offline_exact`.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kioku.adapters.embedders import features as feature_module
from kioku.adapters.embedders import offline as offline_module
from kioku.adapters.embedders.features import english_terms, light_stem, normalize
from kioku.adapters.embedders.offline import HashEmbedder
from tests.unit.test_embedder_offline_exact import (
    _TEXTS,
    _reference_features,
    _reference_vector,
)

_SAMPLE = (
    "Ann: I love hiking and hiking loves me, and my dog's dogs.\nAnn: I love hiking",
    "Caroline: The LGBTQ support group was so powerful! It's been a journey.",
    "Melanie: I'm painting a sunset by the lake — paintings, painted, painter.",
    "東京で寿司を食べた。Sushi in Tokyo was great!",
    "ひらがなだけのぶん",
)


def _expected(dim: int, text: str) -> bytes:
    return _reference_vector(HashEmbedder(dim, japanese="script"), _reference_features(text))


def _reference_terms(text: str) -> list[str]:
    """english_terms as first written: a word at a time, nothing remembered."""
    out = []
    latin = text if text.isascii() else feature_module._CJK_RUN.get().sub(" ", text)
    for match in feature_module._WORD.finditer(normalize(latin)):
        word = match.group()
        if word in feature_module.EN_STOPWORDS:
            continue
        if word.endswith("'s"):
            word = word[:-2]
        out.append(light_stem.__wrapped__(word))
    return out


def test_slots_are_shared_within_a_dimension_and_never_across() -> None:
    offline_module._SLOTS_BY_DIM.clear()
    small, large, other_large = (
        HashEmbedder(64, japanese="script"),
        HashEmbedder(1024, japanese="script"),
        HashEmbedder(1024, japanese="script"),
    )
    # The same features fill the 64-dimension cache first; the 1024 ones must not read it.
    for text in _SAMPLE:
        assert small.embed_one(text).tobytes() == _expected(64, text)
    for text in _SAMPLE:
        assert large.embed_one(text).tobytes() == _expected(1024, text)
        assert other_large.embed_one(text).tobytes() == _expected(1024, text)
    assert offline_module._SLOTS_BY_DIM[64] is not offline_module._SLOTS_BY_DIM[1024]
    assert large._slots is other_large._slots  # one cache per dimension
    feature = "w:" + english_terms("hiking")[0]
    h = offline_module._hash(feature)
    assert offline_module._SLOTS_BY_DIM[64][feature][0] == h % 64
    assert offline_module._SLOTS_BY_DIM[1024][feature][0] == h % 1024


def test_a_full_slot_cache_is_emptied_and_refilled_with_the_same_slots(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    offline_module._SLOTS_BY_DIM.clear()
    monkeypatch.setattr(offline_module, "_SLOT_CACHE", 7)
    embedder = HashEmbedder(256, japanese="script")
    for _ in range(2):
        for text in _SAMPLE:
            assert embedder.embed_one(text).tobytes() == _expected(256, text)
    assert len(embedder._slots) <= 7


def test_a_full_term_cache_is_emptied_and_refilled_with_the_same_terms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    feature_module._TERMS.clear()
    monkeypatch.setattr(feature_module, "_TERMS_KEPT", 5)
    for _ in range(2):
        for text in _SAMPLE:
            assert english_terms(text) == _reference_terms(text)
    assert len(feature_module._TERMS) <= 5


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
@example("The Puppies were RUNNING! It's Ann's dog's toy; the the a a")
@example("go go go it's")
def test_remembered_terms_are_the_terms_of_the_words(text: str) -> None:
    first = english_terms(text)  # may fill the cache
    assert first == _reference_terms(text)
    assert english_terms(text) == first  # read from the cache
    assert english_terms(text, stem=True, stopwords=True) == first


@settings(max_examples=200, deadline=None)
@given(st.lists(_TEXTS, min_size=1, max_size=4), st.sampled_from([16, 97, 384, 1024]))
def test_embedders_sharing_slots_give_the_definition(texts: list[str], dim: int) -> None:
    first, second = HashEmbedder(dim, japanese="script"), HashEmbedder(dim, japanese="script")
    for text in texts:
        expected = _expected(dim, text)
        assert first.embed_one(text).tobytes() == expected
        assert second.embed_one(text).tobytes() == expected
    matrix = second.embed(texts)
    assert matrix.tobytes() == b"".join(_expected(dim, text) for text in texts)
