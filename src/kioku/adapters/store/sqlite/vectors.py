"""Vector search for the SQLite store: brute-force cosine over a cached float32 matrix.

For each embedding model the store keeps, in process, one normalised ``(n, dim)`` matrix of
every vector of that model, with parallel arrays of ids, scope codes and an archived mask.
A search is one matrix-vector product, a mask and ``argpartition``.

The cache is invalidated by a counter, ``vectors_version`` in the ``state`` table, which every
write that changes what vector search can see (an insert or delete of a memory with a vector,
an update of ``embedding`` or ``archived_at``) increments in its own transaction. Reading the
counter is one small query per search, and it also reveals other processes' writes.
"""

from __future__ import annotations

import logging
import math
import sqlite3
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from kioku.errors import StoreError, ValidationError

__all__ = [
    "VECTORS_VERSION",
    "ModelVectors",
    "bump_version",
    "embedding_models",
    "load",
    "read_version",
    "top_matches",
]

_log = logging.getLogger(__name__)

#: The ``state`` key of the counter that invalidates vector caches.
VECTORS_VERSION: Final = "vectors_version"
_LITTLE_F32: Final = np.dtype("<f4")

FloatMatrix = npt.NDArray[np.float32]


def read_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM state WHERE key = ?", (VECTORS_VERSION,)).fetchone()
    try:
        return 0 if row is None else int(row[0])
    except ValueError:
        return -1  # never a cached version: always reload


def bump_version(conn: sqlite3.Connection) -> None:
    """Increment the counter; call inside the transaction of the write it announces."""
    conn.execute(
        "INSERT INTO state (key, value) VALUES (?, '1') ON CONFLICT (key) DO UPDATE SET "
        "value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
        (VECTORS_VERSION,),
    )


