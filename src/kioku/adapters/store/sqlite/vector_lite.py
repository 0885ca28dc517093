"""Exact vector search over a cache file with the standard library alone.

A Claude Code hook answers each prompt in a fresh process, and importing numpy costs it about
as much as everything else together. When the query has few non-zero components (a short
text under the offline feature-hashing embedder has a few dozen of its 384) and the store is
not huge, this module answers from the file of :mod:`.vector_file` without numpy, with exactly
the result of :func:`.vector_scan.top_rows`:

1. *Screening* uses the file's quantised matrix (a byte per component, ``level - 128`` steps of
   its row's ``scale``). Python's integers do the arithmetic for every row at once: each row of
   levels the query needs is spread into 24-bit lanes of one big integer, multiplied by the
   query component (scaled to an integer) and summed, so the per-row work happens inside
   CPython's bignum routines, not in a Python loop. Positive and negative weights are summed
   apart and combined with an offset, which keeps every lane within 1 .. 2**24 - 1: no carry
   or borrow ever crosses into a neighbour. Rows the filter leaves out are masked to 0.
2. *Deciding*: the screening is within a bound ``E`` of the real dot product (half a step per
   component times the query's weight, plus the rounding of the weights), so every row of the
   exact top ``limit`` screens within ``2E`` of the ``limit``-th best screening. Those rows are
   scored exactly as :mod:`.vector_scan` does it (float64 products of float32 numbers are
   exact, and ``math.fsum`` rounds their sum once), and ranked by score, then id.

:func:`search` returns None whenever it cannot answer that way (no file, a stale or foreign
one, a dense query, too many rows or scopes, a big-endian machine, any damage): the caller then
takes the numpy path, which gives the same answer.
"""

from __future__ import annotations

import heapq
import itertools
import math
import mmap
import os
import sys
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from kioku.adapters.store.sqlite.vector_layout import LEVEL_SPAN, Layout
from kioku.logs import LazyLogger

__all__ = ["MAX_NONZERO_SHARE", "MAX_WORK", "clip_similarity", "search", "unit_query"]

_log = LazyLogger(__name__)

#: Answer only queries with at most this share of non-zero components (as vector_scan's
#: sparse screening); a dense query reads every row, which numpy does far faster.
MAX_NONZERO_SHARE: Final = 1 / 3
#: Answer only when (non-zero components) x (rows) is at most this: past it, importing numpy
#: and screening with it is the quicker way.
MAX_WORK: Final = 12_000_000
#: The query's weights are scaled to integers whose absolute values sum to at most this, so
#: that 255 times the sum, plus one, still fits a lane (their rounding then adds under a tenth
#: to the error bound, which the quantised levels dominate).
_WEIGHT_TOTAL: Final = 1 << 16
#: Bytes per lane.
_LANE: Final = 3
_MAX_SCOPES: Final = 256
#: Relative slack on the error bound for the float64 rounding in computing it.
_SLACK: Final = 1e-9


def search(
    path: Path | None,
    model: str,
    version: int,
    query: Sequence[float],
    user_id: str | None,
    agent_id: str | None,
    archived: bool | None,
    limit: int,
) -> list[tuple[str, float]] | None:
    """``(id, cosine similarity)`` of the ``limit`` nearest rows in the filter, best first,
    from the cache file at ``path`` as of ``version``; None when this path cannot answer."""
    if path is None or version <= 0 or limit <= 0 or sys.byteorder != "little":
        return None
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            if size == 0:
                return None
            mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError:
        return None
    view = memoryview(mapped)
    try:
        return _search(view, model, version, query, (user_id, agent_id, archived), limit)
    except Exception as exc:  # damage or anything unexpected: the numpy path decides
        _log.debug("lite vector search: not used for %s (%s: %s)", path, type(exc).__name__, exc)
        return None
    finally:
        view.release()
        mapped.close()


def _search(
    view: memoryview,
    model: str,
    version: int,
    query: Sequence[float],
    flt: tuple[str | None, str | None, bool | None],
    limit: int,
) -> list[tuple[str, float]] | None:
    layout = Layout.of(view)
    header = layout.header
    if (
        header.get("version") != version
        or header.get("model") != model
        or header.get("byteorder") != sys.byteorder
        or header.get("quantised") is not True
    ):
        return None
    dim, n = layout.dim, layout.n
    unit = unit_query(query, dim)
    if unit is None:
        return None
    terms = [(j, value) for j, value in enumerate(unit) if value != 0.0]
    if not terms:
        return []  # a zero query: nothing is similar (as vector_scan answers)
    if len(terms) > MAX_NONZERO_SHARE * dim or len(terms) * n > MAX_WORK:
        return None
    scopes = header["scopes"]
    if not isinstance(scopes, list) or len(scopes) > _MAX_SCOPES:
        return None
    at = layout.at
    keep = _keep(view, at, n, scopes, flt)
    kept = n if keep is None else keep.count(0xFF)
    if kept == 0:
        return []
    columns = view[at["columns"] : at["scales"]].cast("f")
    if kept <= limit:
        rows = list(range(n)) if keep is None else list(itertools.compress(range(n), keep))
    else:
        scales = view[at["scales"] : at["scope_codes"]].cast("f")
        levels = view[at["levels"] : at["ids"]]
        rows = _screen(levels, scales, terms, n, keep, limit)
    stride = layout.capacity  # each row of the matrix has room for more vectors
    scored = [
        (math.fsum([value * columns[j * stride + row] for j, value in terms]), row) for row in rows
    ]
    ends = view[at["id_ends"] : at["archived"]].cast("I")
    ids = view[at["ids"] : at["end"]]

    def id_of(row: int) -> str:
        start = ends[row - 1] + 1 if row else 0
        return bytes(ids[start : ends[row]]).decode("utf-8")

    named = [(score, id_of(row)) for score, row in scored]
    named.sort(key=lambda pair: (-pair[0], pair[1]))
    return [(memory_id, clip_similarity(score)) for score, memory_id in named[:limit]]


