"""Simulations of the ``/simulate`` page, run in the background while the page follows them.

A year of nightly batches takes tens of seconds, longer than a page should keep a browser
waiting. Each run gets a thread and a random id; its page refreshes itself until the run is
over, then shows the result. A synthetic run never opens the owner's store, so it runs
beside the owner's requests; a run from a copy of the store holds the owner's turn while it
copies and replays. One run per owner at a time; the last few finished runs are kept in
memory for their pages, never on disk.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from kioku.interfaces.http.tenants import Access
    from kioku.service.lifecycle.simulate_checks import Simulation

__all__ = ["Job", "Simulations"]

#: Finished runs kept for their pages, across every owner.
_KEPT: Final = 8

Scope = tuple[str | None, str | None]
Progress = Callable[[int, int], None]


@dataclass(slots=True)
class Job:
    """One simulation: its owner, its parameters, how far it got and how it ended."""

    id: str
    scope: Scope
    params: object
    total: int
    done: int = 0
    result: Simulation | None = None
    error: str = ""
    finished: threading.Event = field(default_factory=threading.Event)

    @property
    def running(self) -> bool:
        return not self.finished.is_set()


class Simulations:
    """The runs of one server."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._jobs: OrderedDict[str, Job] = OrderedDict()

    def running_for(self, access: Access) -> Job | None:
        with self._guard:
            for job in self._jobs.values():
                if job.scope == access.scope and job.running:
                    return job
        return None

    def get(self, access: Access, job_id: str) -> Job | None:
        """The run ``job_id`` if it is ``access``'s owner's; None otherwise."""
        with self._guard:
            job = self._jobs.get(job_id)
        return job if job is not None and job.scope == access.scope else None

    def start(
        self,
        access: Access,
        params: object,
        total: int,
        work: Callable[[Progress], Simulation],
        describe: Callable[[Exception], str | None],
    ) -> Job:
        """Run ``work`` in a thread of its own (or return the owner's run in progress).

        ``describe`` turns an error into the text to show, or None to let it propagate."""
        with self._guard:
            for job in self._jobs.values():
                if job.scope == access.scope and job.running:
                    return job
            job = Job(id=secrets.token_urlsafe(12), scope=access.scope, params=params, total=total)
            self._jobs[job.id] = job
            self._forget_old()

        def progress(done: int, _total: int) -> None:
            job.done = done

        def run() -> None:
            try:
                job.result = work(progress)
            except Exception as exc:
                shown = describe(exc)
                job.error = shown if shown is not None else f"the run failed ({type(exc).__name__})"
            finally:
                job.finished.set()

        threading.Thread(target=run, name=f"kioku-simulate-{job.id}", daemon=True).start()
        return job

    def _forget_old(self) -> None:
        finished = [job_id for job_id, job in self._jobs.items() if not job.running]
        for job_id in finished[: max(0, len(finished) - _KEPT)]:
            del self._jobs[job_id]
