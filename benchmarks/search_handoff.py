#!/usr/bin/env python3
"""How long a recall's caller is held up handing its vector search to another thread.

    python benchmarks/search_handoff.py [--rounds 2000] [--work 30000]

A recall hands its vector search to a thread and runs its lexical search meanwhile
(``kioku.service.recall.search_ahead``). Timed here is only the hand-off, the time the
caller is blocked before it can start its own search, two ways, alternating: a new
``threading.Thread`` started per search (its ``start`` waits until the new thread has run)
and :class:`~kioku.service.recall.search_ahead.Ahead` (a task for the process's pool of
search threads). Between hand-off and collection the caller does ``--work`` additions, as
a lexical search would keep it busy. Printed: median, p95 and p99 of each, in ms, and the
ratio of the medians. The difference shows on a busy machine, where a new thread may wait
for a CPU before it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from kioku.service.recall.search_ahead import Ahead

Matches = list[tuple[str, float]]


class _Started:
    """A search on a thread of its own, started for it (the way before the pool)."""

    def __init__(self, work: Callable[[], Matches]) -> None:
        self._found: Matches = []
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], Matches]) -> None:
        self._found = work()

    def result(self) -> Matches:
        self._thread.join()
        return self._found


def _search() -> Matches:
    return [("m", 1.0)]


def _summary(name: str, seconds: list[float]) -> float:
    ordered = sorted(seconds)
    n = len(ordered)
    median = ordered[n // 2] * 1e3
    p95 = ordered[min(n - 1, int(n * 0.95))] * 1e3
    p99 = ordered[min(n - 1, int(n * 0.99))] * 1e3
    print(f"{name:>18}: blocked ms p50 {median:.3f}  p95 {p95:.3f}  p99 {p99:.3f}  (n={n})")
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--work", type=int, default=30_000)
    args = parser.parse_args()
    ways: dict[str, Callable[[Callable[[], Matches]], _Started | Ahead]] = {
        "thread per search": _Started,
        "search pool": Ahead,
    }
    blocked: dict[str, list[float]] = {name: [] for name in ways}
    Ahead(_search).result()  # the pool's first thread is made outside the clock
    for round_ in range(args.rounds):
        order = list(ways.items()) if round_ % 2 == 0 else list(reversed(ways.items()))
        for name, way in order:
            started = time.perf_counter()
            search = way(_search)
            blocked[name].append(time.perf_counter() - started)
            sum(range(args.work))  # the caller's own search meanwhile
            search.result()
    print(f"load average {os.getloadavg()[0]:.2f}, {args.rounds} hand-offs each, alternating")
    before = _summary("thread per search", blocked["thread per search"])
    after = _summary("search pool", blocked["search pool"])
    print(f"ratio of medians (pool / thread per search): {after / before:.3f}")


if __name__ == "__main__":
    main()