def unit_query(query: Sequence[float], dim: int) -> array[float] | None:
    """The query divided by its exactly rounded norm (``math.fsum``) and rounded to float32, or
    None when it is not a finite vector of ``dim`` numbers. Both search paths normalise with
    it (:meth:`ModelVectors.check_query` raises where this returns None), so they score the
    same float32 query. A zero query stays zero."""
    if len(query) != dim:
        return None
    values = [float(v) for v in query]
    if not all(math.isfinite(v) for v in values):
        return None
    norm = math.sqrt(math.fsum([v * v for v in values]))
    if (norm == 0.0 or math.isinf(norm)) and any(values):
        # Squares that overflow or vanish: scale by the largest magnitude first.
        top = max(abs(v) for v in values)
        values = [v / top for v in values]
        norm = math.sqrt(math.fsum([v * v for v in values]))
    if norm == 0.0:
        return array("f", values)
    return array("f", [v / norm for v in values])


def _keep(
    view: memoryview,
    at: dict[str, int],
    n: int,
    scopes: list[list[str]],
    flt: tuple[str | None, str | None, bool | None],
) -> bytes | None:
    """A byte per row, 0xFF for the rows the filter keeps and 0 for the others (None: all)."""
    user_id, agent_id, archived = flt
    keep: int | None = None
    if user_id is not None or agent_id is not None:
        wanted = {
            code
            for code, (user, agent) in enumerate(scopes)
            if (user_id is None or user == user_id) and (agent_id is None or agent == agent_id)
        }
        # The low byte of each little-endian int32 code is the code (there are < 256 scopes).
        codes = bytes(view[at["scope_codes"] : at["id_ends"]][0::4])
        table = bytes(0xFF if code in wanted else 0 for code in range(256))
        keep = int.from_bytes(codes.translate(table), "little")
    if archived is not None:
        flags = bytes(view[at["archived"] : at["levels"]])
        table = bytes([0, 0xFF] if archived else [0xFF, 0]) + bytes(254)
        chosen = int.from_bytes(flags.translate(table), "little")
        keep = chosen if keep is None else keep & chosen
    if keep is None:
        return None
    return keep.to_bytes(n, "little")


def _lanes(row: memoryview | bytes, n: int, fill: bool = False) -> int:
    """The ``n`` bytes of ``row`` as ``n`` little-endian 32-bit lanes of one integer (each byte
    repeated in all four bytes of its lane when ``fill``)."""
    spread = bytearray(_LANE * n)
    spread[0::_LANE] = row
    if fill:
        for offset in range(1, _LANE):
            spread[offset::_LANE] = row
    return int.from_bytes(spread, "little")


def _screen(
    levels: memoryview[int],
    scales: memoryview[float],
    terms: list[tuple[int, float]],
    n: int,
    keep: bytes | None,
    limit: int,
) -> list[int]:
    """The rows that may be in the exact top ``limit``: those whose screening is within twice
    the error bound of the ``limit``-th best kept row's."""
    weights = [value * scales[j] for j, value in terms]  # exact: float32 x float32
    total = math.fsum(abs(w) for w in weights)
    if total == 0.0:
        # Every term falls on a row of zeros: all rows tie at 0; only ids decide.
        return list(range(n)) if keep is None else list(itertools.compress(range(n), keep))
    scale = (_WEIGHT_TOTAL - len(terms)) / total
    ints = [round(w * scale) for w in weights]
    positive = negative = 0
    for (j, _), weight in zip(terms, ints, strict=True):
        if weight:
            spread = _lanes(levels[j * n : (j + 1) * n], n)
            if weight > 0:
                positive += weight * spread
            else:
                negative -= weight * spread
    offset = 255 * sum(-w for w in ints if w < 0) + 1
    ones = int.from_bytes((b"\x01" + bytes(_LANE - 1)) * n, "little")
    screened = positive + offset * ones - negative  # every lane in 1 .. 2**24 - 1
    if keep is not None:
        screened &= _lanes(keep, n, fill=True)  # rows left out become 0
    packed = screened.to_bytes(_LANE * n, "little")
    wide = bytearray(4 * n)  # the lanes as uint32, which a memoryview can read
    for byte in range(_LANE):
        wide[byte::4] = packed[byte::_LANE]
    lanes = memoryview(wide).cast("I")
    kth = heapq.nlargest(limit, lanes)[-1]
    # |real - screened| <= bound: half a step per component, and the weights' rounding.
    bound = math.fsum(abs(value) * scales[j] * 0.5 for j, value in terms)
    bound += math.fsum((0.5 / scale + abs(w) * 2.0**-52) * LEVEL_SPAN for w in weights)
    bound = bound * (1.0 + _SLACK) + 1e-12
    threshold = max(1, kth - math.ceil(2.0 * bound * scale) - 1)
    return list(itertools.compress(range(n), map(threshold.__le__, lanes)))


def clip_similarity(similarity: float) -> float:
    """Cosine similarity within [-1, 1] despite float32 rounding."""
    return min(1.0, max(-1.0, similarity)) if math.isfinite(similarity) else 0.0
