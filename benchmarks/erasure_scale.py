#!/usr/bin/env python3
"""What erasing one memory costs in a large store.

    python benchmarks/erasure_scale.py [--size 36500] [--erasures 20] [--store DIR] [--json]

Fills a store with synthetic memories (the generator of ``recall_scale.py``: a spec-like mix of
categories, English and Japanese text, vectors of the configured embedder), then forgets
``--erasures`` random memories one at a time with ``Kioku.erase``, which includes scrubbing
the files: the delete and its tombstone, audit and log rows (one transaction), the merge of
the lexical index, and the checkpoint that truncates the write-ahead log. Prints the median
and the slowest erasure, and the size of the database before and after.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_scale import fill

from kioku import Kioku
from kioku.ports.store import MemoryFilter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=36_500)
    parser.add_argument("--erasures", type=int, default=20)
    parser.add_argument("--store", type=Path, help="keep the filled store here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = args.store or Path(scratch) / "home"
        with Kioku.open(home, env={}) as kioku:
            if kioku.store.count(MemoryFilter()) == 0:
                fill(kioku, args.size, seed=7)
            ids = [m.id for m in kioku.store.iter(MemoryFilter(archived=None))]
            db = kioku.db_path
            assert db is not None
            size_before = db.stat().st_size
            victims = random.Random(3).sample(ids, args.erasures)
            seconds: list[float] = []
            for memory_id in victims:
                t0 = time.perf_counter()
                report = kioku.erase(memory_id)
                seconds.append(time.perf_counter() - t0)
                assert report.scrub.wal_truncated
            size_after = db.stat().st_size
    result = {
        "memories": len(ids),
        "erasures": len(seconds),
        "median_s": round(statistics.median(seconds), 4),
        "max_s": round(max(seconds), 4),
        "db_bytes_before": size_before,
        "db_bytes_after": size_after,
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{result['memories']} memories: erasing one takes {result['median_s'] * 1000:.0f} ms "
            f"(median of {result['erasures']}), {result['max_s'] * 1000:.0f} ms at most; "
            f"database {size_before / 1e6:.1f} MB -> {size_after / 1e6:.1f} MB"
        )


if __name__ == "__main__":
    main()
