"""Approximate vector search for large caches: an HNSW graph (the optional ``ann`` extra).

Exact search (:mod:`.vector_scan`) reads the whole ``(dim, n)`` matrix for a query with many
non-zero components: about 1.5 GB at a million 384-dimensional vectors. Past
``retrieval.ann_min_vectors`` rows, when ``usearch`` is installed (``pip install
'kioku[ann]'``), such a query walks an HNSW graph of the same normalised vectors (inner
product) instead, for :data:`CANDIDATES` candidates, and then scores those candidates, and
every row the graph does not cover yet, exactly (:func:`.vector_scan.top_rows`): the scores
returned are the exact cosine similarities, equal scores in id order, as in exact search;
only a row the graph fails to offer can be missed. Queries with few non-zero components keep
the exact sparse scan, which reads a small share of the matrix.

The graph's keys are *slots*, never reused. A :class:`Graph` ties it to one cache
(:class:`.vectors.ModelVectors`) by two arrays, slot -> row and row -> slot, and follows the
cache from version to version without rebuilding (:func:`.vector_ann_follow.follow`):

- rows appended to the same matrix are not covered (-1) and are scanned exactly beside the
  graph; a memory whose row died and came back with the same vector (its archived flag
  changed) keeps its slot;
- rows that died (deleted, changed) are left out by the filter masks, so their slots find
  nothing;
- a cache copied into a new matrix (dead rows dropped, or loaded again) is matched to the
  old one by id, and a slot is kept only for a row whose vector is bit for bit the same.

Searches never build nor grow a graph: :class:`.vector_ann_index.AnnIndexes` does, in a
background thread started where the vector cache file is prepared (``save_vector_cache``:
after the nightly batch and after writes). It builds the graph when there is none, adds the
uncovered rows once they are more than :data:`ADD_AT`, builds it again when more than
:data:`REBUILD_DEAD_SHARE` of its slots are dead, and saves it beside the cache file for the
next process to map.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from kioku.adapters.store.sqlite.vector_scan import top_rows
from kioku.adapters.store.sqlite.vectors import ModelVectors
from kioku.logs import LazyLogger

if TYPE_CHECKING:
    from usearch.index import Index

__all__ = [
    "ADD_AT",
    "ANN_SUFFIXES",
    "CANDIDATES",
    "Graph",
    "available",
    "build",
    "grown",
]

_log = LazyLogger(__name__)

#: The graph file and the file that ties its slots to a cache file's rows.
GRAPH_SUFFIX: Final = ".ann"
MAP_SUFFIX: Final = ".annmap"
ANN_SUFFIXES: Final = (GRAPH_SUFFIX, MAP_SUFFIX)
#: Graph parameters: links per node, candidate list while building and while searching,
#: and the scalar type of the graph's copy of the vectors (one byte per component is enough
#: to find candidates, which are scored exactly from the cache: on the 200,000 vectors of
#: benchmarks/recall_scale.py with a search list of 800, it found as much as half precision,
#: recall@10 0.988 each with 16 links and a build list of 64, and built 2.5 times faster).
CONNECTIVITY: Final = 16
EXPANSION_ADD: Final = 128
EXPANSION_SEARCH: Final = 1024
#: A larger graph needs a longer search list to find as much: at least one entry per this
#: many slots (4,000 at a million). On the million vectors of benchmarks/recall_scale.py,
#: 40 prompt-length queries, recall@10 of exact: 1,024 0.970, 2,048 0.978, 3,072 0.993,
#: 4,096 0.998 (docs/benchmarks.md); 1,024 gave 0.996 at 200,000.
SLOTS_PER_EXPANSION: Final = 250
DTYPE: Final = "i8"
#: Rows the graph offers per search, before the filter; divided by the share of rows the
#: filter keeps (and capped by :data:`MIN_KEPT_SHARE`: below it the search is exact).
CANDIDATES: Final = 400
MIN_KEPT_SHARE: Final = 0.1
#: Rows past the graph a search scans exactly, at most (more: the search is exact).
MAX_UNCOVERED: Final = 32_768
#: Uncovered rows past which a save adds them to the graph.
ADD_AT: Final = 2048
#: Share of dead slots past which a save builds the graph again.
REBUILD_DEAD_SHARE: Final = 0.25
#: Rows added to the graph at a time while building (bounds the transposed copy; a build
#: in the background can be stopped between two of them).
_ADD_CHUNK: Final = 16_384

Rows = npt.NDArray[np.int64]

_available: bool | None = None


def available() -> bool:
    """Whether usearch can be imported (imported once, on the first large dense query)."""
    global _available
    if _available is None:
        try:
            import usearch.index  # noqa: F401
        except ImportError:
            _available = False
        else:
            _available = True
    return _available


class _Ids:
    """The ids of chosen rows of a cache, by position (for the order of equal scores)."""

    __slots__ = ("_ids", "_rows")

    def __init__(self, vectors: ModelVectors, rows: Rows) -> None:
        self._ids = vectors.ids
        self._rows = rows

    def __getitem__(self, at: int) -> object:
        return self._ids[int(self._rows[at])]


@dataclass(frozen=True, eq=False)
class Graph:
    """An HNSW graph tied to one cache: ``row_of_slot[s]`` is the row of ``vectors`` that
    slot ``s`` holds (-1: none), ``slot_of_row[r]`` the slot of row ``r`` (-1: not covered)."""

    index: Index
    vectors: ModelVectors
    row_of_slot: Rows
    slot_of_row: Rows
    #: Whether ``index`` is a read-only mapping of a file.
    viewed: bool
    #: CRC-32 and size of the graph's file when it is written (None: in memory only).
    checksum: tuple[int, int] | None = None
    #: A store version (see .vector_version) since which no memory whose vector the graph
    #: holds was erased, as far as its builder checked: a later erasure is looked for from it.
    since: int = 0

    @property
    def slots(self) -> int:
        return int(self.row_of_slot.size)

    def dead_slots(self) -> int:
        """Slots that hold no live row of the cache."""
        rows = self.row_of_slot
        held = rows >= 0
        dead = self.vectors.dead
        if dead is not None:
            held[held] = ~dead[rows[held]]
        return int(self.slots - np.count_nonzero(held))

    @cached_property
    def _uncovered(self) -> Rows:
        free = self.slot_of_row < 0
        dead = self.vectors.dead
        if dead is not None:
            free &= ~dead
        return np.flatnonzero(free).astype(np.int64)

    def uncovered(self) -> Rows:
        """Live rows of the cache that no slot holds (a fresh array)."""
        return self._uncovered.copy()

    def search(
        self,
        unit: npt.NDArray[np.float32],
        excluded: npt.NDArray[np.bool_] | None,
        kept: int,
        limit: int,
    ) -> list[tuple[int, float]] | None:
        """``(row, exact score)`` of the best ``limit`` rows the graph and the uncovered rows
        offer, or None when the filter keeps too few rows (or the graph offers fewer than
        ``limit`` of them): the caller searches exactly."""
        vectors = self.vectors
        share = kept / max(vectors.size, 1)
        if share < MIN_KEPT_SHARE:
            return None
        uncovered = self._uncovered
        if uncovered.size > MAX_UNCOVERED:
            return None
        count = min(self.slots, math.ceil(max(CANDIDATES, limit) / share))
        keys = np.zeros(0, dtype=np.int64)
        if count > 0:
            # usearch has the setter; its type stubs miss it.
            wanted = max(EXPANSION_SEARCH, self.slots // SLOTS_PER_EXPANSION, count)
            self.index.expansion_search = wanted  # type: ignore[misc]
            keys = np.asarray(self.index.search(unit, count, threads=1).keys, dtype=np.int64)
        keys = keys[(keys >= 0) & (keys < self.slots)]
        rows = self.row_of_slot[keys]
        rows = rows[rows >= 0]
        if excluded is not None:
            rows = rows[~excluded[rows]]
            uncovered = uncovered[~excluded[uncovered]]
        elif vectors.dead is not None:
            rows = rows[~vectors.dead[rows]]
        if rows.size < min(limit, kept - uncovered.size):
            return None
        candidates = np.unique(np.concatenate([rows, uncovered]))
        # Only the query's non-zero components count (the exact sums of .vector_scan skip
        # the others too), so only those rows of the matrix are gathered.
        nonzero = np.flatnonzero(unit)
        picked = np.ascontiguousarray(vectors.columns[np.ix_(nonzero, candidates)])
        best = top_rows(
            picked, _Ids(vectors, candidates), unit[nonzero], None, int(candidates.size), limit
        )
        return [(int(candidates[at]), score) for at, score in best]


def _new_index(dim: int) -> Index:
    from usearch.index import Index

    return Index(
        ndim=dim,
        metric="ip",
        dtype=DTYPE,
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


#: Called between two chunks of a build; it raises to stop the build.
Between = Callable[[], None]


def _add(
    index: Index,
    vectors: ModelVectors,
    rows: Rows,
    first_slot: int,
    threads: int,
    between: Between | None,
) -> None:
    """Add ``rows`` of the cache to ``index`` as slots ``first_slot, first_slot + 1, ...``
    (``threads``: usearch's, 0 for every core)."""
    for start in range(0, rows.size, _ADD_CHUNK):
        if between is not None:
            between()
        part = rows[start : start + _ADD_CHUNK]
        block = np.ascontiguousarray(vectors.columns[:, part].T)
        keys = np.arange(first_slot + start, first_slot + start + part.size, dtype=np.uint64)
        index.add(keys, block, threads=threads)


def build(
    vectors: ModelVectors, since: int, threads: int = 0, between: Between | None = None
) -> Graph:
    """A graph of every live row of ``vectors`` (slots in row order), the cache of the store
    version ``since``."""
    started = time.perf_counter()
    rows = (
        np.arange(vectors.size, dtype=np.int64)
        if vectors.dead is None
        else np.flatnonzero(~vectors.dead).astype(np.int64)
    )
    index = _new_index(vectors.dim)
    _add(index, vectors, rows, 0, threads, between)
    slot_of_row = np.full(vectors.size, -1, dtype=np.int64)
    slot_of_row[rows] = np.arange(rows.size, dtype=np.int64)
    _log.debug(
        "ann: built a graph of %d vectors of %r in %.1f s",
        rows.size,
        vectors.model,
        time.perf_counter() - started,
    )
    return Graph(index, vectors, rows.copy(), slot_of_row, viewed=False, since=since)


def grown(graph: Graph, threads: int = 0, between: Between | None = None) -> Graph:
    """``graph`` with its uncovered rows added, in a copy of its index (searches may be
    using the index itself)."""
    rows = graph.uncovered()
    if rows.size == 0:
        return graph
    index = graph.index.copy()
    first = graph.slots
    _add(index, graph.vectors, rows, first, threads, between)
    slot_of_row = graph.slot_of_row.copy()
    slot_of_row[rows] = np.arange(first, first + rows.size, dtype=np.int64)
    return Graph(
        index,
        graph.vectors,
        np.concatenate([graph.row_of_slot, rows]),
        slot_of_row,
        viewed=False,
        since=graph.since,
    )
