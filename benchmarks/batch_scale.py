#!/usr/bin/env python3
"""One nightly batch at scale, and auto-linking on its own.

    python benchmarks/batch_scale.py [--sizes 36500,1000000] [--per-day 100] [--store DIR]
        [--store-url postgresql://... [--schema NAME] [--hnsw M/EF]] [--no-catch-up] [--json]

For each size, a store of synthetic memories is built in the state years of daily batches
leave it in: ``--per-day`` memories a day (default 100, so 36,500 is one year and 1,000,000
about 27 years), a spec-like mix of categories (casual 35 %, work 35 %, decision 15 %,
emotional 15 %) and intensities, a few protected, about 1 % recalled since the last batch and
a few revival requests; each memory's ``memory_days``, score and level follow from its age,
and the level ratios are settled once by the planner. Levels 2 and 3 hold summary and keyword
texts; vectors are random unit vectors, or with ``--vectors`` the rows of a matrix (a
``.npy`` file, or the vectors of another store such as ``recall_scale.py``'s); the batch
re-embeds what it compresses with the configured embedder, the offline default. Then one
batch runs (``Kioku.batch``, offline analyzer, no LLM, consolidation off) and its wall time
is printed. Consolidation, which a
batch otherwise runs afterwards, is timed apart: this store has no consolidation runs
recorded, so it catches up every period of the store's history.

Separately, auto-linking is timed as the spec sizes it: 100 new memories against 36,500 at
384 dimensions (one matrix product and the threshold scan, ``kioku.core.lifecycle.links``).

``--store-url`` copies the same store to a PostgreSQL server too, in the schema
``<NAME>_n<size>`` (dropped and copied again on each run: a batch changes the store), as
``kioku migrate`` does (every table, verified by row counts and checksums; each model's HNSW
index built once at the end), before SQLite's batch runs, and runs the same batch there after
SQLite's, printing both. ``--hnsw M/EF`` builds that index with other settings than the
defaults (``m`` 32, ``ef_construction`` 200), whose build takes hours at a million on two cores.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import sqlite3
import tempfile
import time
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.lifecycle.links import Node, auto_links
from kioku.core.lifecycle.plan import ArchivedPopulation, Population, plan_day
from kioku.core.model import Embedding, Level, Memory, Valence
from kioku.core.retention import decay_coefficient

TOKYO = ZoneInfo("Asia/Tokyo")
_CATS = ("casual", "work", "decision", "emotional")
_CAT_WEIGHTS = (0.35, 0.35, 0.15, 0.15)
_WORDS = (
    "deploy docker index query postgres sqlite memory batch vector cache latency release "
    "review design decision garden dog river coffee train birthday mother exam job offer "
    "concert painting travel kyoto rain weather holiday budget invoice meeting sprint bug"
).split()
DIM = 384


def _intensity(rng: random.Random, category: str) -> int:
    centre = {"casual": 30, "work": 45, "decision": 60, "emotional": 75}[category]
    return max(5, min(100, int(rng.gauss(centre, 15))))


def _texts(rng: random.Random, level: int) -> tuple[str, str]:
    words = rng.sample(_WORDS, 8)
    if level == Level.FULL:
        return (
            f"We talked about the {words[0]} and the {words[1]} during the {words[2]} review",
            f"I explained how the {words[3]} affects the {words[4]}; we agreed to check the "
            f"{words[5]} and the {words[6]} again next week before the {words[7]}.",
        )
    if level == Level.SUMMARY:
        return f"Talked about the {words[0]} and {words[1]}", f"Explained the {words[3]}."
    return f"{words[0]}, {words[1]}", f"{words[3]}, {words[4]}"


def build(
    kioku: Kioku, size: int, per_day: int, seed: int, vectors: np.ndarray | None = None
) -> datetime:
    """Fill the store in a settled state, 5,000 memories at a time; returns the time of the
    last batch it reflects. ``vectors``: the memories' vectors, row ``i`` for memory ``i``
    (random unit vectors without)."""
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    cfg = kioku.config
    hour = cfg.compression.schedule_hour
    days = math.ceil(size / per_day)
    last_batch = datetime(2026, 1, 1, hour, tzinfo=TOKYO)
    first = last_batch - timedelta(days=days)
    previous = last_batch - timedelta(days=1)
    rows: list[dict[str, Any]] = []
    for i in range(size):
        created = first + timedelta(seconds=(i / per_day) * 86400 + 60)
        category = rng.choices(_CATS, _CAT_WEIGHTS)[0]
        intensity = _intensity(rng, category)
        coefficient = decay_coefficient(
            category,
            intensity,
            cfg.retention.decay_by_category,
            cfg.retention.base_decay_coefficient,
        )
        recalls = 1 if rng.random() < 0.05 else 0
        coefficient = min(cfg.retention.max_decay_coefficient, coefficient + 0.02 * recalls)
        # After nightly batches, a memory never recalled has aged one day per batch since
        # its first, which counted the time from its creation (memory_days の初期値): its
        # memory_days at the last batch is its age then.
        age = (last_batch - created).total_seconds() / 86400
        age *= 0.5**recalls
        rows.append(
            {
                "created": created,
                "category": category,
                "intensity": intensity,
                "coefficient": coefficient,
                "memory_days": age,
                "recall_count": recalls,
                "protected": rng.random() < 0.0005,
            }
        )
    # Settle levels: thresholds and ratios as the planner would leave them.
    ids = np.empty(size, dtype=object)
    ids[:] = [f"mem_bench_{i:08d}" for i in range(size)]
    score = np.asarray([r["intensity"] * r["coefficient"] ** r["memory_days"] for r in rows])
    pop = Population(
        ids=ids,
        scope=np.zeros(size, dtype=np.int32),
        created=np.asarray([r["created"].timestamp() for r in rows]),
        intensity=np.asarray([float(r["intensity"]) for r in rows]),
        coefficient=np.asarray([r["coefficient"] for r in rows]),
        # Before the last batch: memories made since the one before meet their first batch
        # there (not aged); the others are a day younger.
        memory_days=np.asarray(
            [r["memory_days"] - (0.0 if r["created"] > previous else 1.0) for r in rows]
        ),
        recall_count=np.asarray([r["recall_count"] for r in rows], dtype=np.int64),
        recalled=np.zeros(size, dtype=np.bool_),
        level=np.ones(size, dtype=np.int8),
        protected=np.asarray([r["protected"] for r in rows], dtype=np.bool_),
        score=score,
    )
    settled = plan_day(pop, ArchivedPopulation.empty(), cfg, last_batch, previous)
    model = kioku.embedder.model_id
    batch: list[Memory] = []
    for i, r in enumerate(rows):
        level = int(settled.level[i])
        trigger, content = _texts(rng, min(level, Level.TRACE))
        archived = level == Level.ARCHIVED
        drawn = np_rng.standard_normal(DIM).astype(np.float32)
        vector = drawn if vectors is None else np.array(vectors[i], dtype=np.float32)
        vector /= np.linalg.norm(vector)
        requested = archived and rng.random() < 0.002
        batch.append(
            Memory(
                id=str(ids[i]),
                created=r["created"],
                trigger=trigger,
                content=content,
                emotional_intensity=r["intensity"],
                emotional_valence=Valence.NEUTRAL,
                emotional_arousal=40,
                category=r["category"],
                decay_coefficient=r["coefficient"],
                memory_days=float(settled.memory_days[i]),
                retention_score=float(settled.score[i]),
                current_level=level,
                recall_count=r["recall_count"],
                recalled_since_last_batch=(not archived) and rng.random() < 0.01,
                protected=bool(r["protected"]) and not archived,
                archived_at=last_batch - timedelta(days=rng.randint(0, 200)) if archived else None,
                revival_requested=requested,
                revival_requested_at=last_batch if requested else None,
                user_id=kioku.user_id,
                agent_id=kioku.agent_id,
                embedding=Embedding(model, tuple(vector.tolist())),
            )
        )
        if len(batch) >= 5000:
            kioku.store.add_many(batch)
            batch = []
    if batch:
        kioku.store.add_many(batch)
    kioku.store.set_state("batch_last_day", last_batch.date().isoformat())
    # The last batch left the vector cache file written (Kioku.batch does after every day).
    kioku.store.save_vector_cache(model)
    # Today's new memories, made after the last batch.
    kioku.clock = FixedClock(last_batch + timedelta(hours=6))
    for n in range(per_day):
        trigger, content = _texts(rng, Level.FULL)
        kioku.remember(
            trigger,
            content,
            intensity=_intensity(rng, "work"),
            category=rng.choices(_CATS, _CAT_WEIGHTS)[0],
            at=last_batch + timedelta(minutes=10 + n),
        )
    return last_batch


#: Configuration overrides for the timed batch: consolidation is timed on its own.
NO_CONSOLIDATION: dict[str, str] = {"KIOKU_CONSOLIDATION__ENABLED": "false"}


def _run_batch(kioku: Kioku, now: datetime, catch_up: bool = True) -> dict[str, Any]:
    """One batch at ``now``: wall time, phases, the day's report and the levels after; then
    consolidation's catch-up, timed apart, unless ``catch_up`` is False."""
    phases: dict[str, float] = {}
    marks = [time.perf_counter()]

    def progress(label: str, done: int, total: int) -> None:
        del done, total
        marks.append(time.perf_counter())
        phases[label] = round(marks[-1] - marks[-2], 2)

    t0 = time.perf_counter()
    report = kioku.batch(now=now, progress=progress)
    batch_s = time.perf_counter() - t0
    stats = kioku.store.stats(None, None)
    # The batch ran with consolidation off (see NO_CONSOLIDATION); consolidation, which a
    # batch otherwise runs afterwards, is timed apart: the synthetic store has no
    # consolidation runs recorded, so it catches up every daily, weekly and monthly period
    # of the store's history, which is not what one night costs.
    consolidation_s = None
    if catch_up:
        t0 = time.perf_counter()
        kioku.consolidate(now=now)
        consolidation_s = round(time.perf_counter() - t0, 2)
    return {
        "batch_seconds": round(batch_s, 2),
        "consolidation_catch_up_seconds": consolidation_s,
        "phases": phases,
        "status": report.status,
        "day": report.days[0].to_dict() if report.days else {},
        "by_level": stats.by_level,
    }


