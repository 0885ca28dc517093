#!/usr/bin/env python3
"""Concurrent writers on one store: SQLite's file and a PostgreSQL schema, in the same run.

    python benchmarks/postgres_scale.py writers [--processes 8] [--seconds 60]
        [--store-url postgresql://...] [--schema NAME] [--json]
    python benchmarks/postgres_scale.py load [--size 36500] [--singles 200]
        [--store-url postgresql://...] [--schema NAME] [--hnsw 16/128,32/200] [--json]

    python benchmarks/postgres_scale.py hnsw --store-url postgresql://... [--size 100000]
        [--ef 200,400,800,1000] [--m 16] [--ef-construction 128] [--schema NAME]
        [--maintenance-work-mem 512MB] [--rounds 1] [--kinds vector,halfvec]

``hnsw`` measures the index alone: ``--size`` vectors of ``recall_scale.py``'s texts (the
configured embedder) in a bare table of the schema ``NAME`` (dropped first), one HNSW index
(cosine) of each of ``--kinds`` built with ``--m`` and ``--ef-construction`` (timed, and its
size), then recall@10 against exact numpy search and the median and 95th percentile query
time for each ``hnsw.ef_search`` of ``--ef``, over 100 of ``recall_scale.py``'s short
queries, the kinds taking turns query by query. A ``halfvec`` search is timed as kioku runs
it: ten more rows than asked for, ranked again by exact distance. Each ``ef_search`` first
runs the queries once untimed (so the pages the walk needs are in PostgreSQL's buffers, as on
a server in use) and then ``--rounds`` times timed; the percentiles are over all timed queries.

``load`` times ``Store.add_many`` alone: ``--size`` synthetic memories (``recall_scale.py``'s,
with the configured embedder's vectors, made before the clock starts) go into an empty store
in growing batches (each as large as what is there, from 5,000), then ``--singles`` more one
``add`` at a time (a memory joining a built index), on SQLite and on PostgreSQL; the single
adds of all series take turns. ``--hnsw`` makes one PostgreSQL series per index setting
(``m/ef_construction``, each in the schema ``NAME_<n>``).

``--processes`` separate Python processes each open kioku on the same store and call
``Kioku.remember`` (analysis, embedding and the store's transaction, as a user's turn does)
as fast as they can for ``--seconds``. Each process writes the id of every memory whose
``remember`` returned to a file as soon as it returns; the clock starts once every process
has opened the store. Afterwards the parent reads the store
and counts the acknowledged memories that are not there (lost: must be 0) and the memories
there that no process acknowledged. SQLite runs first (one home, the file
``memories.db``), then PostgreSQL (the schema ``NAME``, dropped first) when ``--store-url``
is given. Without a URL, only SQLite runs (for both commands).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from kioku import Kioku

_CATEGORIES = ("casual", "work", "decision", "emotional")


def _writer(
    home: str, env: dict[str, str], worker: int, seconds: float, out: str, ready: Any
) -> None:
    """One writer process: once every writer has opened the store (``ready``, a barrier),
    remember for ``seconds``, logging each acknowledged id."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    with Kioku.open(Path(home), env=env) as kioku, open(out, "w", encoding="utf-8") as log:
        ready.wait()
        until = time.time() + seconds
        n = 0
        while time.time() < until:
            n += 1
            t0 = time.perf_counter()
            try:
                memory = kioku.remember(
                    f"writer {worker} turn {n} about the deploy",
                    f"process {worker} wrote memory {n}; the release and the schema migration",
                    intensity=20 + (n * 7 + worker) % 70,
                    category=_CATEGORIES[(n + worker) % len(_CATEGORIES)],
                )
            except Exception as exc:  # counted and reported: the run goes on
                name = type(exc).__name__
                errors[name] = errors.get(name, 0) + 1
                continue
            latencies.append(time.perf_counter() - t0)
            log.write(json.dumps({"id": memory.id}) + "\n")
            log.flush()
        log.write(json.dumps({"latencies": latencies, "errors": errors}) + "\n")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))] * 1000 if ordered else 0.0


