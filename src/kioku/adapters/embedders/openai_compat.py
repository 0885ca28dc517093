"""The OpenAI embeddings API, and every server that speaks it (Ollama, vLLM, TEI, LiteLLM …).

``POST {base_url}/embeddings`` with ``{"model": …, "input": [...]}`` in batches, ``Authorization:
Bearer KEY`` when a key is set, and ``dimensions`` for OpenAI's ``text-embedding-3`` models (which
can shorten their vectors). Rows are put back in input order by ``data[i].index`` and
L2-normalised; ``usage.prompt_tokens`` of each call is recorded with purpose ``embed``. Retries,
timeouts and key redaction come from the LLM analyzers' HTTP client.
"""

from __future__ import annotations

import math
import ssl
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final

import numpy as np

from kioku.adapters.analyzers.llm.base import local_now, token_count
from kioku.adapters.analyzers.llm.errors import ProviderError
from kioku.adapters.analyzers.llm.http import post_json
from kioku.core.usage import Usage
from kioku.ports.embedder import Vectors
from kioku.ports.usage import UsageSink

from ._vectors import normalize_rows

__all__ = [
    "EMBEDDING_BASE_URLS",
    "EMBEDDING_DEFAULT_MODELS",
    "OpenAICompatEmbedder",
]

#: Where each provider listens unless ``embedding.base_url`` says otherwise.
EMBEDDING_BASE_URLS: Final = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434/v1",
}
#: The model used when ``embedding.model`` is ``default``; other providers need a model name.
EMBEDDING_DEFAULT_MODELS: Final = {"openai": "text-embedding-3-small", "ollama": "nomic-embed-text"}
DEFAULT_BATCH: Final = 64
_PROBE: Final = "dimension probe"


def _takes_dimensions(provider: str, model: str) -> bool:
    return provider == "openai" and model.startswith("text-embedding-3")


class OpenAICompatEmbedder:
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

    ``dim`` is ``dimensions`` when it is sent (OpenAI ``text-embedding-3``); otherwise the server
    decides, and the first call (or a one-text probe when ``dim`` is read first) finds it out.
    """

    def __init__(
        self,
        *,
        provider: str = "openai",
        model: str,
        base_url: str = "",
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = DEFAULT_BATCH,
        timeout_seconds: float = 30.0,
        max_retries: int = 3,
        usage_sink: UsageSink | None = None,
        clock: Callable[[], datetime] = local_now,
        sleep: Callable[[float], None] = time.sleep,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        url = (base_url or EMBEDDING_BASE_URLS.get(provider, "")).rstrip("/")
        if not url:
            raise ValueError(f"provider {provider!r} needs a base_url")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._provider = provider
        self._model = model
        self._url = f"{url}/embeddings"
        self._api_key = api_key or None
        self._send_dimensions = dimensions if _takes_dimensions(provider, model) else None
        self._dim: int | None = self._send_dimensions
        self._batch_size = batch_size
        self._timeout = timeout_seconds
        self._max_retries = max_retries
        self._usage_sink = usage_sink
        self._clock = clock
        self._sleep = sleep
        self._ssl_context = ssl_context
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        suffix = f"@{self._send_dimensions}" if self._send_dimensions else ""
        return f"{self._provider}:{self._model}{suffix}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed([_PROBE])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[i : i + self._batch_size]))
            for i in range(0, len(texts), self._batch_size)
        ]
        return np.concatenate(parts, axis=0)

    def _embed_batch(self, batch: list[str]) -> Vectors:
        # Servers refuse empty strings; they get the port's zero row instead.
        sent = [i for i, text in enumerate(batch) if text.strip()]
        payload: dict[str, Any] = {"model": self._model, "input": [batch[i] for i in sent]}
        if self._send_dimensions:
            payload["dimensions"] = self._send_dimensions
        rows: list[list[float]] = []
        if sent:
            headers = {"authorization": f"Bearer {self._api_key}"} if self._api_key else {}
            try:
                _, body = post_json(
                    self._url,
                    payload,
                    headers,
                    self._timeout,
                    self._max_retries,
                    self._sleep,
                    provider=self._provider,
                    secrets=(self._api_key or "",),
                    ssl_context=self._ssl_context,
                )
            except ProviderError as exc:
                if exc.hint:
                    exc.hint = exc.hint.replace("llm.", "embedding.")
                raise
            rows = self._read(body, len(sent))
            self._record(body)
        with self._lock:
            if self._dim is None:
                self._dim = len(rows[0])
            dim = self._dim
        if any(len(row) != dim for row in rows):
            raise self._malformed(f"vectors of {len(rows[0])} numbers where {dim} were expected")
        out = np.zeros((len(batch), dim), dtype=np.float32)
        if rows:
            out[sent] = normalize_rows(np.array(rows, dtype=np.float64), dim)
        return out

    def _malformed(self, what: str) -> ProviderError:
        return ProviderError(
            self._provider,
            f"the embeddings answer from {self._url.split('?')[0]} was malformed: {what}",
            hint="check embedding.base_url and embedding.model (the server must speak the "
            "OpenAI embeddings API)",
        )

    def _read(self, body: Any, expected: int) -> list[list[float]]:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise self._malformed("no 'data' list")
        if len(data) != expected:
            raise self._malformed(f"{len(data)} vectors for {expected} texts")
        rows: list[list[float] | None] = [None] * expected
        for position, item in enumerate(data):
            if not isinstance(item, dict):
                raise self._malformed("an item of 'data' is not an object")
            index = item.get("index", position)
            vector = item.get("embedding")
            if not isinstance(index, int) or not 0 <= index < expected or rows[index] is not None:
                raise self._malformed(f"bad or repeated index {index!r}")
            if (
                not isinstance(vector, list)
                or not vector
                or not all(
                    isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                    for x in vector
                )
            ):
                raise self._malformed(f"item {index} has no list of finite numbers")
            rows[index] = [float(x) for x in vector]
        first = len(rows[0] or ())
        if any(len(r or ()) != first for r in rows):
            raise self._malformed("vectors of different lengths")
        return [r for r in rows if r is not None]

    def _record(self, body: Any) -> None:
        if self._usage_sink is None:
            return
        usage = body.get("usage") if isinstance(body, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        tokens = token_count(usage.get("prompt_tokens")) or token_count(usage.get("total_tokens"))
        self._usage_sink.record_usage(
            Usage(self._provider, self._model, "embed", tokens, 0, self._clock())
        )