def measure(
    size: int,
    per_day: int,
    seed: int,
    store_dir: Path | None,
    store_url: str | None = None,
    schema: str = "batch_scale",
    hnsw: tuple[int, int] | None = None,
    catch_up: bool = True,
    vectors: np.ndarray | None = None,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        built = store_dir is not None and (store_dir / "memories.db").exists()
        fill_s = 0.0
        if built:
            assert store_dir is not None
            shutil.copytree(store_dir, home)
            last = datetime.fromisoformat((store_dir / "last_batch").read_text().strip())
        else:
            t0 = time.perf_counter()
            with Kioku.open(home, env={}) as kioku:
                last = build(kioku, size, per_day, seed, vectors)
            fill_s = time.perf_counter() - t0
            (home / "last_batch").write_text(last.isoformat())
            if store_dir is not None:
                shutil.copytree(home, store_dir, dirs_exist_ok=True)
        now = last + timedelta(days=1, hours=1)
        pg_schema = f"{schema}_n{size}"
        copy_s = None if store_url is None else _copy_to_postgres(home, store_url, pg_schema, hnsw)
        with Kioku.open(home, env=NO_CONSOLIDATION, clock=FixedClock(now)) as kioku:
            result: dict[str, Any] = {
                "memories": size,
                "per_day": per_day,
                "fill_seconds": round(fill_s, 1),
                **_run_batch(kioku, now, catch_up),
            }
        if store_url is not None and copy_s is not None:
            env = {"KIOKU_STORE_URL": store_url, "KIOKU_STORE__SCHEMA": pg_schema}
            clock = FixedClock(now)
            with Kioku.open(Path(tmp) / "pg", env={**env, **NO_CONSOLIDATION}, clock=clock) as pg:
                result["postgres"] = {
                    "schema": pg_schema,
                    "hnsw": "default" if hnsw is None else f"{hnsw[0]}/{hnsw[1]}",
                    "copy_seconds": round(copy_s, 1),
                    **_run_batch(pg, now, catch_up),
                }
    return result


def _copy_to_postgres(
    home: Path, url: str, schema: str, hnsw: tuple[int, int] | None = None
) -> float:
    """Copy the SQLite store in ``home`` (before its batch) into ``schema`` (dropped first)
    as ``kioku migrate`` does, verified by row counts and checksums; the seconds it took.
    ``hnsw``: the index's ``(m, ef_construction)`` instead of the defaults."""
    import psycopg
    from psycopg import sql

    from kioku.adapters.store.postgres.transfer import open_postgres_tables
    from kioku.adapters.store.postgres.vectors import DEFAULT_HNSW, HnswSettings
    from kioku.adapters.store.sqlite.transfer import open_sqlite_tables
    from kioku.service.transfer import copy_store

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))
    t0 = time.perf_counter()
    settings = DEFAULT_HNSW if hnsw is None else HnswSettings(m=hnsw[0], ef_construction=hnsw[1])
    copy_store(
        open_sqlite_tables(home / "memories.db"),
        open_postgres_tables(url, schema, hnsw=settings),
    )
    return time.perf_counter() - t0


