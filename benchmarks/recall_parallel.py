#!/usr/bin/env python3
"""Recall with its vector search beside the lexical one, against both in line, interleaved.

    python benchmarks/recall_parallel.py --store-url postgresql://... --schema NAME
        [--queries 100] [--long] [--rounds 2] [--json]
    python benchmarks/recall_parallel.py --home DIR [--ann] [--queries 100] [--long] ...

The PostgreSQL schema ``--schema`` must hold a filled store: the ones ``recall_scale.py
--store-url ... --store DIR`` keeps (``recall_scale_n<size>_s<seed>``) are what this was made
for. ``--home`` names a SQLite store's directory instead (``recall_scale.py --store DIR``
keeps them as ``DIR/n<size>-s<seed>``), searched exactly, or with ``--ann`` through its HNSW
graph (made first if it has none). One process opens the store once: as it is, where a
recall's vector search runs on its own thread and connection while the lexical search runs
(``Store.parallel_search``), and with ``[store] parallel_search`` off, where the same recall
runs both searches one after the other. Each query is recalled both ways,
the order alternating, without marks (the store's state stays fixed), ``--rounds`` times
over, after one untimed pass over every query (which brings the index's pages into the
server's buffers, as a server in use has them). Queries are ``recall_scale.py``'s three-word
set and, with ``--long``, its 30-60-word set. Printed per set: each series' median, quartiles
and 95th percentile in milliseconds, and the ratios (ahead / in line) of the medians and of
the 95th percentiles.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from kioku import Kioku
from kioku.ports.store import MemoryFilter

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recall_scale import long_queries, short_queries


def _ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))] * 1000


def _series(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values) * 1000, 2),
        "p25": round(_ms(values, 0.25), 2),
        "p75": round(_ms(values, 0.75), 2),
        "p95": round(_ms(values, 0.95), 2),
    }


def run(
    where: tuple[str, str] | Path,
    queries: int,
    long: bool,
    rounds: int,
    seed: int,
    ann: bool = False,
) -> dict[str, Any]:
    """``where``: (server URL, schema), or a SQLite store's directory."""
    rng = random.Random(seed + 1)
    sets = {"short": short_queries(rng, queries)}
    if long:
        sets["long"] = long_queries(rng, queries)
    with tempfile.TemporaryDirectory() as tmp:
        if isinstance(where, Path):
            home, name = where, str(where)
            env = {"KIOKU_RETRIEVAL__ANN_MIN_VECTORS": "1" if ann else "0"}
        else:
            home, name = Path(tmp), where[1]
            env = {"KIOKU_STORE_URL": where[0], "KIOKU_STORE__SCHEMA": where[1]}
        with Kioku.open(home, env=env) as ahead:
            size = ahead.store.count(MemoryFilter())
            if not size:
                raise SystemExit(
                    f"{name} holds no memories: fill it first, e.g. with "
                    "benchmarks/recall_scale.py [--store-url URL] --store DIR"
                )
            if ann:
                ahead.store.save_vector_cache(ahead.embedder.model_id, wait=True)
            if not ahead.store.parallel_search:
                raise SystemExit("this store runs its searches in line: nothing to compare")
            config = ahead.config
            in_line = Kioku(
                ahead.store,
                replace(config, store=replace(config.store, parallel_search=False)),
                embedder=ahead.embedder,
                analyzer=ahead.analyzer,
            )
            kiokus = {"ahead": ahead, "in_line": in_line}
            for texts in sets.values():  # the index's pages into the server's buffers
                for text in texts:
                    ahead.recall(text, mark=False)
            results: dict[str, Any] = {"store": name, "memories": size, "rounds": rounds}
            for set_name, texts in sets.items():
                spent: dict[str, list[float]] = {name: [] for name in kiokus}
                for r in range(rounds):
                    for n, text in enumerate(texts):
                        order = list(kiokus) if (n + r) % 2 == 0 else list(reversed(kiokus))
                        for name in order:
                            t0 = time.perf_counter()
                            kiokus[name].recall(text, mark=False)
                            spent[name].append(time.perf_counter() - t0)
                a, b = _series(spent["ahead"]), _series(spent["in_line"])
                results[set_name] = {
                    "queries": len(texts) * rounds,
                    "ahead": a,
                    "in_line": b,
                    "ratio_p50": round(a["p50"] / b["p50"], 3),
                    "ratio_p95": round(a["p95"] / b["p95"], 3),
                }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store-url", help="libpq URL of the server")
    parser.add_argument("--schema", help="a schema holding a filled store")
    parser.add_argument("--home", type=Path, help="a SQLite store's directory instead")
    parser.add_argument("--ann", action="store_true", help="SQLite: search through the graph")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--long", action="store_true", help="also time 30-60 word queries")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.queries < 4 or args.rounds < 1:
        parser.error("--queries must be at least 4 and --rounds at least 1")
    if (args.home is None) == (args.store_url is None) or (args.store_url and not args.schema):
        parser.error("give --home DIR, or --store-url URL with --schema NAME")
    if args.home is not None and not (args.home / "memories.db").is_file():
        parser.error(f"--home: no memories.db in {args.home}")
    where = args.home if args.home is not None else (args.store_url, args.schema)
    results = run(where, args.queries, args.long, args.rounds, args.seed, args.ann)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{results['store']}: {results['memories']:,} memories, {results['rounds']} rounds")
    for set_name in ("short", "long"):
        if set_name not in results:
            continue
        r = results[set_name]
        print(f"  {set_name} queries ({r['queries']} of each series), ms:")
        for name in ("ahead", "in_line"):
            s = r[name]
            print(
                f"    {name:8s} p50 {s['p50']:7.2f}  p25-p75 {s['p25']:.2f}-{s['p75']:.2f}"
                f"  p95 {s['p95']:7.2f}"
            )
        print(f"    ratio ahead / in line: p50 {r['ratio_p50']:.3f}, p95 {r['ratio_p95']:.3f}")


if __name__ == "__main__":
    main()
