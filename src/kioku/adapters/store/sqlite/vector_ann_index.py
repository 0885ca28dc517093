"""The HNSW graphs of one SQLite store (:mod:`.vector_ann`): searched, and built, mapped and
saved in the background.

:class:`AnnIndexes` keeps one :class:`.vector_ann.Graph` per model and follows the store's
vector cache with it (:mod:`.vector_ann_follow`). Searches never wait for a graph: until one
is installed, they are exact. The work is done by at most one daemon thread per store and
model, which runs the jobs asked of it one after the other (a newer request replaces one that
has not started):

- **map** (asked by a search that finds no graph but graph files beside the cache file):
  check the map, read the whole graph file against its CRC-32, map it read-only, install it;
- **save** (asked by ``save_vector_cache``): build the graph from the live rows of a
  snapshot of the cache when there is none (or it cannot be mapped), when more than
  :data:`.vector_ann.REBUILD_DEAD_SHARE` of its slots are dead, or when a memory it holds may
  have been erased; else add the uncovered rows to a copy of it once they are more than
  :data:`.vector_ann.ADD_AT`; then write both files under temporary names, sync them, and,
  under the store's lock, rename them into place and install the graph. Rows written after
  the snapshot are not covered: searches scan them exactly beside the graph.

**Erasure.** Each graph carries a store version since which none of the memories whose
vectors it holds was deleted (``Graph.since``: its snapshot's version when built). Under the
store's lock, just before the rename and the install, the change log is read from that
version (:func:`.vector_ann_files.erased_since`); when a memory may have been deleted
meanwhile, in this process or another one, the files are deleted instead and the build starts
again from a new snapshot (a few times at most, then it waits for the next save). Deletions
in this process take the same lock, so none lands between the check and the rename; one by
another process just after the check is caught by the same check made again after the rename,
which deletes the files (that process removes the cache files too, :meth:`.vector_file.
VectorFiles.remove`, temporary ones included).

**Exit.** The threads are daemons: a short process does not wait for them. At exit (and when
the store closes) a build stops before its next chunk of rows; a temporary file a killed
process leaves is never read, and is deleted by the next cache write or erasure. Callers that
want the graph now (the nightly batch's own process, benchmarks, tests) call :meth:`wait`.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Final, Protocol

import numpy as np

from kioku.adapters.store.sqlite.vector_ann import (
    ADD_AT,
    GRAPH_SUFFIX,
    MAP_SUFFIX,
    REBUILD_DEAD_SHARE,
    Graph,
    available,
    build,
    grown,
)
from kioku.adapters.store.sqlite.vector_ann_files import (
    Prepared,
    SavedVectors,
    open_graph,
    prepare,
    read_map,
    remove_files,
)
from kioku.adapters.store.sqlite.vector_ann_follow import follow
from kioku.adapters.store.sqlite.vector_lite import clip_similarity
from kioku.adapters.store.sqlite.vector_scan import SPARSE_SHARE
from kioku.adapters.store.sqlite.vectors import ModelVectors
from kioku.errors import KiokuError
from kioku.logs import LazyLogger
from kioku.ports.store import MemoryFilter

__all__ = ["AnnIndexes", "StoreSide"]

_log = LazyLogger(__name__)

#: Builds started again after an erasure landed during one, before waiting for the next save.
_ATTEMPTS: Final = 3
#: Graphs of fewer rows are built on one thread (a few seconds at most).
_ONE_THREAD_BELOW: Final = 50_000

#: Set at interpreter exit: builds in daemon threads stop at their next chunk.
_EXITING = threading.Event()
atexit.register(_EXITING.set)


class StoreSide(Protocol):
    """What the background work asks of the store (:class:`.store.SqliteStore`)."""

    def ann_snapshot(self, model: str) -> tuple[int, ModelVectors] | None:
        """The store version and the cache of ``model`` now (None: no vectors)."""
        ...

    def ann_unerased(self, since: int) -> AbstractContextManager[int | None]:
        """Holding the store's lock: the version now when no memory was deleted since
        ``since``, else None."""
        ...


class _StoppedError(KiokuError):
    """The store closed or the interpreter is exiting: the build stops (never escapes)."""

    def __init__(self) -> None:
        super().__init__("the graph build stopped")


@dataclasses.dataclass(frozen=True)
class _Job:
    kind: str  # "map" or "save"
    version: int
    vectors: ModelVectors
    threads: int


#: A hook called by the worker at each step (for tests): ``(step, graph)``.
Step = Callable[[str, Graph | None], None]


class AnnIndexes:
    """The graphs of one store's models: :meth:`search` with one, :meth:`save` one."""

    def __init__(self, min_vectors: int, files: SavedVectors, side: StoreSide) -> None:
        self.min_vectors = min_vectors
        self._files = files
        self._side = side
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._graphs: dict[str, Graph] = {}
        #: model -> what a failed attempt to map the files saw (not tried again for it)
        self._missed: dict[str, tuple[object, ...]] = {}
        self._jobs: dict[str, _Job] = {}
        self._running: set[str] = set()
        self._closed = threading.Event()
        #: Called by the worker at each step (``"verify"``, ``"built"``, ``"written"``).
        self.on_step: Step | None = None

    def wanted(self, vectors: ModelVectors) -> bool:
        """Whether ``vectors`` is large enough for a graph, and usearch is installed."""
        return 0 < self.min_vectors <= vectors.size and not vectors.mixed and available()

    def search(
        self,
        version: int,
        vectors: ModelVectors,
        query: Sequence[float],
        flt: MemoryFilter,
        limit: int,
    ) -> list[tuple[str, float]] | None:
        """``(id, cosine similarity)`` of the best ``limit`` rows, as :func:`.vectors.top_matches`
        gives them but from the graph's candidates; None: the caller searches exactly (a
        query with few non-zero components, no graph yet, a filter that keeps few rows)."""
        if limit <= 0:
            return None
        unit = vectors.check_query(query)
        if unit is None or np.count_nonzero(unit) <= SPARSE_SHARE * vectors.dim:
            return None  # a zero query finds nothing; a sparse one is scanned exactly
        if not self.wanted(vectors):  # imports usearch, once
            return None
        graph = self.graph(version, vectors)
        if graph is None:
            return None
        excluded, kept = vectors.excluded(flt.user_id, flt.agent_id, flt.archived)
        if kept <= 0:
            return []
        best = graph.search(unit, excluded, kept, limit)
        if best is None:
            return None
        return [(vectors.ids[row], clip_similarity(score)) for row, score in best]

    def graph(self, version: int, vectors: ModelVectors) -> Graph | None:
        """The installed graph of ``vectors``'s model tied to it, or None (then, if graph
        files are beside the cache file, they are checked and mapped in the background)."""
        with self._lock:
            graph = self._graphs.get(vectors.model)
            if graph is not None and graph.vectors is not vectors:
                graph = follow(graph, vectors)
                self._graphs[vectors.model] = graph
            if graph is None and not self._busy(vectors.model):
                seen = self._seen(vectors)
                if seen is not None and self._missed.get(vectors.model) != seen:
                    self._start(_Job("map", version, vectors, _threads(False, vectors.size)))
            return graph

    def save(self, version: int, vectors: ModelVectors, *, wait: bool = False) -> None:
        """Build, grow or rebuild the graph of ``vectors`` (the cache at ``version``) as
        needed and write it beside the cache file, in the background; with ``wait``, on
        every core, and return when it is done."""
        if not self.wanted(vectors):
            return
        with self._lock:
            self._start(_Job("save", version, vectors, _threads(wait, vectors.size)))
        if wait:
            self.wait(vectors.model)

    def wait(self, model: str | None = None, timeout: float | None = None) -> bool:
        """Wait until no work is left for ``model`` (None: any); False on ``timeout``."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._busy(model), timeout)

    def _busy(self, model: str | None) -> bool:
        if model is None:
            return bool(self._running or self._jobs)
        return model in self._running or model in self._jobs

    def close(self) -> None:
        """Stop the work in progress (at its next chunk of rows) without waiting for it."""
        self._closed.set()

    # -- the worker ----------------------------------------------------------------------

    def _seen(self, vectors: ModelVectors) -> tuple[object, ...] | None:
        base = self._files.path(vectors.model)
        origin = None if vectors.spare is None else vectors.spare.origin
        if base is None or origin is None:
            return None
        try:
            stat = base.with_suffix(MAP_SUFFIX).stat()
        except OSError:
            return None
        return (stat.st_mtime_ns, stat.st_size, origin, vectors.size)

    def _start(self, job: _Job) -> None:
        """Queue ``job`` (under the lock), starting the model's thread when none runs."""
        if self._closed.is_set():
            return
        model = job.vectors.model
        self._jobs[model] = job
        if model not in self._running:
            self._running.add(model)
            threading.Thread(
                target=self._run, args=(model,), name=f"kioku-ann-{model}", daemon=True
            ).start()

    def _run(self, model: str) -> None:
        stopped = False
        while True:
            with self._idle:
                stopped = stopped or self._closed.is_set()
                job = None if stopped else self._jobs.pop(model, None)
                if job is None:  # leaves under the same lock as _start looks at it
                    self._running.discard(model)
                    if stopped:
                        self._jobs.pop(model, None)
                    self._idle.notify_all()
                    return
            try:
                if job.kind == "map":
                    self._map(job)
                else:
                    self._save(job)
            except _StoppedError:
                stopped = True
            except Exception as exc:  # best-effort, like the cache file: search exactly
                _log.debug("ann: %s of %r failed (%s: %s)", job.kind, model, type(exc), exc)
            except BaseException:
                with self._idle:
                    self._running.discard(model)
                    self._idle.notify_all()
                raise

    def _step(self, step: str, graph: Graph | None) -> None:
        if self._closed.is_set() or _EXITING.is_set():
            raise _StoppedError
        hook = self.on_step
        if hook is not None:
            hook(step, graph)

    def _between(self) -> None:
        if self._closed.is_set() or _EXITING.is_set():
            raise _StoppedError

    def _open(self, version: int, vectors: ModelVectors) -> Graph | None:
        """The graph saved beside the cache file ``vectors`` grew from, checked, or None."""
        base = self._files.path(vectors.model)
        origin = None if vectors.spare is None else vectors.spare.origin
        seen = self._seen(vectors)
        if base is None or origin is None or seen is None:
            return None
        try:
            info = read_map(base, vectors, origin)
            self._step("verify", None)
            graph = None if info is None else open_graph(info, vectors, version)
        except (OSError, ValueError, RuntimeError) as exc:  # damaged, foreign or stale
            _log.debug("ann: ignoring the graph of %s (%s: %s)", base, type(exc).__name__, exc)
            graph = None
        if graph is None:
            with self._lock:
                self._missed[vectors.model] = seen
        return graph

    def _map(self, job: _Job) -> None:
        graph = self._open(job.version, job.vectors)
        if graph is not None:
            self._install(graph, None)

    def _install(self, graph: Graph, prepared: Prepared | None) -> bool:
        """Under the store's lock, unless a memory may have been erased since the graph's
        version: rename the prepared files into place and install the graph for searches."""
        model = graph.vectors.model
        try:
            with self._side.ann_unerased(graph.since) as now:
                if now is None or self._closed.is_set():
                    if prepared is not None:
                        prepared.discard()
                    return False
                if prepared is not None:
                    prepared.commit()
                with self._lock:
                    if prepared is not None or model not in self._graphs:
                        self._graphs[model] = dataclasses.replace(graph, since=now)
                    self._missed.pop(model, None)
        except BaseException:
            if prepared is not None:
                prepared.discard()  # what was not renamed yet
            raise
        if prepared is not None:
            # Another process's deletion just after the check: its removal of the files may
            # have come before the rename. Read the log again (a new snapshot).
            with self._side.ann_unerased(now) as again:
                if again is None:
                    remove_files(prepared.base)
        return True

    def _save(self, job: _Job) -> None:
        version, vectors = job.version, job.vectors
        for attempt in range(_ATTEMPTS):
            if attempt:
                snapshot = self._side.ann_snapshot(vectors.model)
                if snapshot is None:
                    return
                version, vectors = snapshot
            if not self.wanted(vectors):
                return
            if self._save_once(version, vectors, job.threads):
                return
            _log.debug("ann: a memory was erased during a build of %r: again", vectors.model)

    def _save_once(self, version: int, vectors: ModelVectors, threads: int) -> bool:
        """One build (or growth, or write) and install; False when an erasure came."""
        model = vectors.model
        base = self._files.path(model)
        on_disk = base is not None and all(
            base.with_suffix(suffix).exists() for suffix in (GRAPH_SUFFIX, MAP_SUFFIX)
        )
        with self._lock:
            graph = self._graphs.get(model)
        if graph is None and on_disk:
            graph = self._open(version, vectors)
        if graph is not None:
            graph = follow(graph, vectors)
            with self._side.ann_unerased(graph.since) as now:
                graph = None if now is None else dataclasses.replace(graph, since=now)
        if (
            graph is None
            or (not on_disk and graph.dead_slots() > 0)
            or graph.dead_slots() > REBUILD_DEAD_SHARE * graph.slots
        ):
            graph = build(vectors, version, threads, self._between)
        elif graph.uncovered().size > ADD_AT:
            graph = grown(graph, threads, self._between)
        self._step("built", graph)
        prepared = None
        if base is not None:
            try:
                prepared = prepare(base, graph, self._files, on_disk)
            except Exception as exc:  # best-effort, like the cache file: kept in memory only
                _log.debug("ann: not written beside %s (%s)", base, exc)
        try:
            self._step("written", graph)
        except BaseException:
            if prepared is not None:
                prepared.discard()
            raise
        return self._install(graph if prepared is None else prepared.graph, prepared)


def _threads(wait: bool, rows: int) -> int:
    """usearch's threads for a build: one for a small graph (then the same rows always give
    the same graph), every core when a caller waits for it, else all but one (searches keep
    a core)."""
    if rows < _ONE_THREAD_BELOW:
        return 1
    return 0 if wait else max(1, (os.cpu_count() or 2) - 1)
