"""Preparing the turns of an import in several processes while this one stores them.

Two thirds of a stored turn's time is its preparation (:func:`~.storing.prepare_turn`: the
offline analyzer, the offline embedder's vector, the profile claims), which needs no store
and, given the moment it is made at and its id, depends on nothing but the turn, the
configuration and the owner. An import of many turns therefore has worker processes of the
standard library's :mod:`multiprocessing` prepare slices of its batches while this process
stores the batch before and prepares what no worker has taken; batches are stored in order.
Workers are forked from this process on Linux while it runs a single thread (they are ready
in tens of milliseconds, sharing what it has loaded); otherwise, since a fork taken while
other threads hold locks can leave the child stuck, they are started by a fork server
(``forkserver``, where the platform has it, else ``spawn``): see :func:`start_method`.

What is stored is what preparing every turn in this process stores:

- the clock is read here, once per turn in turn order, when the turn's batch is handed out;
- a worker builds its own analyzer and embedder from the configuration once, when it
  starts, and never a store (its engine refuses to open one); everything that needs the
  store (which source ids are known, duplicates, profiles) stays here;
- each memory's id is drawn here with :mod:`secrets`, in turn order, when its batch is
  stored, so the random numbers are drawn in the order the one-process path draws them;
- a turn that could not be prepared is prepared again here when its batch's turn comes, so
  its error is the one the one-process path raises, after the batches before it are stored.

Only the offline analyzer and embedder are used this way (an LLM or a remote embedder works
in this process as before), and only the ones the configuration makes: an engine given its
own analyzer or embedder prepares in process. While the workers start, this process prepares
the first batches itself. A worker that dies fails the import with
:class:`WorkerStoppedError`; the workers are stopped when the import ends, however it ends
(the fork server, which holds no store either, lives as long as this process).
"""

from __future__ import annotations

import secrets
import sys
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import get_all_start_methods, get_context
from multiprocessing.connection import wait
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal

from kioku.errors import KiokuError
from kioku.service.remember.worker_process import (
    ImportedTurn,
    Item,
    config_bytes,
    prepare_item,
    prepare_slice,
    serve,
)
from kioku.threads import usable_cpus

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import ForkContext, ForkServerContext, SpawnContext
    from multiprocessing.process import BaseProcess
    from multiprocessing.queues import Queue

    from kioku.service.engine import Engine
    from kioku.service.remember.storing import PreparedTurn

__all__ = [
    "AUTO_MAX_PROCESSES",
    "AUTO_MIN_TURNS",
    "AUTO_MIN_TURNS_FORKED",
    "StartMethod",
    "TurnPreparer",
    "WorkerStoppedError",
    "Workers",
    "from_configuration",
    "preparing_processes",
    "start_method",
    "usable_cpus",
]

#: ``ingest.workers = "auto"`` uses workers for an import of at least this many turns to
#: prepare: a smaller one is done before a worker would have paid for its start (a fork
#: server's first start takes a few tenths of a second).
AUTO_MIN_TURNS: Final = 400
#: The same when the workers are forked, which start in tens of milliseconds (two processes
#: were 1.33 times as fast as one at 200 turns, as fast at 100: docs/benchmarks.md).
AUTO_MIN_TURNS_FORKED: Final = 200
#: ``"auto"`` has at most this many processes prepare turns: the writes of this process (a
#: third of a turn's time) bound what more could add.
AUTO_MAX_PROCESSES: Final = 4
#: Batches handed out beyond the one this process waits for or stores.
_AHEAD: Final = 2
#: Turns prepared together, by a worker or by this process.
_SLICE: Final = 10
#: Slices a ready worker is given ahead (it never waits while this process stores a batch).
_DEPTH: Final = 4
#: Seconds a worker told to stop has to end before it is terminated.
_STOP_WAIT: Final = 5.0
#: What a worker runs, imported once by the fork server (their regular expressions compiled,
#: the analyzer's tables loaded: see worker_warmup) rather than by every worker.
_PRELOAD: Final = (
    "kioku.service.remember.worker_process",
    "kioku.service.remember.worker_warmup",
    "kioku.service.runtime",
    "kioku.adapters.analyzers.offline.analyzer",
    "kioku.adapters.embedders.offline",
    "kioku.core.profiles",
)

