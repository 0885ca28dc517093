#!/usr/bin/env python3
"""The k-th best screening score of the SQLite store's exact vector search: a partition of
every score against ``vector_scan.kth_best`` (a strided sample's threshold first), interleaved.

    python benchmarks/vector_kth.py [--sizes 36500,200000,1000000] [--limit 100] [--rounds 40]

Each round draws a fresh array of scores of the given size (Gaussian, a third of them 0 as
for rows sharing no component with a short query, a tenth -inf as for rows a filter leaves
out), then times both ways on it, the order alternating; the two answers must be equal.
Printed per size: each way's median and quartiles in milliseconds, and the ratio of the
medians. Arrays below ``vector_scan``'s sampling size take the partition both ways.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from kioku.adapters.store.sqlite.vector_scan import kth_best


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4)
    return q[0] * 1000, statistics.median(values) * 1000, q[2] * 1000


def run(size: int, limit: int, rounds: int, seed: int) -> dict[str, float]:
    rng = np.random.default_rng(seed)
    spent: dict[str, list[float]] = {"partition": [], "kth_best": []}
    for r in range(rounds):
        scores = (rng.standard_normal(size) * 0.1).astype(np.float32)
        scores[rng.random(size) < 1 / 3] = 0.0
        scores[rng.random(size) < 0.1] = -np.inf
        answers = {}
        for name in ("partition", "kth_best") if r % 2 == 0 else ("kth_best", "partition"):
            t0 = time.perf_counter()
            if name == "partition":
                answers[name] = float(np.partition(scores, size - limit)[size - limit])
            else:
                answers[name] = kth_best(scores, limit)
            spent[name].append(time.perf_counter() - t0)
        if answers["partition"] != answers["kth_best"]:
            raise SystemExit(f"different answers at size {size}: {answers}")
    low_p, mid_p, high_p = _quartiles(spent["partition"])
    low_k, mid_k, high_k = _quartiles(spent["kth_best"])
    return {
        "partition_p50": mid_p,
        "partition_p25": low_p,
        "partition_p75": high_p,
        "kth_best_p50": mid_k,
        "kth_best_p25": low_k,
        "kth_best_p75": high_k,
        "ratio": mid_k / mid_p,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="36500,200000,1000000")
    parser.add_argument("--limit", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.rounds < 2 or args.limit < 1 or any(size < args.limit for size in sizes):
        parser.error("--rounds must be at least 2, and every size at least --limit (>= 1)")
    for size in sizes:
        r = run(size, args.limit, args.rounds, args.seed)
        print(
            f"{size:>9,} scores, limit {args.limit}: partition {r['partition_p50']:.2f} ms "
            f"({r['partition_p25']:.2f}-{r['partition_p75']:.2f}), kth_best "
            f"{r['kth_best_p50']:.2f} ms ({r['kth_best_p25']:.2f}-{r['kth_best_p75']:.2f}), "
            f"ratio {r['ratio']:.3f}"
        )


if __name__ == "__main__":
    main()