def load_vectors(path: Path) -> np.ndarray:
    """The matrix of ``--vectors``: a ``.npy`` file, or the vectors of a SQLite store (a
    ``memories.db`` or the home holding it) in the order they were stored."""
    if path.suffix == ".npy":
        return np.load(path, mmap_mode="r")
    db = path / "memories.db" if path.is_dir() else path
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        blobs = [
            row[0]
            for row in conn.execute(
                "SELECT embedding FROM memories WHERE embedding IS NOT NULL ORDER BY rowid"
            )
        ]
    return np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1)


def measure_linking(new: int, existing: int, seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    all_vectors = rng.standard_normal((existing, DIM)).astype(np.float32)
    all_vectors /= np.linalg.norm(all_vectors, axis=1, keepdims=True)
    # Near-duplicates of some existing rows, so links are really made.
    fresh = all_vectors[:new] + 0.2 * rng.standard_normal((new, DIM)).astype(
        np.float32
    ) / math.sqrt(DIM)
    fresh /= np.linalg.norm(fresh, axis=1, keepdims=True)
    all_ids = [f"m{i}" for i in range(existing)]
    fresh_ids = [f"n{i}" for i in range(new)]
    nodes = {k: Node(50.0, float(i)) for i, k in enumerate(all_ids + fresh_ids)}
    times = []
    links: list[Any] = []
    for _ in range(5):
        t0 = time.perf_counter()
        links = auto_links(
            fresh_ids, fresh, all_ids, all_vectors, [], nodes,
            threshold=0.85, max_relations=10, proximity=5.0,
        )  # fmt: skip
        times.append(time.perf_counter() - t0)
    return {
        "new": new,
        "existing": existing,
        "dim": DIM,
        "links": len(links),
        "best_seconds": round(min(times), 4),
        "median_seconds": round(sorted(times)[len(times) // 2], 4),
    }


def _seconds(value: float | None) -> str:
    return "not timed (--no-catch-up)" if value is None else f"{value} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="36500")
    parser.add_argument("--per-day", type=int, default=100)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--store", type=Path, help="keep the filled store here and reuse it")
    parser.add_argument(
        "--store-url", help="also build and batch a PostgreSQL store on this server (libpq URL)"
    )
    parser.add_argument(
        "--schema", default="batch_scale", help="prefix of the PostgreSQL schema (one per size)"
    )
    parser.add_argument(
        "--hnsw",
        metavar="M/EF",
        help="build the PostgreSQL copy's HNSW index with this m / ef_construction instead of "
        "the defaults (a lighter graph builds much faster; its inserts cost less too)",
    )
    parser.add_argument(
        "--no-catch-up",
        action="store_true",
        help="skip timing consolidation's catch-up of the store's whole history (hours at a "
        "million: every day of 27 years)",
    )
    parser.add_argument(
        "--vectors",
        type=Path,
        help="row i of this matrix is memory i's vector, instead of a random unit vector: a .npy "
        "file (rows x 384, float32), or a kioku SQLite store (its memories.db, or the home "
        "holding it) whose vectors are read in the order they were stored, such as the store "
        "`recall_scale.py --store` keeps (offline embeddings of its texts), over which the "
        "default HNSW graph builds in a fraction of the time random vectors take (used when the "
        "store is built, not when a kept one is reused)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    vectors = None if args.vectors is None else load_vectors(args.vectors)
    if vectors is not None and (vectors.ndim != 2 or vectors.shape[1] != DIM):
        parser.error(f"--vectors must hold rows of {DIM} values, not shape {vectors.shape}")
    hnsw = None if args.hnsw is None else tuple(int(v) for v in args.hnsw.split("/"))
    if hnsw is not None and len(hnsw) != 2:
        parser.error("--hnsw takes M/EF, for example 16/32")
    link = measure_linking(100, 36_500, args.seed)
    print(json.dumps(link) if args.json else (
        f"auto-linking {link['new']} new × {link['existing']:,} existing at {link['dim']} dims: "
        f"best {link['best_seconds']} s, median {link['median_seconds']} s ({link['links']} links)"
    ), flush=True)  # fmt: skip
    for size in (int(s) for s in args.sizes.split(",") if s):
        if vectors is not None and len(vectors) < size:
            parser.error(f"--vectors holds {len(vectors):,} rows, fewer than {size:,} memories")
        store = None if args.store is None else args.store / str(size)
        r = measure(
            size,
            args.per_day,
            args.seed,
            store,
            args.store_url,
            args.schema,
            hnsw,
            not args.no_catch_up,
            vectors,
        )
        if args.json:
            print(json.dumps(r), flush=True)
            continue
        d = r["day"]
        print(
            f"{r['memories']:>9,} memories ({r['per_day']}/day; filled in {r['fill_seconds']} s): "
            f"one batch {r['batch_seconds']} s — {d.get('memories', 0):,} active, "
            f"reinforced {d.get('reinforced')}, compressed {d.get('compressed')}, "
            f"archived {d.get('archived')} (ratio {d.get('ratio_forced')}), revived "
            f"{d.get('revived')}, deferred {d.get('revivals_deferred')}, links +{d.get('linked')} "
            f"-{d.get('unlinked')}; levels {r['by_level']}",
            flush=True,
        )
        print(
            f"          sqlite: consolidation apart, catching up the store's whole history: "
            f"{_seconds(r['consolidation_catch_up_seconds'])}; phases {r['phases']}",
            flush=True,
        )
        pg = r.get("postgres")
        if pg is not None:
            d = pg["day"]
            print(
                f"{r['memories']:>9,} memories on postgres (schema {pg['schema']}, index "
                f"{pg['hnsw']}; copied in {pg['copy_seconds']} s): "
                f"one batch {pg['batch_seconds']} s — "
                f"{d.get('memories', 0):,} active, reinforced {d.get('reinforced')}, "
                f"compressed {d.get('compressed')}, archived {d.get('archived')}, "
                f"links +{d.get('linked')} -{d.get('unlinked')}; levels {pg['by_level']}",
                flush=True,
            )
            print(
                f"          postgres: consolidation apart, catching up the store's whole history: "
                f"{_seconds(pg['consolidation_catch_up_seconds'])}; phases {pg['phases']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