Workers = int | Literal["auto"]


class WorkerStoppedError(KiokuError):
    """A worker process preparing the turns of an import stopped (killed, out of memory)."""

    def __init__(self) -> None:
        super().__init__(
            "a worker process preparing the import's turns stopped before it finished "
            "(killed, or out of memory); the batches before it were stored",
            hint="run the import again to resume it, or with --workers 1 "
            "(ingest.workers = 1) to prepare the turns in this process",
        )


def preparing_processes(setting: Workers, turns: int) -> int:
    """How many processes prepare an import of ``turns`` turns, the importing one included
    (1: it alone).

    ``"auto"``: one per usable CPU (at most :data:`AUTO_MAX_PROCESSES`) when there are at
    least two and the import has :data:`AUTO_MIN_TURNS` turns (:data:`AUTO_MIN_TURNS_FORKED`
    when its workers would be forked: :func:`start_method`); a number: that many (0 is 1)."""
    if setting == "auto":
        cpus = usable_cpus()
        forked = start_method(TurnPreparer.method) == "fork"
        enough = turns >= (AUTO_MIN_TURNS_FORKED if forked else AUTO_MIN_TURNS)
        return min(cpus, AUTO_MAX_PROCESSES) if cpus >= 2 and enough else 1
    return max(1, setting)


def from_configuration(engine: Engine) -> bool:
    """Whether ``engine``'s analyzer and embedder are the offline ones its configuration
    makes, so that a worker building its own from the configuration prepares the same."""
    from kioku.adapters.analyzers.offline import OfflineAnalyzer
    from kioku.adapters.embedders import create_embedder
    from kioku.adapters.embedders.offline import HashEmbedder

    config = engine.config
    if config.llm.provider != "offline" or config.embedding.provider.lower() != "offline":
        return False
    analyzer, embedder = engine.analyzer, engine.embedder
    if type(analyzer) is not OfflineAnalyzer or analyzer.segmenter_choice != "auto":
        return False
    if type(embedder) is not HashEmbedder:
        return False
    return embedder.model_id == create_embedder(config.embedding, env={}).model_id


StartMethod = Literal["fork", "forkserver", "spawn"]


def start_method(chosen: StartMethod | None = None) -> StartMethod:
    """How workers are started (``chosen``, when the platform has it, else by this rule):
    ``fork`` on Linux while this process runs one thread (a forked worker starts with all
    that this process has loaded, at once; with other threads running, a lock one of them
    held would stay held in the child, so then never), else ``forkserver`` (a server process
    that has imported what a worker runs, started once per process, forks each worker from
    itself: a few tenths of a second for the first import of a process), else ``spawn``."""
    methods = get_all_start_methods()
    if chosen is not None and chosen in methods:
        return chosen
    if sys.platform.startswith("linux") and "fork" in methods and threading.active_count() == 1:
        return "fork"
    return "forkserver" if "forkserver" in methods else "spawn"


def _context(method: StartMethod) -> ForkContext | ForkServerContext | SpawnContext:
    if method == "fork":
        return get_context("fork")
    if method == "forkserver":
        context = get_context("forkserver")
        context.set_forkserver_preload(list(_PRELOAD))
        return context
    return get_context("spawn")


@contextmanager
def _main_left_out(method: StartMethod) -> Iterator[None]:
    """Start processes without the caller's main module: a started process runs the script
    that started its parent again (as ``__mp_main__``) unless that module is ``__main__``
    of a package, and a worker needs nothing of it. A script importing without an
    ``if __name__ == "__main__":`` guard would otherwise import again in every worker. A
    forked worker runs nothing again: it has the module already."""
    if method == "fork":
        yield
        return
    main = sys.modules["__main__"]
    sys.modules["__main__"] = ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


