"""What the PostgreSQL vector index tests share: a home whose store is a schema of its own,
opened with ``[store]`` settings, matrices stored as memories of one model, and the exact
nearest neighbours numpy finds."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kioku import Kioku
from kioku.core.model import Embedding
from tests.contract.conftest import build_memory


def open_with(env: dict[str, str], home: Path, **settings: str) -> Kioku:
    """``Kioku.open(home)`` with ``env`` and ``[store]`` ``settings`` (``hnsw_m="8"``...)."""
    extra = {f"KIOKU_STORE__{k.upper()}": v for k, v in settings.items()}
    return Kioku.open(home, env={**env, **extra})


def store_rows(kioku: Kioku, model: str, matrix: np.ndarray, first: int = 0) -> list[str]:
    """Each row of ``matrix`` as the vector of a memory of ``model`` (ids from ``first``)."""
    memories = [
        build_memory(first + n, embedding=Embedding(model, tuple(float(v) for v in row)))
        for n, row in enumerate(matrix)
    ]
    kioku.store.add_many(memories)
    return [memory.id for memory in memories]


def exact_ids(matrix: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[str]:
    """The ``k`` rows nearest ``query`` by cosine in float64, ties by id."""
    m = matrix.astype(np.float64)
    q = query.astype(np.float64)
    sims = (m @ q) / (np.linalg.norm(m, axis=1) * np.linalg.norm(q))
    return [ids[n] for n in sorted(range(len(ids)), key=lambda n: (-sims[n], ids[n]))[:k]]
