#!/usr/bin/env python3
"""``kioku migrate`` at scale: a synthetic store SQLite -> PostgreSQL -> SQLite, verified.

    nice -n 10 python benchmarks/migrate_scale.py [--size 100000] [--url URL] [--store DIR]
        [--json]

A SQLite store is filled with ``--size`` synthetic memories (``recall_scale.fill``: a mix of
categories and intensities, English and Japanese text, 384-dimensional vectors from the
offline embedder), then copied to a fresh PostgreSQL schema, copied again (which must copy
nothing), and copied back into a new SQLite file. Each copy is the one ``kioku migrate`` runs
(:func:`kioku.service.transfer.copy_store`): it checks the target, copies, and compares every
table's row count and checksum. The times of each run and its rates are printed, and the final
file's checksums are compared with the first's.

Without ``--url`` a PostgreSQL with pgvector is started from the ``pgserver`` package in a
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
from kioku.service.transfer import MigrationReport, copy_store

SCHEMA = "bench_migrate"


@contextmanager
def local_server() -> Iterator[str]:
    """A throwaway PostgreSQL with pgvector (pgserver); its URL."""
    import pgserver
    import psycopg

    directory = Path(tempfile.mkdtemp(prefix="kioku-pg-bench-")) / "data"
    server = pgserver.get_server(directory, cleanup_mode="stop")
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


def timed_copy(source: Any, target: Any) -> tuple[MigrationReport, float]:
    t0 = time.perf_counter()
    try:
        report = copy_store(source, target, progress=_progress)
    finally:
        source.close()
        target.close()
    return report, time.perf_counter() - t0


def summary(report: MigrationReport, seconds: float) -> dict[str, Any]:
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
    }


def run(size: int, url: str, store: Path) -> dict[str, Any]:
    db = store / "memories.db"
    out: dict[str, Any] = {"size": size}
    if not db.exists():
        with Kioku.open(store, env={}) as kioku:
            out["fill_seconds"] = round(fill(kioku, size, seed=7), 1)
    drop_schema(url, SCHEMA)
    there, s1 = timed_copy(open_sqlite_tables(db), open_postgres_tables(url, SCHEMA))
    out["sqlite_to_postgres"] = summary(there, s1)
    again, s2 = timed_copy(open_sqlite_tables(db), open_postgres_tables(url, SCHEMA))
    out["rerun"] = summary(again, s2)
    back_db = store / "back.db"
    back_db.unlink(missing_ok=True)
    back, s3 = timed_copy(open_postgres_tables(url, SCHEMA), open_sqlite_tables(back_db))
    out["postgres_to_sqlite"] = summary(back, s3)
    first = {t.table: (t.source_rows, t.source_checksum) for t in there.tables}
    last = {t.table: (t.target_rows, t.target_checksum) for t in back.tables}
    out["round_trip_equal"] = first == last
    out["memories_checksum"] = first["memories"][1]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--url", help="a PostgreSQL server to use (default: start one)")
    parser.add_argument("--store", type=Path, help="keep the filled SQLite store here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        store = args.store or Path(scratch) / "home"
        if args.url:
            result = run(args.size, args.url, store)
        else:
            with local_server() as url:
                result = run(args.size, url, store)
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
    print(f"  round trip: every table's count and checksum equal: {result['round_trip_equal']}")


if __name__ == "__main__":
    main()
