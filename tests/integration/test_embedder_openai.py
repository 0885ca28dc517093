"""OpenAICompatEmbedder and create_embedder's HTTP providers against a loopback fake server."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import pytest

from kioku.adapters.analyzers.llm.errors import ProviderError, ProviderHTTPError
from kioku.adapters.embedders import create_embedder
from kioku.adapters.embedders.openai_compat import OpenAICompatEmbedder
from kioku.config.schema import EmbeddingConfig
from kioku.errors import ConfigError, KiokuError
from kioku.ports.embedder import Embedder
from tests.fakes import RecordingSink
from tests.fakes.embeddings_server import EmbedReply, FakeEmbeddingsServer, fake_vector

KEY = "sk-proj-embed-SECRET-0123456789"
NOW = datetime(2026, 1, 18, 9, 0, tzinfo=UTC)


@pytest.fixture
def server() -> Iterator[FakeEmbeddingsServer]:
    with FakeEmbeddingsServer(dim=8) as s:
        yield s


def make(server: FakeEmbeddingsServer, **kw: object) -> OpenAICompatEmbedder:
    options: dict[str, object] = {
        "provider": "openai-compatible",
        "model": "bge-small",
        "base_url": server.v1_url,
        "api_key": KEY,
        "timeout_seconds": 2.0,
        "max_retries": 1,
        "clock": lambda: NOW,
        "sleep": lambda _s: None,
    }
    options.update(kw)
    return OpenAICompatEmbedder(**options)  # type: ignore[arg-type]


def expected(texts: list[str], dim: int = 8) -> np.ndarray:  # type: ignore[type-arg]
    rows = np.array([fake_vector(t, dim) for t in texts], dtype=np.float64)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_happy_path(server: FakeEmbeddingsServer) -> None:
    sink = RecordingSink()
    embedder = make(server, usage_sink=sink)
    texts = ["hello world", "お寿司が好き", "a b c"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 8)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)  # order restored by index
    assert embedder.dim == 8
    assert embedder.model_id == "openai-compatible:bge-small"
    # After the first call: on Python 3.11 isinstance() reads ``dim``, which probes when unknown.
    assert isinstance(embedder, Embedder)

    (request,) = server.requests
    assert request.path == "/v1/embeddings"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {"model": "bge-small", "input": texts}
    (usage,) = sink.records
    assert (usage.provider, usage.model) == ("openai-compatible", "bge-small")
    assert usage.purpose == "embed"
    assert (usage.input_tokens, usage.output_tokens, usage.at) == (6, 0, NOW)


def test_batches_and_empty_texts(server: FakeEmbeddingsServer) -> None:
    sink = RecordingSink()
    texts = [f"text number {i}" for i in range(10)]
    texts[3] = "   "
    vectors = make(server, batch_size=4, usage_sink=sink).embed(texts)
    assert [len(r.body["input"]) for r in server.requests] == [3, 4, 2]  # the blank is not sent
    assert len(sink.records) == 3
    assert not vectors[3].any()
    others = [t for i, t in enumerate(texts) if i != 3]
    np.testing.assert_allclose(np.delete(vectors, 3, axis=0), expected(others), atol=1e-6)


def test_no_key_sends_no_authorization(server: FakeEmbeddingsServer) -> None:
    make(server, api_key=None).embed(["x"])
    assert "authorization" not in server.requests[0].headers


def test_dim_probe_when_read_first(server: FakeEmbeddingsServer) -> None:
    embedder = make(server)
    assert embedder.dim == 8
    assert len(server.requests) == 1
    assert embedder.embed([]).shape == (0, 8)


def test_openai_sends_dimensions(server: FakeEmbeddingsServer) -> None:
    embedder = make(server, provider="openai", model="text-embedding-3-small", dimensions=256)
    assert embedder.dim == 256  # known without a call
    assert embedder.model_id == "openai:text-embedding-3-small@256"
    assert embedder.embed(["a"]).shape == (1, 256)
    assert server.requests[0].body["dimensions"] == 256


def test_retry_after_500(server: FakeEmbeddingsServer) -> None:
    server.script(EmbedReply.raw(500, "overloaded"))
    vectors = make(server).embed(["retry me"])
    assert len(server.requests) == 2
    np.testing.assert_allclose(vectors, expected(["retry me"]), atol=1e-6)


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        {"data": "nope"},
        {"data": [{"index": 0, "embedding": []}]},
        {"data": [{"index": 0, "embedding": ["x", 1]}]},
        {"data": [{"index": 5, "embedding": [1.0, 2.0]}]},
        {"data": []},
        {"data": [{"index": 0, "embedding": [1.0, float("nan")]}]},
    ],
)
def test_malformed_answer_is_a_clear_error(server: FakeEmbeddingsServer, body: object) -> None:
    server.script(EmbedReply.raw(200, body))  # type: ignore[arg-type]
    with pytest.raises(ProviderError) as caught:
        make(server).embed(["one text"])
    assert isinstance(caught.value, KiokuError)
    assert KEY not in str(caught.value)


def test_dimension_change_between_calls_is_an_error(server: FakeEmbeddingsServer) -> None:
    embedder = make(server)
    embedder.embed(["first"])
    server.script(EmbedReply.raw(200, {"data": [{"index": 0, "embedding": [1.0, 2.0]}]}))
    with pytest.raises(ProviderError, match="8 were expected"):
        embedder.embed(["second"])


def test_key_never_in_errors(server: FakeEmbeddingsServer) -> None:
    server.script(EmbedReply.raw(401, f'{{"error": "bad key {KEY}"}}'))
    with pytest.raises(ProviderHTTPError) as caught:
        make(server).embed(["x"])
    text = f"{caught.value} {caught.value.body}"
    assert KEY not in text
    assert "embedding.api_key" in str(caught.value)


# --- create_embedder -------------------------------------------------------------------------


def test_create_openai_needs_a_key() -> None:
    with pytest.raises(ConfigError) as caught:
        create_embedder(EmbeddingConfig(provider="openai"), env={})
    assert caught.value.key == "embedding.api_key_env"
    assert "OPENAI_API_KEY" in str(caught.value)


def test_create_openai_defaults_without_network() -> None:
    embedder = create_embedder(
        EmbeddingConfig(provider="openai", dimensions=512), env={"OPENAI_API_KEY": KEY}
    )
    assert embedder.model_id == "openai:text-embedding-3-small@512"
    assert embedder.dim == 512


def test_create_named_key_variable_missing() -> None:
    config = EmbeddingConfig(provider="ollama", api_key_env="MY_EMBED_KEY")
    with pytest.raises(ConfigError) as caught:
        create_embedder(config, env={}, check_reachable=False)
    assert caught.value.key == "embedding.api_key_env"


def test_create_unknown_provider() -> None:
    with pytest.raises(ConfigError) as caught:
        create_embedder(EmbeddingConfig(provider="magic"), env={})
    assert caught.value.key == "embedding.provider"


@pytest.mark.parametrize("provider", ["tei", "vllm", "openai-compatible"])
def test_create_needs_base_url(provider: str) -> None:
    with pytest.raises(ConfigError) as caught:
        create_embedder(EmbeddingConfig(provider=provider, model="m"), env={})
    assert caught.value.key == "embedding.base_url"


def test_create_unreachable_base_url() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = EmbeddingConfig(provider="tei", model="m", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ConfigError) as caught:
        create_embedder(config, env={})
    assert caught.value.key == "embedding.base_url"


def test_create_tei_against_the_fake(server: FakeEmbeddingsServer) -> None:
    sink = RecordingSink()
    config = EmbeddingConfig(provider="tei", model="bge-m3", base_url=server.v1_url)
    embedder = create_embedder(config, env={}, usage_sink=sink)
    assert embedder.model_id == "tei:bge-m3"
    assert embedder.embed(["a", "b"]).shape == (2, 8)
    assert "dimensions" not in server.requests[0].body
    assert sink.records[0].purpose == "embed"
