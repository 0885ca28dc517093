"""The CPUs this process may use, and thread pools that belong to one process.

A pool's threads are not copied into a forked child, so a child given its parent's
``ThreadPoolExecutor`` would queue work that nothing runs. :class:`ProcessThreads` makes the
pool on first use and again in each child. ``concurrent.futures`` is imported only then, so a
process that never hands work to a pool (a hook's) never loads it.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = ["ProcessThreads", "usable_cpus"]


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class ProcessThreads:
    """A pool of up to ``threads`` threads named ``prefix``-N for the process that uses it."""

    __slots__ = ("_lock", "_made", "_prefix", "_threads")

    def __init__(self, threads: int, prefix: str) -> None:
        self._threads = threads
        self._prefix = prefix
        self._lock = threading.Lock()
        self._made: tuple[int, ThreadPoolExecutor] | None = None

    def get(self) -> ThreadPoolExecutor:
        """This process's pool, made on first use (in a forked child, its own)."""
        pid = os.getpid()
        made = self._made
        if made is None or made[0] != pid:
            with self._lock:
                made = self._made
                if made is None or made[0] != pid:
                    from concurrent.futures import ThreadPoolExecutor

                    pool = ThreadPoolExecutor(self._threads, thread_name_prefix=self._prefix)
                    made = self._made = (pid, pool)
        return made[1]
