"""Vector search on a second thread while the lexical search runs (stores that allow it).

A recall's two candidate searches are independent: the lexical one reads the term index,
the vector one walks the embedding model's index. On a store whose searches can each take a
connection of their own (:attr:`~kioku.ports.store.Store.parallel_search`: PostgreSQL's pool,
the SQLite store's second connection), the vector search is handed to a thread of the
process's search pool before the lexical search and is collected after it, so the recall
waits for the longer of the two rather than for both. The thread takes a connection of its
own, and the caller waits for it only after closing its snapshot, so a caller never holds a
connection while it waits for one.

The pool's threads outlive a recall: handing work to an idle one does not wait for the
operating system to start a thread (a start waits until the new thread has run, which on a
busy machine can take milliseconds). A forked child makes its own pool, since the parent's
threads are not in it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from kioku.threads import ProcessThreads

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = ["SEARCH_THREADS", "Ahead"]

#: Vector searches of concurrent recalls that run at once; more wait for a free thread.
SEARCH_THREADS: Final = 8

_SEARCHES = ProcessThreads(SEARCH_THREADS, "kioku-vector")


class Ahead:
    """A vector search running on a search thread; :meth:`result` waits for it."""

    __slots__ = ("_future",)

    def __init__(self, work: Callable[[], list[tuple[str, float]]]) -> None:
        self._future: Future[list[tuple[str, float]]] = _SEARCHES.get().submit(work)

    def wait(self) -> None:
        """Wait for the search to end, whatever its outcome (the caller is leaving on an
        error of its own)."""
        self._future.exception()

    def result(self) -> list[tuple[str, float]]:
        """The search's matches; its exception, if it raised one, is raised here."""
        return self._future.result()