@dataclass(slots=True)
class _Slice:
    """A few turns of a batch, prepared together (by a worker or by this process)."""

    items: list[Item]
    #: The turns prepared, with placeholder ids (None: not yet); fewer than the items when
    #: one failed.
    done: list[PreparedTurn] | None = None


@dataclass(slots=True)
class _Worker:
    """A worker process: slices of turns go in by ``inbox`` (a queue, whose thread sends
    them, so this process never waits to send), prepared turns come back by ``outbox`` (a
    pipe whose only writer is the worker: when it dies, reading ends at once), in the order
    the slices were sent."""

    process: BaseProcess
    inbox: Queue[list[Item] | None]
    outbox: Connection
    ready: bool = False
    sent: deque[_Slice] = field(default_factory=deque)

    def _receive(self) -> Any:
        try:
            return self.outbox.recv()
        except (EOFError, OSError):
            raise WorkerStoppedError() from None

    def started(self, *, block: bool = False) -> bool:
        """Whether it is ready (reading its ready message, waiting for it with ``block``)."""
        if not self.ready and (block or self.outbox.poll()):
            self._receive()
            self.ready = True
        return self.ready

    def send(self, part: _Slice) -> None:
        self.inbox.put(part.items)
        self.sent.append(part)

    def collect(self, *, block: bool) -> None:
        """Take in the answers that have come (waiting for one with ``block``)."""
        while self.sent and (block or self.outbox.poll()):
            self.sent.popleft().done = self._receive()
            block = False


