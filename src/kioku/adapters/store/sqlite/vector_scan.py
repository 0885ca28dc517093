"""Exact top-k cosine similarity over a column-major float32 matrix.

The vectors of one model are kept transposed, as a C-contiguous ``(dim, n)`` array: row ``j``
holds component ``j`` of every vector. A full matrix-vector product reads it all (about 1.5 GB
at a million 384-dimensional vectors, so the product is bound by memory bandwidth), but a
query with few non-zero components (a short text under the offline feature-hashing embedder
has tens of its 384) needs only those rows, which are contiguous in this layout: the scan
then reads a small share of the matrix. Both ways are exact, for any embedder.

Search runs in two passes:

1. *Screening*: float32 scores of every row, by the full product or by the non-zero
   components only. The two sum in different orders, so their float32 results differ by
   rounding; :func:`error_bound` bounds how far either is from the real dot product.
2. *Deciding*: every row whose screening score is within twice that bound of the k-th best
   (found among the scores above a sampled threshold in large caches, :func:`kth_best`) is
   scored exactly: the products of two float32 numbers are exact in float64, and their sum
   is rounded once (``math.fsum``), so equal real dot products give equal scores. A float64
   pass with its own bound first rules out rows that cannot reach the top, so only about
   ``limit`` rows are summed exactly. The best ``limit`` win, equal scores in id order.

So the result is the same whichever screening ran, and never depends on the load order.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final, Protocol

import numpy as np
import numpy.typing as npt

from kioku.core.blas import threads_for
from kioku.threads import ProcessThreads, usable_cpus

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["SPARSE_SHARE", "error_bound", "exact_scores", "kth_best", "screen", "top_rows"]


class Ids(Protocol):
    """The id of each row (a list, an object array or the cache's lazily decoded column)."""

    def __getitem__(self, row: int, /) -> object: ...


FloatMatrix = npt.NDArray[np.float32]
FloatVector = npt.NDArray[np.float32]
Mask = npt.NDArray[np.bool_]

#: Screen by the non-zero components when they are at most this share of the dimension;
#: past it, gathering the rows costs more than one BLAS product over the whole matrix.
SPARSE_SHARE: Final = 1 / 3
#: Bytes of gathered rows per block of the sparse screening (stays in the CPU cache).
_BLOCK_BYTES: Final = 1 << 19
_MIN_BLOCK: Final = 1024
_FLOAT32_ROUNDOFF: Final = 2.0**-24
_FLOAT64_ROUNDOFF: Final = 2.0**-53
#: Candidates turned into float64 products at a time (bounds the working memory).
_EXACT_CHUNK: Final = 8192
#: From this many rows the k-th best screening score is looked for among the scores above a
#: threshold read off a strided sample of about _SAMPLE_ROWS of them (see kth_best), which
#: about _SAMPLE_MARGIN times as many rows as asked for reach.
_SAMPLE_FROM: Final = 1 << 17
#: A sparse screening of at least this many multiply-adds (about 5 ms of reading memory on
#: one core; a million rows of 8 non-zero components) is shared with a helper thread when
#: the process may run on two CPUs or more: two cores read the matrix in about two-thirds
#: of the time.
SPLIT_FROM: Final = 1 << 23
_SCREENS = ProcessThreads(1, "kioku-screen")
_SAMPLE_ROWS: Final = 1 << 16
_SAMPLE_MARGIN: Final = 8


def error_bound(dim: int, roundoff: float = _FLOAT32_ROUNDOFF) -> float:
    """A bound on ``|computed dot - real dot|`` for two vectors of norm at most about 1.

    Summing ``k`` products in any order (fused or not) errs by at most
    ``γ_k · Σ|x_i·q_i| ≤ γ_k · ‖x‖·‖q‖`` with ``γ_k = k·u / (1 - k·u)``. Doubling it (and
    counting two more terms) covers the rounding of the stored norms and leaves slack.
    """
    k = dim + 2
    return 2.0 * k * roundoff / (1.0 - k * roundoff)


def screen(columns: FloatMatrix, unit: FloatVector) -> FloatVector:
    """Float32 scores of every vector (a fresh array): by the query's non-zero components
    when they are few, else by one product over the whole matrix."""
    dim, n = columns.shape
    nonzero = np.flatnonzero(unit)
    if nonzero.size > SPARSE_SHARE * dim:
        with threads_for(dim * n):
            # matmul, not dot: on a matrix that is the start of a wider one (a cache with
            # room to grow, see .vector_log) dot runs several times slower; matmul does not.
            dense: FloatVector = np.matmul(unit, columns)
        return dense
    out = np.zeros(n, dtype=np.float32)
    if nonzero.size == 0:
        return out
    weights = unit[nonzero]
    block = max(_MIN_BLOCK, _BLOCK_BYTES // (4 * nonzero.size))

    def blocks(first: int, stop: int) -> None:
        for start in range(first, stop, block):
            # Gathers nonzero.size contiguous runs, then one small BLAS product in cache.
            part = columns[nonzero, start : min(start + block, stop)]
            out[start : start + part.shape[1]] = np.dot(weights, part)

    # Each block's product is small and in cache: one BLAS thread (a pool would only spin).
    with threads_for(nonzero.size * block):
        helper = _helper() if nonzero.size * n >= SPLIT_FROM else None
        if helper is None:
            blocks(0, n)
            return out
        # The same blocks, the second half on the helper thread (numpy lets go of the GIL).
        half = (n // block + 1) // 2 * block
        later = helper.submit(blocks, half, n)
        try:
            blocks(0, half)
        finally:
            later.result()
    return out


def _helper() -> ThreadPoolExecutor | None:
    """The thread that screens half of a large sparse scan (None on a single CPU)."""
    return _SCREENS.get() if usable_cpus() > 1 else None


def _products(
    columns: FloatMatrix, unit: FloatVector, rows: npt.NDArray[np.intp]
) -> npt.NDArray[np.float64]:
    """``(nonzero components, rows)`` products in float64, each exact."""
    nonzero = np.flatnonzero(unit)
    picked = columns[np.ix_(nonzero, rows)].astype(np.float64)
    picked *= unit[nonzero].astype(np.float64)[:, None]
    return picked


def _float64_scores(
    columns: FloatMatrix, unit: FloatVector, rows: npt.NDArray[np.intp]
) -> npt.NDArray[np.float64]:
    """Dot products summed in float64 (within ``error_bound(dim, 2**-53)`` of exact)."""
    out = np.empty(rows.size, dtype=np.float64)
    for start in range(0, rows.size, _EXACT_CHUNK):
        part = rows[start : start + _EXACT_CHUNK]
        out[start : start + part.size] = _products(columns, unit, part).sum(axis=0)
    return out


def exact_scores(
    columns: FloatMatrix, unit: FloatVector, rows: npt.NDArray[np.intp]
) -> list[float]:
    """The real dot products of the chosen vectors with ``unit``, each rounded once to
    float64: they do not depend on summation order, nor on which rows are scored together."""
    out: list[float] = []
    for start in range(0, rows.size, _EXACT_CHUNK):
        part = rows[start : start + _EXACT_CHUNK]
        out.extend(math.fsum(column) for column in _products(columns, unit, part).T.tolist())
    return out


def kth_best(scores: FloatVector, limit: int) -> float:
    """The ``limit``-th largest of ``scores`` (``1 <= limit <= scores.size``).

    Partitioning a million scores costs several milliseconds. Past :data:`_SAMPLE_FROM`
    scores, a strided sample gives a threshold that about :data:`_SAMPLE_MARGIN` times
    ``limit`` scores reach; when at least ``limit`` do, the answer is among them, since every
    score of the best ``limit`` is then at least the threshold. Otherwise every score is
    partitioned, as below that size. The answer is the same either way."""
    n = scores.size
    if n >= _SAMPLE_FROM:
        stride = max(1, n // _SAMPLE_ROWS)
        sample = scores[::stride]
        rank = max(_SAMPLE_MARGIN, -(-_SAMPLE_MARGIN * limit // stride))
        if rank < sample.size:
            threshold = np.partition(sample, sample.size - rank)[sample.size - rank]
            above = scores[scores >= threshold]
            if above.size >= limit:
                return float(np.partition(above, above.size - limit)[above.size - limit])
    return float(np.partition(scores, n - limit)[n - limit])


def top_rows(
    columns: FloatMatrix,
    ids: Ids,
    unit: FloatVector,
    excluded: Mask | None,
    allowed: int,
    limit: int,
) -> list[tuple[int, float]]:
    """``(row, exact score)`` of the best ``limit`` rows not ``excluded`` (``allowed`` of
    them), best first, equal scores in id order."""
    dim, n = columns.shape
    if limit <= 0 or allowed <= 0:
        return []
    if allowed <= limit:
        candidates = np.arange(n) if excluded is None else np.flatnonzero(~excluded)
    else:
        scores = screen(columns, unit)
        if excluded is not None:
            np.copyto(scores, np.float32(-np.inf), where=excluded)
        kth = kth_best(scores, limit)
        # Every row of the exact top `limit` screens within 2·bound of the k-th screening.
        candidates = np.flatnonzero(scores >= kth - 2.0 * error_bound(dim))
    if candidates.size > limit:
        rough = _float64_scores(columns, unit, candidates)
        cut = float(np.partition(rough, rough.size - limit)[rough.size - limit])
        candidates = candidates[rough >= cut - 2.0 * error_bound(dim, _FLOAT64_ROUNDOFF)]
    values = exact_scores(columns, unit, candidates)
    order = sorted(range(candidates.size), key=lambda i: (-values[i], str(ids[int(candidates[i])])))
    return [(int(candidates[i]), values[i]) for i in order[:limit]]