@dataclass(frozen=True, slots=True, eq=False)
class ModelVectors:
    """Every vector of one model as of ``version``; never changed once built."""

    model: str
    version: int
    dim: int
    ids: npt.NDArray[np.object_]
    matrix: FloatMatrix  # (n, dim), rows normalised (zero rows stay zero)
    scope_codes: npt.NDArray[np.int32]
    scopes: tuple[tuple[str, str], ...]  # code -> (user_id, agent_id)
    archived: npt.NDArray[np.bool_]

    def check_query(self, query: Sequence[float]) -> npt.NDArray[np.float32] | None:
        """The normalised query, or None for a zero vector; StoreError on a wrong dimension."""
        if len(query) != self.dim:
            raise StoreError(
                f"the query vector has dimension {len(query)} but the stored vectors of "
                f"model {self.model!r} have dimension {self.dim}",
                hint=(
                    "the embedding model changed its output size: run `kioku reembed` to "
                    "recompute the stored vectors with the configured model"
                ),
            )
        try:
            vector = np.asarray(query, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValidationError("query", self.model, "a sequence of numbers") from exc
        if not np.all(np.isfinite(vector)):
            raise ValidationError("query", self.model, "a vector of finite numbers")
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            return None
        result: npt.NDArray[np.float32] = (vector / norm).astype(np.float32)
        return result

    def mask(
        self, user_id: str | None, agent_id: str | None, archived: bool | None
    ) -> npt.NDArray[np.bool_] | None:
        """A boolean row mask for the scope and archived filter (None: every row)."""
        mask: npt.NDArray[np.bool_] | None = None
        if user_id is not None or agent_id is not None:
            codes = [
                code
                for code, (user, agent) in enumerate(self.scopes)
                if (user_id is None or user == user_id) and (agent_id is None or agent == agent_id)
            ]
            if len(codes) == 1:
                mask = self.scope_codes == codes[0]
            else:
                mask = np.isin(self.scope_codes, np.asarray(codes, dtype=np.int32))
        if archived is not None:
            wanted = self.archived if archived else ~self.archived
            mask = wanted if mask is None else mask & wanted
        return mask


def load(conn: sqlite3.Connection, model: str, version: int) -> ModelVectors | None:
    """Read every vector of ``model``; None when the store holds none."""
    started = time.perf_counter()
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: much faster than sqlite3.Row for 10^5 rows
    rows = cursor.execute(
        "SELECT id, user_id, agent_id, archived_at IS NOT NULL, embedding_dim, embedding "
        "FROM memories WHERE embedding_model = ? AND embedding IS NOT NULL",
        (model,),
    ).fetchall()
    cursor.close()
    if not rows:
        return None
    ids, users, agents, flags, dims, blobs = zip(*rows, strict=True)
    counts = Counter(dims)
    dim = int(counts.most_common(1)[0][0])
    if len(counts) > 1:
        _log.warning(
            "model %r has vectors of several dimensions %s; using the %d-dimensional ones "
            "(run `kioku reembed`)",
            model,
            sorted(counts),
            dim,
        )
        keep = [i for i, d in enumerate(dims) if d == dim]
        ids, users, agents, flags, blobs = (
            tuple(column[i] for i in keep) for column in (ids, users, agents, flags, blobs)
        )
    width = dim * 4
    bad = next((i for i, blob in zip(ids, blobs, strict=True) if len(blob) != width), None)
    if bad is not None:
        raise StoreError(
            f"memory {bad!r} has an embedding whose size does not match its dimension {dim}",
            hint="run `kioku doctor`; fix the row with the sqlite3 shell or restore a backup",
        )
    matrix = np.frombuffer(b"".join(blobs), dtype=_LITTLE_F32).reshape(len(ids), dim)
    matrix = matrix.astype(np.float32)  # native byte order, writable
    norms = np.linalg.norm(matrix, axis=1)
    np.divide(matrix, norms[:, None], out=matrix, where=norms[:, None] > 0)
    scopes: dict[tuple[str, str], int] = {}
    codes = [scopes.setdefault(pair, len(scopes)) for pair in zip(users, agents, strict=True)]
    id_array = np.empty(len(ids), dtype=object)
    id_array[:] = ids
    loaded = ModelVectors(
        model=model,
        version=version,
        dim=dim,
        ids=id_array,
        matrix=matrix,
        scope_codes=np.asarray(codes, dtype=np.int32),
        scopes=tuple(scopes),
        archived=np.asarray(flags, dtype=np.bool_),
    )
    _log.debug(
        "vector cache: loaded %d vectors of %r (dim %d) in %.1f ms",
        len(ids),
        model,
        dim,
        (time.perf_counter() - started) * 1000,
    )
    return loaded


def top_matches(
    vectors: ModelVectors,
    query: Sequence[float],
    user_id: str | None,
    agent_id: str | None,
    archived: bool | None,
    limit: int,
) -> list[tuple[str, float]]:
    """``(id, cosine similarity)`` of the ``limit`` nearest rows in the filter, best first."""
    unit = vectors.check_query(query)
    if unit is None or limit <= 0:
        return []
    scores = vectors.matrix @ unit  # one pass over the matrix; masking copies only scores
    index = np.arange(scores.size)
    rows = vectors.mask(user_id, agent_id, archived)
    if rows is not None:
        index = np.flatnonzero(rows)
        scores = scores[index]
    if scores.size == 0:
        return []
    if limit < scores.size:
        best = np.argpartition(-scores, limit - 1)[:limit]
    else:
        best = np.arange(scores.size)
    # Best first; equal scores in id order so results never depend on the load order.
    order = sorted(best.tolist(), key=lambda i: (-float(scores[i]), str(vectors.ids[index[i]])))
    return [(str(vectors.ids[index[i]]), _clip(float(scores[i]))) for i in order]


def _clip(similarity: float) -> float:
    """Cosine similarity within [-1, 1] despite float32 rounding."""
    return min(1.0, max(-1.0, similarity)) if math.isfinite(similarity) else 0.0


def embedding_models(
    conn: sqlite3.Connection, where: str, params: Sequence[object]
) -> dict[str | None, int]:
    return {
        None if row[0] is None else str(row[0]): int(row[1])
        for row in conn.execute(
            f"SELECT embedding_model, COUNT(*) FROM memories{where} GROUP BY embedding_model",
            params,
        )
    }
