#!/usr/bin/env python3
"""One nightly batch of the same store under two code versions, interleaved.

    python benchmarks/batch_compare.py --base OLD_CHECKOUT/src --new src \
        [--size 36500] [--rounds 3] [--store KEPT_DIR]

The store is the settled one ``benchmarks/batch_scale.py`` builds (``--size`` memories, 100 a
day), made once (kept in ``--store`` when given) and copied afresh for every run. Each run is
a subprocess with ``PYTHONPATH`` set to one version's ``src``, the batch's consolidation off
and no background batch, so both versions start from the same bytes. The versions alternate
(base first in odd rounds, new first in even ones). Printed: each version's median and range
of the batch's wall time, the ratio new / base of the medians, and whether every run left
the same relations and levels. Before the clock starts, each run makes sure the copy holds a
current vector cache file of its version's format, as the previous batch would have left it
(versions whose formats differ cannot share the kept file), in a process of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

RUN = r"""
import json, shutil, sqlite3, sys, tempfile, time
from datetime import datetime, timedelta
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import batch_scale as bs
from kioku import Kioku
from kioku.adapters.clock import FixedClock
keep = Path(sys.argv[1])
last = datetime.fromisoformat((keep / "last_batch").read_text().strip())
with tempfile.TemporaryDirectory() as tmp:
    home = Path(tmp) / "home"
    shutil.copytree(keep, home)
    now = last + timedelta(days=1, hours=1)
    # As the last batch left it: the vector cache file of this version's format, current.
    # (A no-op when the kept file is already one; the timed process maps it afresh.)
    with Kioku.open(home, env=bs.NO_CONSOLIDATION, clock=FixedClock(last)) as kioku:
        kioku.warm_vector_cache()
    with Kioku.open(home, env=bs.NO_CONSOLIDATION, clock=FixedClock(now)) as kioku:
        kioku.store.get_state("batch_last_day")  # opened (and migrated) before the clock starts
        t0 = time.perf_counter()
        kioku.batch(now=now)
        seconds = time.perf_counter() - t0
    conn = sqlite3.connect(home / "memories.db")
    relations = conn.execute("SELECT * FROM relations ORDER BY 1, 2, 3").fetchall()
    levels = conn.execute("SELECT current_level, count(*) FROM memories GROUP BY 1").fetchall()
    conn.close()
print(json.dumps({"seconds": seconds, "outcome": repr((relations, levels))}))
"""

BUILD = r"""
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
import batch_scale as bs
from kioku import Kioku
keep = Path(sys.argv[1])
keep.mkdir(parents=True, exist_ok=True)
with Kioku.open(keep, env={"KIOKU_NO_AUTO_BATCH": "1"}) as kioku:
    last = bs.build(kioku, int(sys.argv[2]), 100, 1)
(keep / "last_batch").write_text(last.isoformat())
"""


def _env(src: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")}
    env["PYTHONPATH"] = str(Path(src).resolve())
    env["KIOKU_NO_AUTO_BATCH"] = "1"
    return env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="src directory of the code to compare with")
    parser.add_argument("--new", required=True, help="src directory of the code to measure")
    parser.add_argument("--size", type=int, default=36_500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", type=Path, help="keep the built store here and reuse it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        keep = args.store or Path(tmp) / "store"
        if not (keep / "last_batch").exists():
            # Built by the new code; a base that cannot open its schema is not comparable.
            subprocess.run(
                [sys.executable, "-c", BUILD, str(keep), str(args.size), str(HERE)],
                env=_env(args.new),
                check=True,
            )
        times: dict[str, list[float]] = {"base": [], "new": []}
        outcomes: set[str] = set()
        for n in range(args.rounds):
            order = ("base", "new") if n % 2 == 0 else ("new", "base")
            for name in order:
                src = args.base if name == "base" else args.new
                done = subprocess.run(
                    [sys.executable, "-c", RUN, str(keep), str(HERE)],
                    env=_env(src),
                    check=True,
                    capture_output=True,
                    text=True,
                )
                result = json.loads(done.stdout.strip().splitlines()[-1])
                times[name].append(result["seconds"])
                outcomes.add(result["outcome"])
                print(f"round {n + 1} {name}: {result['seconds']:.2f} s", flush=True)
    base, new = statistics.median(times["base"]), statistics.median(times["new"])
    for name, values in times.items():
        print(
            f"{name}: median {statistics.median(values):.2f} s, "
            f"range {min(values):.2f}-{max(values):.2f} s over {len(values)} runs"
        )
    print(f"new / base: {new / base:.2f}")
    print("same relations and levels in every run" if len(outcomes) == 1 else "OUTCOMES DIFFER")


if __name__ == "__main__":
    main()
