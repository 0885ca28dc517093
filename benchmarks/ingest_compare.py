#!/usr/bin/env python3
"""Remembering LoCoMo turns under two code versions, interleaved: speed, or identical stores.

    python benchmarks/ingest_compare.py --base OLD_CHECKOUT/src --new src \
        [--rounds 5] [--data ../shared/data/locomo/locomo_dev.json] [--check]

Each run is a subprocess with ``PYTHONPATH`` set to one version's ``src``. It remembers every
turn of every conversation as ``benchmarks/locomo.py`` ingests them: one ``remember_turn`` per
turn with its session's date, each conversation in a fresh home under its own user id, the
offline analyzer and embedder, no batch. The first :data:`WARM` turns of each conversation
are not timed. The versions alternate (base first in odd rounds, new first in even ones);
printed are each version's median and range of turns per second (timed turns over timed
wall time, and per second of the process's CPU time, which a busy machine disturbs less) and
the ratio new / base of the medians.

With ``--check`` each version remembers the turns once instead, with its random numbers
(memory ids, version stamps, keys) drawn from one seeded generator, and every row of every
table of the two stores is compared; only columns holding the wall-clock time of the run
(:data:`CLOCK_COLUMNS`) are left out. The check fails unless all rows are equal.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
#: Turns of each conversation remembered before its clock starts.
WARM = 5
#: ``(table, column)`` pairs that hold the time a row was written (not the turn's time).
CLOCK_COLUMNS = frozenset(
    {("memories", "updated_at"), ("relations", "created_at"), ("schema_migrations", "applied_at")}
)

RUN = r"""
import json, sys, time
from datetime import timedelta
from pathlib import Path
data, out, warm, seeded = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
if seeded:  # every random number of the run from one seeded generator
    import os, random, secrets
    rng = random.Random(20240501)
    secrets.token_hex = lambda n=32: rng.randbytes(n).hex()
    secrets.token_bytes = lambda n=32: rng.randbytes(n)
    secrets.randbelow = lambda n: rng.randrange(n)
    os.urandom = lambda n: rng.randbytes(n)
sys.path.insert(0, sys.argv[5])
import locomo
from kioku import Kioku
from kioku.adapters.clock import FixedClock
turns = seconds = cpu = 0.0
for sample in json.loads(Path(data).read_text()):
    conv = sample["conversation"]
    dates = locomo.session_dates(conv)
    clock = FixedClock(locomo.question_time(conv))
    home = Path(out) / sample["sample_id"]
    with Kioku.open(home, user_id=sample["sample_id"], clock=clock, env={}) as kioku:
        done = 0
        for number in sorted(dates):
            for offset, turn in enumerate(conv.get(f"session_{number}", [])):
                at = dates[number] + timedelta(seconds=30 * offset)
                if done == warm:
                    t0, c0 = time.perf_counter(), time.process_time()
                kioku.remember_turn(
                    locomo.turn_text(turn), "", at=at, session_id=f"s{number}",
                    source_ids=[locomo.turn_id(turn)], source_timestamps=[at],
                )
                done += 1
        seconds += time.perf_counter() - t0
        cpu += time.process_time() - c0
        turns += done - warm
print(json.dumps({"turns": turns, "seconds": seconds, "cpu": cpu}))
"""


def _run(src: str, data: Path, out: Path, *, seeded: bool = False) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")}
    env["PYTHONPATH"] = str(Path(src).resolve())
    args = [str(data), str(out), str(WARM), "1" if seeded else "0", str(HERE)]
    done = subprocess.run(
        [sys.executable, "-c", RUN, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"the run with {src} failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table of ``db``, sorted, without the wall-clock columns."""
    conn = sqlite3.connect(db)
    tables = [
        str(name) for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    ]
    found = {}
    for table in tables:
        columns = [str(row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")')]
        kept = [c for c in columns if (table, c) not in CLOCK_COLUMNS]
        listed = ", ".join(f'"{c}"' for c in kept)
        found[table] = sorted(conn.execute(f'SELECT {listed} FROM "{table}"').fetchall(), key=repr)
    conn.close()
    return found


def check(base: str, new: str, data: Path) -> bool:
    """Whether both versions leave the same rows in every table of every store."""
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        homes = {src: Path(tmp) / name for src, name in ((base, "base"), (new, "new"))}
        for src, home in homes.items():
            _run(src, data, home, seeded=True)
        for store in sorted(homes[base].glob("*/memories.db")):
            conv = store.parent.name
            old, now = _rows(store), _rows(homes[new] / conv / "memories.db")
            for table in sorted(set(old) | set(now)):
                a, b = old.get(table), now.get(table)
                if a != b:
                    same = False
                    count = "missing" if a is None or b is None else f"{len(a)} vs {len(b)} rows"
                    print(f"{conv} {table}: DIFFERENT ({count})")
            rows = sum(len(v) for v in old.values())
            print(f"{conv}: {len(old)} tables, {rows} rows compared")
    return same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the src directory of the old version")
    parser.add_argument("--new", required=True, help="the src directory of the new version")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--check", action="store_true", help="compare the stores row by row")
    args = parser.parse_args()
    if args.check:
        same = check(args.base, args.new, args.data)
        print("identical" if same else "the stores differ")
        sys.exit(0 if same else 1)
    speeds: dict[str, dict[str, list[float]]] = {
        src: {"seconds": [], "cpu": []} for src in (args.base, args.new)
    }
    for round_ in range(args.rounds):
        order = (args.base, args.new) if round_ % 2 == 0 else (args.new, args.base)
        for src in order:
            with tempfile.TemporaryDirectory() as tmp:
                result = _run(src, args.data, Path(tmp))
            for clock in ("seconds", "cpu"):
                speeds[src][clock].append(result["turns"] / result[clock])
            print(
                f"round {round_ + 1} {src}: {speeds[src]['seconds'][-1]:.0f} turns/s",
                file=sys.stderr,
            )
    print(f"{int(result['turns'])} timed turns a run, {args.rounds} runs a version")
    for clock, name in (("seconds", "wall"), ("cpu", "CPU")):
        medians = {}
        for label, src in (("base", args.base), ("new", args.new)):
            values = speeds[src][clock]
            medians[label] = statistics.median(values)
            print(
                f"{label}: {medians[label]:.0f} turns per {name} second, median "
                f"({min(values):.0f}-{max(values):.0f})"
            )
        print(f"new / base ({name}): {medians['new'] / medians['base']:.2f}x")


if __name__ == "__main__":
    main()
