"""WordLlama: a 16 MB static token-embedding model (English-centric), loaded from its package.

``pip install wordllama`` carries the 256-dimensional ``l2_supercat`` weights and tokenizer inside
the package; they are loaded with ``disable_download=True``, so nothing is fetched at run time.
Its vocabulary is LLaMA-2's: Japanese falls back to bytes, so it cannot tell Japanese apart well
(see ``docs/embedders.md``). Offered as an option, not the default.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from kioku.errors import ConfigError
from kioku.ports.embedder import Vectors

from ._vectors import normalize_rows

__all__ = ["WORDLLAMA_DIMS", "WordLlamaEmbedder"]

#: Dimensions the bundled weights can be truncated to (Matryoshka training).
WORDLLAMA_DIMS: Final = (64, 128, 256)
_CONFIG: Final = "l2_supercat"


class WordLlamaEmbedder:
    """Mean-pooled WordLlama token embeddings; ``dim`` truncates the 256-d vectors."""

    def __init__(self, dim: int = 256) -> None:
        if dim not in WORDLLAMA_DIMS:
            raise ConfigError(
                "embedding.dimensions", dim, f"one of {', '.join(map(str, WORDLLAMA_DIMS))}"
            )
        self._dim = dim
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"wordllama:{_CONFIG}-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    module = importlib.import_module("wordllama")
                except ImportError:
                    raise ConfigError(
                        "embedding.provider",
                        "wordllama",
                        "an installed provider",
                        hint="pip install wordllama",
                    ) from None
                package_dir = Path(module.__file__ or ".").parent
                self._model = module.WordLlama.load(
                    config=_CONFIG,
                    cache_dir=package_dir,
                    disable_download=True,
                    dim=256,
                    trunc_dim=None if self._dim == 256 else self._dim,
                )
            return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        model = self._load()
        raw = model.embed(list(texts), norm=False, return_np=True)
        rows = normalize_rows(np.atleast_2d(raw), self._dim)
        for i, text in enumerate(texts):
            if not text.strip():
                rows[i] = 0.0
        return rows
