"""Vector search on a second thread while the lexical search runs (stores that allow it).

A recall's two candidate searches are independent: the lexical one reads the term index,
the vector one walks the embedding model's index. On a store whose searches can each take a
connection of their own (:attr:`~kioku.ports.store.Store.parallel_search`: PostgreSQL's pool,
the SQLite store's second connection), the vector search starts on a short-lived thread before
the lexical search and is collected after it, so the recall waits for the longer of the two
rather than for both. The thread takes a connection of its own, and the caller waits for it
only after closing its snapshot, so a caller never holds a connection while it waits for one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["Ahead"]


class Ahead:
    """A vector search running on its own thread; :meth:`result` waits for it."""

    __slots__ = ("_error", "_found", "_thread")

    def __init__(self, work: Callable[[], list[tuple[str, float]]]) -> None:
        self._found: list[tuple[str, float]] = []
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._found = work()
            except BaseException as exc:  # handed to the caller by result()
                self._error = exc

        self._thread = threading.Thread(target=run, name="kioku-vector-search", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        """Wait for the search to end, whatever its outcome (the caller is leaving on an
        error of its own)."""
        self._thread.join()

    def result(self) -> list[tuple[str, float]]:
        """The search's matches; its exception, if it raised one, is raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._found
