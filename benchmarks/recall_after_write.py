#!/usr/bin/env python3
"""Warm recall vs recall right after another writer remembered one memory, two code versions.

    python benchmarks/recall_after_write.py --base OLD_CHECKOUT/src --new src \
        --store KEPT_DIR/n36500-s7 [--rounds 40] [--process-rounds 6]

``KEPT_DIR`` is a store kept by ``benchmarks/recall_scale.py --store KEPT_DIR`` (never changed:
each version works on its own copy). ``OLD_CHECKOUT`` is a checkout of the code to compare with
(for example ``git worktree add /tmp/old COMMIT``). Every process runs with
``KIOKU_NO_AUTO_BATCH=1``, so no batch changes the store while it is timed.

The driver copies the kept store twice (one copy per code version, since the new code
migrates it), starts one worker per version (PYTHONPATH = that version's src) and drives them
round by round, alternating which goes first. Before a worker starts, a process of its version
makes sure its copy holds a current vector cache file of that version's format. A round: a
warm recall (timed), then a second store object (another Kioku on the same home, or in the
last rounds a `kioku remember` subprocess) remembers one memory, then the worker's recall
(timed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WORKER = r"""
import json, sys, time, random, subprocess, os
from pathlib import Path
import kioku
from kioku import Kioku
home = Path(sys.argv[1])
print(json.dumps({"kioku": kioku.__file__}), flush=True)
reader = Kioku.open(home, env={})
writer = Kioku.open(home, env={})
rng = random.Random(5)
words = ("deploy docker index query postgres sqlite memory batch vector cache latency "
         "release review design garden dog river coffee train birthday mother exam").split()
def text():
    return " ".join(rng.choice(words) for _ in range(3))
for _ in range(3):
    reader.recall(text())
n = 0
for line in sys.stdin:
    cmd = line.strip()
    n += 1
    t0 = time.perf_counter(); reader.recall(text()); warm = time.perf_counter() - t0
    if cmd == "object":
        writer.remember(
            f"note {n} {text()}", f"the user said {text()}", intensity=40, category="work"
        )
    else:
        env = dict(os.environ, KIOKU_HOME=str(home), KIOKU_NO_AUTO_BATCH="1")
        subprocess.run([sys.executable, "-m", "kioku", "remember", "--user",
                        f"note {n} {text()}"], env=env, check=True, capture_output=True)
    t0 = time.perf_counter(); reader.recall(text()); after = time.perf_counter() - t0
    t0 = time.perf_counter(); reader.recall(text()); again = time.perf_counter() - t0
    print(json.dumps({"warm": warm, "after": after, "again": again}), flush=True)
"""


PREPARE = r"""
import sys
from pathlib import Path
from kioku import Kioku
with Kioku.open(Path(sys.argv[1]), env={}) as kioku:
    warm = getattr(kioku, "warm_vector_cache", None)  # absent in the oldest versions
    if warm is not None:
        warm()
"""


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _as_schema_10(db: Path) -> None:
    """The copy for the code before the change log: without schema 11 (only its table)."""
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] == 11:
            conn.execute("DROP TABLE vector_log")
            conn.execute("DELETE FROM schema_migrations WHERE version = 11")
            conn.execute("PRAGMA user_version = 10")
            conn.commit()
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--new", required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--process-rounds", type=int, default=6)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="vlog-bench-") as tmp:
        workers = {}
        for name, src in (("before", args.base), ("after", args.new)):
            home = Path(tmp) / name
            shutil.copytree(args.store, home)
            if name == "before":
                _as_schema_10(home / "memories.db")
            env = dict(os.environ, PYTHONPATH=src, KIOKU_NO_AUTO_BATCH="1")
            # Each copy starts with a current vector cache file of its version's format (as
            # the last batch leaves it), written by a process of its own, so the worker maps it.
            subprocess.run([sys.executable, "-c", PREPARE, str(home)], env=env, check=True)
            proc = subprocess.Popen(
                [sys.executable, "-c", WORKER, str(home)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
            assert proc.stdout is not None
            print(name, proc.stdout.readline().strip(), flush=True)
            workers[name] = proc
        results: dict[str, dict[str, list[float]]] = {
            name: {"object": [], "process": [], "warm": [], "again": []} for name in workers
        }
        total = args.rounds + args.process_rounds
        for r in range(total):
            mode = "object" if r < args.rounds else "process"
            order = list(workers) if r % 2 == 0 else list(reversed(workers))
            for name in order:
                proc = workers[name]
                assert proc.stdin is not None
                assert proc.stdout is not None
                proc.stdin.write(mode + "\n")
                proc.stdin.flush()
                got = json.loads(proc.stdout.readline())
                results[name]["warm"].append(got["warm"])
                results[name][mode].append(got["after"])
                results[name]["again"].append(got["again"])
        for proc in workers.values():
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait()
    summary = {
        name: {
            key: {
                "n": len(values),
                "p50_ms": round(1000 * statistics.median(values), 1),
                "p95_ms": round(1000 * _p(values, 0.95), 1),
            }
            for key, values in parts.items()
            if values
        }
        for name, parts in results.items()
    }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
