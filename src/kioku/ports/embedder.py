"""The Embedder port: text to vectors, with the model that made them.

Every vector kioku stores records ``model_id`` and ``dim``; vectors of different models are
never compared. Implementations return L2-normalised float32 rows, so a dot product is the
cosine similarity (spec 000, コサイン類似度の計算).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Embedder", "TextEmbedder", "Vectors", "text_values"]

#: A ``(n, dim)`` float32 matrix of L2-normalised rows (a zero row for text with no features).
#: A string, so that importing the port does not import numpy (a hook's process may not).
Vectors: TypeAlias = "npt.NDArray[np.float32]"


@runtime_checkable
class Embedder(Protocol):
    @property
    def model_id(self) -> str:
        """Names the model and everything that changes its vectors, e.g. ``offline:hash-v1-256``."""
        ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One normalised row per text, in order. Deterministic for a given ``model_id``."""
        ...


@runtime_checkable
class TextEmbedder(Protocol):
    """An embedder that also embeds a single text without numpy (the offline one), for
    processes that should not import it; the numbers equal ``embed([text])[0]``."""

    def embed_one(self, text: str) -> Sequence[float]: ...


def text_values(embedder: TextEmbedder, text: str) -> tuple[float, ...]:
    """:meth:`TextEmbedder.embed_one`'s numbers as a tuple, the form a memory holds its vector
    in: from the embedder's ``embed_values(text)`` when it has one (the offline embedder makes
    the tuple without a float object for every zero), else from ``embed_one``."""
    values = getattr(embedder, "embed_values", None)
    if callable(values):
        made: tuple[float, ...] = values(text)
        return made
    return tuple(embedder.embed_one(text))
