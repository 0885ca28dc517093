#!/usr/bin/env python3
"""Remembering LoCoMo turns under two code versions, interleaved: speed, or identical stores.

    python benchmarks/ingest_compare.py --base OLD_CHECKOUT/src --new src \
        [--rounds 5] [--data ../shared/data/locomo/locomo_dev.json] [--check] [--batch N] \
        [--workers N] [--base-workers N]

Each run is a subprocess with ``PYTHONPATH`` set to one version's ``src``. It remembers every
turn of every conversation as ``benchmarks/locomo.py`` ingests them: one ``remember_turn`` per
turn with its session's date, each conversation in a fresh home under its own user id, the
offline analyzer and embedder, no batch. The first :data:`WARM` turns of each conversation
are not timed. The versions alternate (base first in odd rounds, new first in even ones);
printed are each version's median and range of turns per second (timed turns over timed
wall time, and per second of the process's CPU time, which a busy machine disturbs less) and
the ratio new / base of the medians.

With ``--batch N`` the new version stores the timed turns the way an import of history
does: ``prepare_turn`` for each, then ``store_turns`` on every ``N`` of them (one
transaction each); the base version still remembers one turn at a time.

With ``--workers N`` the new version imports the timed turns of each conversation as
``kioku import`` does, with ``import_turns(..., batch_size=B, workers=N)`` (``B`` from
``--batch``, default 50): ``N`` processes prepare the turns (``ingest.workers``), the start
of the workers included in the time; ``--base-workers N`` does the same for the base
version. Turns per CPU second are then left out: the workers' CPU is not this process's.
``--base src --new src --base-workers 1 --workers 2`` compares one process with two on
the same tree.

With ``--check`` each version remembers the turns once instead, with its random numbers
(memory ids, version stamps, keys) drawn from one seeded generator, and every row of every
table of the two stores is compared; only columns holding the wall-clock time of the run
(:data:`CLOCK_COLUMNS`) are left out. The check fails unless all rows are equal. With
``--check --batch N`` the stores of the two ways of storing are compared as
:func:`_logical_rows` reads them: what is stored, not how FTS5 lays out its segments (one
flush per transaction) nor the random numbers drawn for cache versions, which the two ways
draw in different numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import re
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

#: Memory ids as kioku makes them.
MEMORY_ID = re.compile(r"mem_[0-9]{8}_[0-9]{6}_[0-9a-f]{8}")
#: Tables of how FTS5 lays the lexical index out (segments, and row sizes by slot).
INDEX_LAYOUT = frozenset({"memories_fts_data", "memories_fts_idx", "memories_fts_docsize"})
#: ``state`` rows of random numbers the store draws for itself: the versions of the vector
#: and lexical caches, and the key of erasure digests (drawn when a store is made, so at
#: another place in the seeded stream once a version stores with fewer draws).
RANDOM_KEYS = frozenset({"vectors_version", "lexical_version", "erasure_key"})

RUN = r"""
import json, sys, time
from datetime import timedelta
from pathlib import Path
data, out, warm, seeded = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
batch = int(sys.argv[6])
workers = int(sys.argv[7])
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
from kioku.service.remember.imports import ImportTurn, import_turns
turns = seconds = cpu = 0.0
for sample in json.loads(Path(data).read_text()):
    conv = sample["conversation"]
    dates = locomo.session_dates(conv)
    clock = FixedClock(locomo.question_time(conv))
    home = Path(out) / sample["sample_id"]
    with Kioku.open(home, user_id=sample["sample_id"], clock=clock, env={}) as kioku:
        done = 0
        ready = []
        for number in sorted(dates):
            for offset, turn in enumerate(conv.get(f"session_{number}", [])):
                at = dates[number] + timedelta(seconds=30 * offset)
                if done == warm:
                    t0, c0 = time.perf_counter(), time.process_time()
                said = dict(
                    at=at, session_id=f"s{number}",
                    source_ids=[locomo.turn_id(turn)], source_timestamps=[at],
                )
                if workers and done >= warm:
                    text, turn_id = locomo.turn_text(turn), locomo.turn_id(turn)
                    ready.append(ImportTurn(done, text, "", at, f"s{number}", turn_id))
                elif batch == 1 or done < warm:
                    kioku.remember_turn(locomo.turn_text(turn), "", **said)
                else:
                    ready.append(kioku.prepare_turn(locomo.turn_text(turn), "", **said))
                    if len(ready) == batch:
                        kioku.store_turns(ready)
                        ready = []
                done += 1
        if workers:
            import_turns(kioku, ready, batch_size=batch, workers=workers)
        elif ready:
            kioku.store_turns(ready)
        seconds += time.perf_counter() - t0
        cpu += time.process_time() - c0
        turns += done - warm