def run_writers(
    label: str, home: Path, env: dict[str, str], processes: int, seconds: float
) -> dict[str, Any]:
    """``processes`` writers on one store for ``seconds``; what was acknowledged and kept."""
    with Kioku.open(home, env=env) as kioku:  # creates (and migrates) the store once
        before = {m.id for m in kioku.store.iter(_everything())}
    logs = [home / f"writer-{label}-{w}.jsonl" for w in range(processes)]
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(processes + 1)
    workers = [
        context.Process(target=_writer, args=(str(home), env, w, seconds, str(logs[w]), ready))
        for w in range(processes)
    ]
    for process in workers:
        process.start()
    ready.wait()
    t0 = time.perf_counter()
    for process in workers:
        process.join()
    wall = time.perf_counter() - t0
    acked: list[str] = []
    latencies: list[float] = []
    errors: dict[str, int] = {}
    for path in logs:
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if "id" in entry:
                acked.append(entry["id"])
            else:
                latencies.extend(entry["latencies"])
                for name, count in entry["errors"].items():
                    errors[name] = errors.get(name, 0) + count
    with Kioku.open(home, env=env) as kioku:
        stored = {m.id for m in kioku.store.iter(_everything())} - before
    return {
        "store": label,
        "processes": processes,
        "seconds": seconds,
        "wall_seconds": round(wall, 1),
        "exit_codes": [p.exitcode for p in workers],
        "acknowledged": len(acked),
        "duplicates": len(acked) - len(set(acked)),
        "lost": len(set(acked) - stored),
        "unacknowledged_but_stored": len(stored - set(acked)),
        "errors": errors,
        "writes_per_second": round(len(acked) / seconds, 1),
        "remember_p50_ms": round(_percentile(latencies, 0.5), 1),
        "remember_p95_ms": round(_percentile(latencies, 0.95), 1),
        "remember_mean_ms": round(statistics.mean(latencies) * 1000, 1) if latencies else 0.0,
    }


def _everything() -> Any:
    from kioku.ports.store import MemoryFilter

    return MemoryFilter()