class TurnPreparer:
    """The batches of an import prepared in order by ``processes`` processes: this one and
    ``processes - 1`` workers (1 or less: this one alone). A context manager: the workers
    are stopped when it is left, however it is left.

    Each batch is cut into slices of :data:`_SLICE` turns. A ready worker is kept
    :data:`_DEPTH` slices ahead, the first ones not yet handed out; this process stores the
    batch whose slices are all back, and otherwise prepares the next slice no worker has
    (all of them while the workers start), or waits. Whoever prepares a slice, each memory
    gets its id here, in turn order, when its batch is stored.
    """

    #: Whether this process prepares slices itself (off: every slice waits for a worker,
    #: as a test that wants them all prepared there asks).
    head_start: ClassVar[bool] = True
    #: How workers are started (None: by :func:`start_method`'s rule).
    method: ClassVar[StartMethod | None] = None

    def __init__(self, engine: Engine, processes: int) -> None:
        self._engine = engine
        self._count = processes - 1 if processes >= 2 else 0
        self._workers: list[_Worker] = []  # the ones started
        self._starter: threading.Thread | None = None
        self._failure: BaseException | None = None

    def __enter__(self) -> TurnPreparer:
        if not self._count:
            return self
        method = start_method(self.method)
        if method == "fork":
            # What every turn loads (lexicons, patterns, the Japanese dictionary) is loaded
            # here first, so each forked worker shares it instead of loading it again; the
            # forks themselves take milliseconds, from this thread, before any other starts.
            import kioku.service.remember.worker_warmup  # noqa: F401

            self._start(method)
            self._check()
        elif self.head_start:
            # The first start in a process waits for the fork server to import what a
            # worker runs (a few tenths of a second): meanwhile this one prepares turns.
            self._starter = threading.Thread(target=self._start, args=(method,), daemon=True)
            self._starter.start()
        else:
            self._start(method)
            self._check()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop()

    def _start(self, method: StartMethod) -> None:
        """Start the workers (each is used from when it is in ``_workers``); trouble is kept
        for the importing thread (:meth:`_check`)."""
        engine = self._engine
        try:
            context = _context(method)
            config = config_bytes(engine.config)
            with _main_left_out(method):
                for _ in range(self._count):
                    inbox: Queue[list[Item] | None] = context.Queue()
                    outbox, their_end = context.Pipe(duplex=False)
                    args = (inbox, their_end, config, engine.user_id, engine.agent_id)
                    process = context.Process(target=serve, args=args, daemon=True)
                    try:
                        process.start()
                    finally:
                        their_end.close()
                    self._workers.append(_Worker(process, inbox, outbox))
        except BaseException as exc:  # raised again by the importing thread
            self._failure = exc

    def _check(self) -> None:
        if self._failure is not None:
            raise self._failure

    def _stop(self) -> None:
        """Stop every worker: one with nothing left to do is told to and waited for (and
        terminated if it does not end), one still busy (the import failed or was
        interrupted) is terminated at once: it holds nothing but turns being prepared."""
        if self._starter is not None:
            self._starter.join()
            self._starter = None
        for worker in self._workers:
            if worker.sent or not worker.ready:
                worker.process.terminate()
            elif worker.process.is_alive():
                worker.inbox.put(None)
        for worker in self._workers:
            worker.process.join(_STOP_WAIT)
            if worker.process.is_alive():
                worker.process.terminate()
                worker.process.join()
            worker.inbox.cancel_join_thread()  # what a dead worker left unread is dropped
            worker.inbox.close()
            worker.outbox.close()
        self._workers = []

    def batches(self, batches: Sequence[Sequence[ImportedTurn]]) -> Iterator[list[PreparedTurn]]:
        """Each batch's turns prepared, in order; the next batches are being prepared while
        the caller stores one."""
        opened: deque[list[_Slice]] = deque()  # the batches handed out, in order
        unsent: deque[_Slice] = deque()  # their slices no one prepares yet, in order
        waiting = deque(batches)
        while opened or waiting:
            while waiting and len(opened) <= _AHEAD:
                parts = self._slices(waiting.popleft())
                opened.append(parts)
                unsent += parts
            head = opened[0]
            while any(part.done is None for part in head):
                self._step(unsent)
            opened.popleft()
            yield self._assemble(head)

    def _step(self, unsent: deque[_Slice]) -> None:
        """One step towards the first batch: slices handed to the ready workers, answers
        taken in, and one slice prepared here, or else a wait for an answer."""
        self._check()
        workers = [w for w in self._workers if w.started(block=not self.head_start)]
        for worker in workers:
            worker.collect(block=False)
            while unsent and len(worker.sent) < _DEPTH:
                worker.send(unsent.popleft())
        if unsent and (self.head_start or not self._workers):
            part = unsent.popleft()
            part.done = prepare_slice(self._engine, part.items)
            return
        busy = [w for w in workers if w.sent]
        if not busy:  # the answers taken in just now completed the first batch
            return
        ready = wait([w.outbox for w in busy])
        for worker in busy:
            if worker.outbox in ready:
                worker.collect(block=True)

    def _slices(self, batch: Sequence[ImportedTurn]) -> list[_Slice]:
        """The batch's turns in slices, each turn with the clock read for it (in turn
        order)."""
        clock = self._engine.clock
        items = [
            Item(t.user, t.assistant, t.at, t.session_id, t.source_id, clock.now()) for t in batch
        ]
        return [_Slice(items[i : i + _SLICE]) for i in range(0, len(items), _SLICE)]

    def _assemble(self, parts: list[_Slice]) -> list[PreparedTurn]:
        """A batch's turns, each memory given its id in turn order; a turn that could not be
        prepared is prepared again here (which raises its error)."""
        from kioku.core.ids import make_memory_id

        ready: list[PreparedTurn] = []
        for part in parts:
            assert part.done is not None
            for turn in part.done:
                memory = turn.memory
                # The memory is this process's own (unpickled, or made here), seen by
                # nothing else yet: its id is set in place (``replace`` would validate and
                # copy every field again).
                object.__setattr__(
                    memory, "id", make_memory_id(memory.created, secrets.token_hex(4))
                )
                ready.append(turn)
            engine = self._engine
            ready += [prepare_item(engine, item, None) for item in part.items[len(part.done) :]]
        return ready
