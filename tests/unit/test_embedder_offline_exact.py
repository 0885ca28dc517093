"""The offline embedder's vectors are the ones its definition gives, bit for bit.

The definition (module docstring of :mod:`kioku.adapters.embedders.offline`) is written out
here the plain way: features counted one at a time, each adding ``±scale * (1 + ln count)``
to its bucket in feature order. The embedder computes the same thing with fewer steps (whole
groups counted at once, ``1 + ln count`` looked up, ASCII text normalised by lower-casing);
any text must give the same float32 bytes and the same feature counts in the same order.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import unicodedata
from array import array
from collections import Counter

from hypothesis import example, given, settings
from hypothesis import strategies as st

from kioku.adapters.embedders import features as feature_module
from kioku.adapters.embedders.features import Features, english_terms, normalize
from kioku.adapters.embedders.offline import HashEmbedder

_WORDS = st.sampled_from(
    [
        "running",
        "paintings",
        "I'm",
        "it’s",
        "Caroline",
        "LGBTQ",
        "rock'n'roll",
        "x",
        "café",
        "ÉCOLE",
        "ﬁne",
        "Straße",
        "2023",
        "a",
        "the",
        "寿司",
        "昨日は雨でした",
        "ミーティング",
        "ひらがな",
        "\n",
        "!",
        "—",
        "dog's",
        "dogs",
        "DOGS",
    ]
)
_TEXTS = st.one_of(
    st.lists(_WORDS, max_size=40).map(" ".join),
    st.text(max_size=120),
)


def _reference_normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")


def _reference_features(text: str) -> Features:
    """The features counted one at a time (script runs stand in for Japanese lemmas)."""
    feats = Features()
    norm = _reference_normalize(text)
    terms = english_terms(norm)
    for term in terms:
        feats.words["w:" + term] += 1
        feats.chars.update(feature_module._word_chars(term))
    for a, b in itertools.pairwise(terms):
        feats.bigrams[f"b:{a} {b}"] += 1
    runs = () if norm.isascii() else feature_module._CJK_RUN.get().finditer(norm)
    for match in runs:
        run = match.group()
        feats.chars.update(feature_module._ja_chars(run))
        lemmas = [
            lemma
            for lemma, pos in feature_module._script_lemmas(run)
            if pos.startswith(feature_module._JA_CONTENT_POS)
            and lemma not in feature_module.JA_STOP_LEMMAS
        ]
        for lemma in lemmas:
            feats.words["jw:" + lemma] += 1
        for a, b in itertools.pairwise(lemmas):
            feats.bigrams[f"jb:{a} {b}"] += 1
    return feats


def _reference_vector(embedder: HashEmbedder, feats: Features) -> bytes:
    combined: dict[int, float] = {}
    for weight, counter in ((1.0, feats.words), (0.5, feats.bigrams), (0.7, feats.chars)):
        group: dict[int, float] = {}
        for feature, count in counter.items():
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            h = int.from_bytes(digest, "little")
            value = 0.3 if feature.startswith("h:") else 1.0
            value = -value if h >> 63 else value
            if count != 1:
                value *= 1.0 + math.log(count)
            bucket = h % embedder.dim
            group[bucket] = group.get(bucket, 0.0) + value
        norm = math.sqrt(math.fsum([v * v for v in group.values()]))
        if not norm > 1e-12:
            continue
        for bucket, v in group.items():
            combined[bucket] = combined.get(bucket, 0.0) + weight * (v / norm)
    vector = array("f", bytes(4 * embedder.dim))
    norm = math.sqrt(math.fsum([c * c for c in combined.values()]))
    if norm > 1e-12:
        for bucket, c in combined.items():
            vector[bucket] = c / norm
    return vector.tobytes()


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
@example("Ann: I love hiking and hiking loves me, and my dog's dogs.\nAnn: I love hiking")
@example("")
def test_normalize_is_nfkc_casefold(text: str) -> None:
    assert normalize(text) == _reference_normalize(text)


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
@example("Ann: I love hiking and hiking loves me, and my dog's dogs.\nAnn: I love hiking")
def test_features_are_counted_as_one_at_a_time(text: str) -> None:
    got = HashEmbedder(japanese="script").features(text)
    want = _reference_features(text)
    for group in ("words", "bigrams", "chars"):
        assert list(getattr(got, group).items()) == list(getattr(want, group).items())


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
@example("Ann: I love hiking and hiking loves me, and my dog's dogs.\nAnn: I love hiking")
@example("go " * 80)  # a count past the looked-up ones
def test_vectors_are_the_definition_bit_for_bit(text: str) -> None:
    embedder = HashEmbedder(japanese="script")
    expected = _reference_vector(embedder, _reference_features(text))
    assert embedder.embed_one(text).tobytes() == expected
    assert embedder.embed_one(text).tobytes() == expected  # features' buckets now cached
    assert Counter(embedder.features(text).words) == _reference_features(text).words
