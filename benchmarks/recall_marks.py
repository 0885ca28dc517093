#!/usr/bin/env python3
"""What writing a recall's marks costs, durable against relaxed, interleaved.

    python benchmarks/recall_marks.py [--store-url postgresql://... [--schema NAME]]
        [--memories 500] [--queries 80] [--rounds 3] [--json]

A store (a fresh SQLite home, or the PostgreSQL schema ``--schema`` on ``--store-url``,
filled once and kept) holds ``--memories`` synthetic memories; ``--queries`` recalls are made
without marks, then each one's marks (the recalled memories marked, the session's mood, the
``memory_recall`` event) are written as :meth:`Kioku.recall` writes them, once in a
``Store.atomic()`` transaction and once in ``Store.atomic(durable=False)``, the two in
alternating order, ``--rounds`` times over. Printed: each series' median, quartiles and 95th
percentile in milliseconds and the ratio of the medians. On SQLite the two are the same
transaction (its commits never wait for a flush); on PostgreSQL the relaxed one does not wait
for the WAL to reach the disk.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from kioku import Kioku
from kioku.ports.store import MemoryFilter
from kioku.service.recall.traces import log_recall, record_traces

_WORDS = (
    "deploy docker index query postgres sqlite memory batch vector cache latency release "
    "review design decision garden dog river coffee train birthday mother exam job offer "
    "concert painting travel kyoto rain weather holiday budget invoice meeting sprint bug"
).split()


def _fill(kioku: Kioku, count: int, rng: random.Random) -> None:
    have = kioku.store.count(MemoryFilter())
    for _ in range(max(0, count - have)):
        kioku.remember(
            " ".join(rng.sample(_WORDS, 8)),
            " ".join(rng.sample(_WORDS, 8)),
            intensity=50,
            category="casual",
        )


def _summary(seconds: list[float]) -> dict[str, float]:
    xs = sorted(seconds)

    def at(q: float) -> float:
        return round(xs[min(len(xs) - 1, int(q * len(xs)))] * 1000, 2)

    return {"n": len(xs), "p25": at(0.25), "p50": at(0.5), "p75": at(0.75), "p95": at(0.95)}


def measure(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        env = {"KIOKU_NO_AUTO_BATCH": "1"}
        if args.store_url:
            env |= {"KIOKU_STORE_URL": args.store_url, "KIOKU_STORE__SCHEMA": args.schema}
        with Kioku.open(Path(tmp), env=env) as kioku:
            _fill(kioku, args.memories, rng)
            queries = [" ".join(rng.sample(_WORDS, 3)) for _ in range(args.queries)]
            results = [r for r in (kioku.recall(q, mark=False) for q in queries) if r.items]
            times: dict[bool, list[float]] = {True: [], False: []}
            turn = 0
            for _ in range(args.rounds):
                for result in results:
                    chosen = [item for item in result.items if item.via != "relation"]
                    order = (True, False) if turn % 2 else (False, True)
                    turn += 1
                    for durable in order:
                        t0 = time.perf_counter()
                        with kioku.store.atomic(durable=durable):
                            record_traces(kioku.store, chosen, "bench", kioku.clock.now())
                            log_recall(kioku, result, "bench")
                        times[durable].append(time.perf_counter() - t0)
    durable, relaxed = _summary(times[True]), _summary(times[False])
    return {
        "store": "postgres" if args.store_url else "sqlite",
        "memories": args.memories,
        "durable_ms": durable,
        "relaxed_ms": relaxed,
        "relaxed_over_durable": round(relaxed["p50"] / durable["p50"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store-url", help="a PostgreSQL server (libpq URL); else SQLite")
    parser.add_argument("--schema", default="recall_marks", help="the PostgreSQL schema")
    parser.add_argument("--memories", type=int, default=500)
    parser.add_argument("--queries", type=int, default=80)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    r = measure(args)
    if args.json:
        print(json.dumps(r))
        return
    for name in ("durable", "relaxed"):
        s = r[f"{name}_ms"]
        print(
            f"{r['store']} {name:>7}: p50 {s['p50']} ms (p25-p75 {s['p25']}-{s['p75']}), "
            f"p95 {s['p95']} ms, n {s['n']}"
        )
    print(f"relaxed / durable (medians): {r['relaxed_over_durable']}")


if __name__ == "__main__":
    main()