print(json.dumps({"turns": turns, "seconds": seconds, "cpu": cpu}))
"""


def _run(
    src: str, data: Path, out: Path, *, seeded: bool = False, batch: int = 1, workers: int = 0
) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")}
    env["PYTHONPATH"] = str(Path(src).resolve())
    args = [str(data), str(out), str(WARM), "1" if seeded else "0", str(HERE), str(batch)]
    args.append(str(workers))
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


def _logical_rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """:func:`_rows` as far as what is stored goes, not how: memory ids renamed by the order
    of their memories (kind, time, text), the lexical index as its ``(memory, terms)`` rows
    (not its segments, nor the slots hashed from ids), and the bookkeeping of cache versions
    (``vector_log`` as its memory ids) and the random
    numbers of :data:`RANDOM_KEYS` left out."""
    conn = sqlite3.connect(db)
    order = conn.execute(
        "SELECT id FROM memories ORDER BY kind, created_utc, trigger, content, source_ids"
    ).fetchall()
    names = {str(memory_id): f"memory-{n}" for n, (memory_id,) in enumerate(order)}
    conn.close()

    def renamed(value: object) -> object:
        return (
            MEMORY_ID.sub(lambda m: names.get(m.group(), m.group()), value)
            if isinstance(value, str)
            else value
        )

    found: dict[str, list[tuple[object, ...]]] = {}
    for table, rows in _rows(db).items():
        if table in INDEX_LAYOUT:
            continue
        if table == "memories_fts_content":  # (slot, memory id, terms)
            rows = [row[1:] for row in rows]
        if table == "vector_log":  # (seq, version, memory id, reload)
            rows = [row[2:] for row in rows]
        if table == "state":
            rows = [row for row in rows if row[0] not in RANDOM_KEYS]
        found[table] = sorted((tuple(renamed(v) for v in row) for row in rows), key=repr)
    return found


def check(base: str, new: str, data: Path, sides: dict[str, tuple[int, int]]) -> bool:
    """Whether both versions leave the same rows in every table of every store (storing in
    batches or importing, ``sides``: each version's batch and workers, the same rows as
    :func:`_logical_rows` reads them)."""
    same = True
    read = _rows if set(sides.values()) == {(1, 0)} else _logical_rows
    with tempfile.TemporaryDirectory() as tmp:
        homes = {"base": Path(tmp) / "base", "new": Path(tmp) / "new"}
        for side, src in (("base", base), ("new", new)):
            batch, workers = sides[side]
            _run(src, data, homes[side], seeded=True, batch=batch, workers=workers)
        for store in sorted(homes["base"].glob("*/memories.db")):
            conv = store.parent.name
            old, now = read(store), read(homes["new"] / conv / "memories.db")
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
    parser.add_argument(
        "--batch",
        type=int,
        default=None,
        help="the new version stores turns this many at a time (prepare_turn, store_turns); "
        "with --workers, the import's batch (default 50)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=0,
        help="the new version imports each conversation with import_turns and this many "
        "preparing processes",
    )
    parser.add_argument(
        "--base-workers",
        type=int,
        default=0,
        help="the base version imports likewise, with this many preparing processes",
    )
    args = parser.parse_args()
    batch = args.batch or (50 if args.workers or args.base_workers else 1)
    # Each side's (batch, workers), by label.
    sides = {
        "base": (batch, args.base_workers) if args.base_workers else (1, 0),
        "new": (batch, args.workers),
    }
    if args.check:
        same = check(args.base, args.new, args.data, sides)
        print("identical" if same else "the stores differ")
        sys.exit(0 if same else 1)
    runs = {"base": args.base, "new": args.new}
    speeds: dict[str, dict[str, list[float]]] = {
        label: {"seconds": [], "cpu": []} for label in runs
    }
    for round_ in range(args.rounds):
        order = ("base", "new") if round_ % 2 == 0 else ("new", "base")
        for label in order:
            side_batch, side_workers = sides[label]
            with tempfile.TemporaryDirectory() as tmp:
                result = _run(
                    runs[label], args.data, Path(tmp), batch=side_batch, workers=side_workers
                )
            for clock in ("seconds", "cpu"):
                speeds[label][clock].append(result["turns"] / result[clock])
            print(
                f"round {round_ + 1} {label}: {speeds[label]['seconds'][-1]:.0f} turns/s",
                file=sys.stderr,
            )
    print(f"{int(result['turns'])} timed turns a run, {args.rounds} runs a version")
    clocks = [("seconds", "wall")]
    if not args.workers and not args.base_workers:
        clocks.append(("cpu", "CPU"))
    for clock, name in clocks:
        medians = {}
        for label in ("base", "new"):
            values = speeds[label][clock]
            medians[label] = statistics.median(values)
            print(
                f"{label}: {medians[label]:.0f} turns per {name} second, median "
                f"({min(values):.0f}-{max(values):.0f})"
            )
        print(f"new / base ({name}): {medians['new'] / medians['base']:.2f}x")


if __name__ == "__main__":
    main()