def _drop_schema(url: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def _memories(kioku: Kioku, size: int, seed: int) -> list[Any]:
    """``size`` memories as ``recall_scale.py`` makes them, with their vectors."""
    import recall_scale

    made: list[Any] = []
    add_many = kioku.store.add_many
    kioku.store.add_many = made.extend  # type: ignore[method-assign]
    try:
        recall_scale.fill(kioku, size, seed)
    finally:
        kioku.store.add_many = add_many  # type: ignore[method-assign]
    return made


def _bulk(store: Any, bulk: list[Any]) -> tuple[float, list[float]]:
    """``add_many`` of ``bulk`` in growing batches (each as large as what is there, from
    5,000): the seconds in all and of each batch."""
    t0 = time.perf_counter()
    start = 0
    batches = []
    while start < len(bulk):
        size = max(5000, start)
        b0 = time.perf_counter()
        store.add_many(bulk[start : start + size])
        batches.append(round(time.perf_counter() - b0, 1))
        start += size
    return time.perf_counter() - t0, batches


def run_load(
    series: dict[str, tuple[Path, dict[str, str]]], memories: list[Any], singles: int
) -> list[dict[str, Any]]:
    """For each series (a label, its home and environment): time ``add_many`` of
    ``memories`` minus the last ``singles``; then ``add`` each of those on every series in
    turn (the order alternating), so the single adds of all series share the machine's load."""
    bulk, single = memories[: len(memories) - singles], memories[len(memories) - singles :]
    with ExitStack() as stack:
        stores = {
            label: stack.enter_context(Kioku.open(home, env=env)).store
            for label, (home, env) in series.items()
        }
        loaded = {label: _bulk(store, bulk) for label, store in stores.items()}
        times: dict[str, list[float]] = {label: [] for label in stores}
        for n, memory in enumerate(single):
            order = list(stores) if n % 2 == 0 else list(reversed(stores))
            for label in order:
                s0 = time.perf_counter()
                stores[label].add(memory)
                times[label].append(time.perf_counter() - s0)
    return [
        {
            "store": label,
            "memories": len(bulk),
            "bulk_seconds": round(loaded[label][0], 1),
            "bulk_ms_per_memory": round(loaded[label][0] / max(len(bulk), 1) * 1000, 2),
            "batch_seconds": loaded[label][1],
            "singles": len(single),
            "single_p50_ms": round(_percentile(times[label], 0.5), 1),
            "single_p95_ms": round(_percentile(times[label], 0.95), 1),
        }
        for label in stores
    ]


def run_hnsw(args: argparse.Namespace) -> dict[str, Any]:
    """Build an HNSW index of each of ``args.kinds`` over ``args.size`` vectors and sweep
    ``hnsw.ef_search``, the kinds' queries taking turns."""
    import random

    import numpy as np
    import psycopg
    import recall_scale
    from psycopg import sql

    from kioku.adapters.store.postgres.codec import encode_vector, vector_param
    from kioku.adapters.store.postgres.vectors import RERANK_SPARE, indexed_expression

    rng = random.Random(args.seed)
    texts = []
    for _ in range(args.size):
        trigger, content = recall_scale._text(rng)
        texts.append(f"{trigger}\n{content}")
    queries = recall_scale.short_queries(random.Random(args.seed + 1), 80)[:100]
    with tempfile.TemporaryDirectory() as tmp, Kioku.open(Path(tmp), env={}) as kioku:
        embed = kioku.embedder.embed
        matrix = np.vstack([embed(texts[i : i + 5000]) for i in range(0, len(texts), 5000)])
        wanted = embed(queries)
    dim = matrix.shape[1]
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    _drop_schema(args.store_url, args.schema)
    with psycopg.connect(args.store_url, autocommit=True) as conn:
        name = sql.Identifier(args.schema)
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")  # a new server has none
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(name))
        conn.execute(sql.SQL("SET search_path TO {}, public").format(name))
        conn.execute("CREATE TABLE vectors (id integer PRIMARY KEY, embedding vector)")
        with conn.cursor() as cursor, cursor.copy("COPY vectors FROM STDIN") as copy:
            for row, values in enumerate(matrix):
                copy.write_row((row, encode_vector(values.tolist())))
        conn.execute(
            sql.SQL("SET maintenance_work_mem = {}").format(sql.Literal(args.maintenance_work_mem))
        )
        kinds = [kind for kind in args.kinds.split(",") if kind]
        built: dict[str, dict[str, float]] = {}
        for kind in kinds:
            t0 = time.perf_counter()
            conn.execute(
                sql.SQL(
                    "CREATE INDEX {name} ON vectors USING hnsw (({indexed}) "
                    "{ops}) WITH (m = {m}, ef_construction = {efc})"
                ).format(
                    name=sql.Identifier(f"vectors_{kind}"),
                    indexed=sql.SQL(indexed_expression(kind, dim, "embedding")),
                    ops=sql.SQL(f"{kind}_cosine_ops"),
                    m=sql.Literal(args.m),
                    efc=sql.Literal(args.ef_construction),
                )
            )
            seconds = time.perf_counter() - t0
            row = conn.execute("SELECT pg_relation_size(%s)", (f"vectors_{kind}",)).fetchone()
            size_mb = int(row[0]) / 2**20 if row is not None else 0.0
            built[kind] = {"build_seconds": round(seconds, 1), "index_mb": round(size_mb, 1)}
        conn.execute("ANALYZE vectors")
        # What kioku's search asks of each kind: a halfvec walk returns RERANK_SPARE more rows,
        # ranked again by the exact distance of the stored vector.
        searches = {
            kind: sql.SQL(
                "SELECT id, embedding::vector({dim}) <=> %s::vector({dim}) FROM vectors "
                "ORDER BY {walked} <=> {query} LIMIT {limit}"
            ).format(
                dim=sql.Literal(dim),
                walked=sql.SQL(indexed_expression(kind, dim, "embedding")),
                query=sql.SQL(indexed_expression(kind, dim, "%s")),
                limit=sql.Literal(10 + (RERANK_SPARE if kind == "halfvec" else 0)),
            )
            for kind in kinds
        }
        kept = [query for query in wanted if np.any(query)]
        tenths = []
        for query in kept:
            exact = unit @ (query / np.linalg.norm(query))
            tenths.append(np.partition(exact, exact.size - 10)[exact.size - 10])
        sweep = []
        for ef in (int(v) for v in args.ef.split(",") if v):
            conn.execute(sql.SQL("SET hnsw.ef_search = {}").format(sql.Literal(ef)))
            found = dict.fromkeys(kinds, 0)
            times: dict[str, list[float]] = {kind: [] for kind in kinds}
            total = 0
            for timed in [False] + [True] * args.rounds:
                for n, (query, tenth) in enumerate(zip(kept, tenths, strict=True)):
                    param = vector_param(query.tolist())
                    # The kinds take turns, each going first on every other query.
                    for kind in kinds[n % len(kinds) :] + kinds[: n % len(kinds)]:
                        t0 = time.perf_counter()
                        rows = conn.execute(searches[kind], (param, param)).fetchall()
                        best = [row for row, _ in sorted(rows, key=lambda r: float(r[1]))[:10]]
                        elapsed = time.perf_counter() - t0
                        if not timed:
                            continue
                        times[kind].append(elapsed)
                        # The rows found against the exact tenth best (a tie counts).
                        scores = unit[best] @ (query / np.linalg.norm(query))
                        found[kind] += int(np.count_nonzero(scores >= tenth - 1e-5))
                    total += 10 if timed else 0
            sweep.append(
                {
                    "ef_search": ef,
                    **{
                        kind: {
                            "recall_at_10": round(found[kind] / max(total, 1), 3),
                            "query_p50_ms": round(_percentile(times[kind], 0.5), 1),
                            "query_p95_ms": round(_percentile(times[kind], 0.95), 1),
                        }
                        for kind in kinds
                    },
                }
            )
    return {
        "vectors": args.size,
        "dim": dim,
        "m": args.m,
        "ef_construction": args.ef_construction,
        "indexes": built,
        "rounds": args.rounds,
        "sweep": sweep,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    writers = sub.add_parser("writers", help="concurrent writer processes on one store")
    writers.add_argument("--processes", type=int, default=8)
    writers.add_argument("--seconds", type=float, default=60.0)
    writers.add_argument("--store-url", help="also run on this PostgreSQL server (libpq URL)")
    writers.add_argument("--schema", default="writers_scale")
    writers.add_argument("--json", action="store_true")
    load = sub.add_parser("load", help="add_many in bulk, then single adds")
    load.add_argument("--size", type=int, default=36_500)
    load.add_argument("--singles", type=int, default=200)
    load.add_argument("--seed", type=int, default=7)
    load.add_argument("--store-url", help="also run on this PostgreSQL server (libpq URL)")
    load.add_argument("--schema", default="load_scale")
    load.add_argument(
        "--hnsw",
        default="",
        help="PostgreSQL series with these index settings, m/ef_construction[,...] "
        "(e.g. 16/128,32/200); default: one series with the store's defaults",
    )
    load.add_argument("--json", action="store_true")
    hnsw = sub.add_parser("hnsw", help="one HNSW index: build time, recall@10 per ef_search")
    hnsw.add_argument("--store-url", required=True)
    hnsw.add_argument("--schema", default="hnsw_scale")
    hnsw.add_argument("--size", type=int, default=100_000)
    hnsw.add_argument("--ef", default="200,400,800,1000")
    hnsw.add_argument("--m", type=int, default=16)
    hnsw.add_argument("--ef-construction", type=int, default=128)
    hnsw.add_argument("--seed", type=int, default=7)
    hnsw.add_argument("--rounds", type=int, default=1, help="timed passes per ef_search")
    hnsw.add_argument(
        "--kinds",
        default="vector",
        help="index types, comma-separated: vector, halfvec (pgvector 0.7 or newer)",
    )
    hnsw.add_argument(
        "--maintenance-work-mem",
        default="512MB",
        help="for the build; a graph larger than this is built far more slowly (1M: 4GB)",
    )
    args = parser.parse_args()
    if args.command == "hnsw":
        print(json.dumps(run_hnsw(args)), flush=True)
        return 0
    if args.command == "load":
        return _load(args)
    if args.processes < 1 or args.seconds <= 0:
        parser.error("--processes must be at least 1 and --seconds positive")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_home = Path(tmp) / "sqlite"
        sqlite_home.mkdir()
        results.append(run_writers("sqlite", sqlite_home, {}, args.processes, args.seconds))
        if args.store_url:
            _drop_schema(args.store_url, args.schema)
            pg_home = Path(tmp) / "postgres"
            pg_home.mkdir()
            env = {"KIOKU_STORE_URL": args.store_url, "KIOKU_STORE__SCHEMA": args.schema}
            results.append(run_writers("postgres", pg_home, env, args.processes, args.seconds))
    for r in results:
        if args.json:
            print(json.dumps(r), flush=True)
            continue
        print(
            f"{r['store']:8s} {r['processes']} writers × {r['seconds']:g} s: "
            f"{r['acknowledged']:,} acknowledged ({r['writes_per_second']}/s), lost {r['lost']}, "
            f"duplicates {r['duplicates']}, stored without ack {r['unacknowledged_but_stored']}, "
            f"errors {r['errors'] or 'none'}, exit codes {sorted(set(r['exit_codes']))}; "
            f"remember p50 {r['remember_p50_ms']} ms, p95 {r['remember_p95_ms']} ms",
            flush=True,
        )
    failed = any(r["lost"] or any(code != 0 for code in r["exit_codes"]) for r in results)
    return 1 if failed else 0


def _load(args: argparse.Namespace) -> int:
    if not 0 <= args.singles < args.size:
        raise SystemExit("--singles must be from 0 to less than --size")
    settings = [tuple(p.split("/")) for p in args.hnsw.split(",") if p] or [()]
    with tempfile.TemporaryDirectory() as tmp:
        with Kioku.open(Path(tmp) / "maker", env={}) as maker:
            memories = _memories(maker, args.size, args.seed)
        series: dict[str, tuple[Path, dict[str, str]]] = {"sqlite": (Path(tmp) / "sqlite", {})}
        for n, pair in enumerate(settings if args.store_url else []):
            schema = f"{args.schema}_{n}" if len(settings) > 1 else args.schema
            _drop_schema(args.store_url, schema)
            env = {"KIOKU_STORE_URL": args.store_url, "KIOKU_STORE__SCHEMA": schema}
            if pair:
                env["KIOKU_STORE__HNSW_M"], env["KIOKU_STORE__HNSW_EF_CONSTRUCTION"] = pair
            label = "postgres" + (f" m{pair[0]}/{pair[1]}" if pair else "")
            series[label] = (Path(tmp) / f"postgres{n}", env)
        for home, _ in series.values():
            home.mkdir()
        results = run_load(series, memories, args.singles)
    for r in results:
        print(
            json.dumps(r)
            if args.json
            else (
                f"{r['store']:8s} add_many of {r['memories']:,}: {r['bulk_seconds']} s "
                f"({r['bulk_ms_per_memory']} ms a memory; batches {r['batch_seconds']} s); then "
                f"{r['singles']} single adds: p50 {r['single_p50_ms']} ms, "
                f"p95 {r['single_p95_ms']} ms"
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
