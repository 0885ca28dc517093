#!/usr/bin/env python3
"""Recall latency at scale, against a numpy brute-force floor measured in the same run.

    python benchmarks/recall_scale.py [--sizes 36500,1000000] [--queries 200] [--long]
        [--stages] [--store DIR] [--store-url postgresql://... [--schema NAME]] [--ann]
        [--only SERIES,...] [--pg-ef N,...] [--json]

For each size, a store is filled with synthetic memories (a spec-like mix of categories and
intensities, English and Japanese text from a fixed vocabulary, vectors from the configured
embedder) and then ``Kioku.recall`` answers random queries in a warm process, query embedding
included, marking what it recalls as it would for a user. The floor is the bare numpy work
of the vector half: one matrix-vector product over the same vectors and a top-k selection.

Queries are three words (and a quarter as many short Japanese ones); ``--long`` also times
prompt-like queries of 30-60 words. ``--stages`` prints the time of each stage of recall
(query embedding, lexical search, vector search, scoring fields, decoding, marking). Each
query set also reports vector search's recall@10 against numpy brute force. ``--store DIR``
keeps each filled store in ``DIR`` and reuses it on later runs (a million takes a while).

``--store-url`` also fills a PostgreSQL store with the same memories, in the schema
``<NAME>_n<size>_s<seed>`` (kept and reused on later runs, like ``--store``), and times both
stores in the same run: each query is recalled on SQLite and on PostgreSQL, in turn (the order
alternating), so both see the same load of a shared machine. Both report vector recall@10
against the same exact ranking. The PostgreSQL store is filled by ``kioku migrate``'s copy of
the SQLite store (:func:`kioku.service.transfer.copy_store`: the same memories and vectors,
verified by row counts and checksums), which builds each model's HNSW index once at the end.

``--ann`` also times the SQLite store with its HNSW graph (the ``ann`` extra: usearch), as a
third store ``sqlite-ann`` on the same file, the queries alternating with exact search; the
graph is built (and saved beside the vector cache file) by ``save_vector_cache(wait=True)``
before the timed runs (on every core; without ``wait`` it is built in a background thread),
unless a kept store has one already, which is then checked and mapped; the seconds that took
are printed. The plain ``sqlite`` series always searches exactly
(``retrieval.ann_min_vectors = 0``).

``--only`` times only the named series (``sqlite``, ``sqlite-ann``, ``postgres``): a store
served one way alone. Exact search of a long query multiplies the whole matrix on every core,
and a BLAS pool goes on spinning for a while after it, which slows whatever runs next; the
series that alternate with it pay for that too.

``--pg-ef 300,400`` also times the PostgreSQL store with each ``[store] hnsw_ef_search``
given, as series ``postgres-ef300`` and so on beside ``postgres`` (the default walk), each a
Kioku of its own on the same schema, the queries alternating between them; each reports its
vector recall@10, so a shorter walk's speed is weighed against what it misses.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np

from kioku import Kioku
from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.core.model import Embedding, Memory, Valence
from kioku.core.retention import decay_coefficient
from kioku.ports.store import MemoryFilter

TOKYO = ZoneInfo("Asia/Tokyo")
START = datetime(2024, 1, 1, 9, 0, tzinfo=TOKYO)
_EN = (
    "deploy docker index query postgres sqlite memory batch vector cache latency release "
    "review design decision garden dog river coffee train birthday mother exam job offer "
    "concert painting travel kyoto rain weather holiday budget invoice meeting sprint bug "
    "error timeout retry schema migration backup restore keyboard laptop phone music film "
    "book recipe sushi ramen tea friend sister brother doctor hospital running marathon"
).split()
_JA = (
    "寿司 会議 設計 旅行 京都 誕生日 試験 仕事 家族 天気 映画 音楽 料理 散歩 病院 引っ越し".split()
)
_CATS = ("casual", "work", "decision", "emotional")
_CAT_WEIGHTS = (0.35, 0.35, 0.15, 0.15)


def _vocabulary(size: int, seed: int) -> list[str]:
    """Pseudo-words (consonant-vowel syllables), so a store has a realistic spread of rare
    and common terms; the real words above are mixed in."""
    rng = random.Random(seed)
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    words = {"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(size)}
    return sorted(words) + _EN


_VOCAB = _vocabulary(8000, 11)
_ZIPF = [1.0 / (rank + 1) for rank in range(len(_VOCAB))]


def _words(rng: random.Random, n: int) -> list[str]:
    return rng.choices(_VOCAB, _ZIPF, k=n)


def _text(rng: random.Random) -> tuple[str, str]:
    words = _words(rng, 6)
    if rng.random() < 0.3:
        return (
            f"{rng.choice(_JA)}の話をした、{rng.choice(_JA)}について",
            f"{rng.choice(_JA)}と{rng.choice(_JA)}のこと。{' '.join(words[:2])}",
        )
    return " ".join(words[:3]), " ".join(words[3:]) + f" {rng.choice(_EN)}"


def fill(kioku: Kioku, size: int, seed: int) -> float:
    """Add ``size`` synthetic memories in batches of 5,000; returns seconds taken."""
    rng = random.Random(seed)
    cfg = kioku.config.retention
    embedder = kioku.embedder
    t0 = time.perf_counter()
    start = 0
    while start < size:
        batch = 5000
        drafts = []
        for i in range(start, min(size, start + batch)):
            category = rng.choices(_CATS, _CAT_WEIGHTS)[0]
            intensity = max(0, min(100, int(rng.gauss(40, 18))))
            trigger, content = _text(rng)
            drafts.append((i, category, intensity, trigger, content))
        vectors = embedder.embed([f"{d[3]}\n{d[4]}" for d in drafts])
        memories = [
            Memory(
                id=f"mem_synth_{i:08d}",
                created=START + timedelta(minutes=15 * i),
                trigger=trigger,
                content=content,
                emotional_intensity=intensity,
                emotional_valence=Valence.NEUTRAL,
                emotional_arousal=40,
                category=category,
                decay_coefficient=decay_coefficient(
                    category, intensity, cfg.decay_by_category, cfg.base_decay_coefficient
                ),
                retention_score=float(intensity),
                user_id=kioku.user_id,
                agent_id=kioku.agent_id,
                embedding=Embedding(embedder.model_id, tuple(vector.tolist())),
            )
            for (i, category, intensity, trigger, content), vector in zip(
                drafts, vectors, strict=True
            )
        ]
        kioku.store.add_many(memories)
        start += batch
    return time.perf_counter() - t0


def _matrix(db: Path, model: str) -> tuple[dict[str, int], np.ndarray]:
    """Every stored vector of ``model`` with its row by memory id, read straight from the
    file (float32 blobs)."""
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT id, embedding FROM memories WHERE embedding_model = ?", (model,)
        ).fetchall()
    index = {str(row[0]): i for i, row in enumerate(rows)}
    return index, np.vstack([np.frombuffer(row[1], dtype="<f4") for row in rows])


def _filled(home: Path, size: int, seed: int) -> float | None:
    """Seconds a kept store took to fill, or None when ``home`` holds no store yet."""
    marker = home / "filled.json"
    if marker.exists():
        info = json.loads(marker.read_text())
        if info["memories"] != size or info["seed"] != seed:
            raise SystemExit(f"{home} holds another store ({info}); pick another --store")
        return float(info["seconds"])
    if (home / "memories.db").exists():
        raise SystemExit(f"{home} holds a partly filled store; remove it")
    return None


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))] * 1000


#: Function words and chat filler for prompt-like queries (a user message, not keywords).
_FILLER = (
    "i you we it the a an and but so to of in on at for with about from that this was were "
    "is are be have had do did can could would should what when where why how remember "
    "think last time said told me my our your again maybe really just like also then"
).split()


def short_queries(rng: random.Random, n: int) -> list[str]:
    """Three-word English queries and, a quarter as many, short Japanese ones."""
    texts = [" ".join(_words(rng, 3)) for _ in range(n)]
    return texts + [f"{rng.choice(_JA)}の{rng.choice(_JA)}" for _ in range(n // 4)]


def long_queries(rng: random.Random, n: int) -> list[str]:
    """Prompt-like queries of 30-60 words: filler and vocabulary words mixed, a quarter of them
    with a Japanese sentence appended."""
    texts = []
    for i in range(n):
        words = [
            rng.choice(_FILLER) if rng.random() < 0.45 else _words(rng, 1)[0]
            for _ in range(rng.randint(30, 60))
        ]
        text = " ".join(words)
        if i % 4 == 3:
            text += f"。{rng.choice(_JA)}の{rng.choice(_JA)}について話したことを覚えてる?"
        texts.append(text)
    return texts


class _Stages:
    """Wall time per stage of recall, by wrapping the store's and embedder's methods."""

    NAMES = ("embed", "lexical", "vector", "scoring_fields", "get_many", "mark")

    def __init__(self, kioku: Kioku) -> None:
        self.times: dict[str, list[float]] = {name: [] for name in self.NAMES}
        self._current: dict[str, float] = {}
        store, embedder = kioku.store, kioku.embedder
        for name, owner, attr in (
            ("embed", embedder, "embed"),
            ("lexical", store, "search_lexical"),
            ("vector", store, "vector_search"),
            ("scoring_fields", store, "scoring_fields"),
            ("get_many", store, "get_many"),
        ):
            setattr(owner, attr, self._timed(name, getattr(owner, attr)))
        atomic = store.atomic
        depth = [0]

        @contextmanager
        def timed_atomic(**options: bool) -> Iterator[None]:
            # Marking nests transactions (the marks inside the one that also logs the
            # recall); only the outermost is timed, so nothing is counted twice.
            t0 = time.perf_counter()
            depth[0] += 1
            try:
                with atomic(**options):
                    yield
            finally:
                depth[0] -= 1
            if depth[0] == 0:
                self._add("mark", time.perf_counter() - t0)

        store.atomic = timed_atomic  # type: ignore[method-assign]

    def _add(self, name: str, seconds: float) -> None:
        self._current[name] = self._current.get(name, 0.0) + seconds

    def _timed(self, name: str, method: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self._add(name, time.perf_counter() - t0)

        return wrapper

    def start(self) -> None:
        self._current = {}

    def stop(self) -> None:
        for name in self.NAMES:
            self.times[name].append(self._current.get(name, 0.0))

    def take(self) -> dict[str, list[float]]:
        """p50 and p95 of each stage since the last call."""
        summary = {
            name: [round(_p(values, 0.5), 2), round(_p(values, 0.95), 2)]
            for name, values in self.times.items()
            if values
        }
        self.times = {name: [] for name in self.NAMES}
        return summary


def _recall_at_10(
    kioku: Kioku, index: dict[str, int], matrix: np.ndarray, texts: list[str]
) -> float:
    """Share of the 10 nearest vectors by brute force among the best ten that the store's
    vector search returns when asked as recall asks it, for ``[retrieval] candidates``
    results (so a PostgreSQL walk keeps the candidates recall's does); a result within float32
    rounding, 1e-5, of the tenth best counts as found."""
    embedder = kioku.embedder
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    found = wanted = 0
    flt = MemoryFilter(user_id=kioku.user_id, agent_id=kioku.agent_id, archived=False)
    for text in texts:
        q = embedder.embed([text])[0]
        if not np.any(q):
            continue
        exact = (matrix @ (q / np.linalg.norm(q))) / norms
        tenth = np.partition(exact, exact.size - 10)[exact.size - 10]
        asked = max(10, kioku.config.retrieval.candidates)
        got = kioku.store.vector_search(embedder.model_id, q.tolist(), flt, asked)[:10]
        found += sum(1 for memory_id, _ in got if exact[index[memory_id]] >= tenth - 1e-5)
        wanted += 10
    return found / max(wanted, 1)


def _floor(kioku: Kioku, matrix: np.ndarray, texts: list[str]) -> list[float]:
    """numpy alone over the same vectors: embed, one product, top 100."""
    embedder = kioku.embedder
    out = []
    for text in texts:
        t0 = time.perf_counter()
        q = embedder.embed([text])[0]
        scores = matrix @ q
        top = np.argpartition(-scores, 100)[:100]
        top[np.argsort(-scores[top])]
        out.append(time.perf_counter() - t0)
    return out


@contextmanager
def _postgres(
    url: str, schema: str, size: int, seed: int, home: Path, ef_search: int = 0
) -> Iterator[tuple[Kioku, float]]:
    """A Kioku on the PostgreSQL schema ``schema``, filled (unless it was on an earlier run) by
    ``kioku migrate``'s copy of the SQLite store in ``home`` (the same memories and vectors,
    verified by checksums); with the seconds the copy took."""
    from kioku.adapters.store.postgres.transfer import open_postgres_tables
    from kioku.adapters.store.sqlite.transfer import open_sqlite_tables
    from kioku.service.transfer import copy_store

    with tempfile.TemporaryDirectory() as tmp:
        env = {"KIOKU_STORE_URL": url, "KIOKU_STORE__SCHEMA": schema}
        if ef_search:
            env["KIOKU_STORE__HNSW_EF_SEARCH"] = str(ef_search)
        with Kioku.open(Path(tmp), env=env) as kioku:
            info = kioku.store.get_state(_FILLED_STATE)
            if info is None:
                if kioku.store.count(MemoryFilter()):
                    raise SystemExit(f"schema {schema} holds a partly filled store; drop it")
                t0 = time.perf_counter()
                copy_store(
                    open_sqlite_tables(home / "memories.db"), open_postgres_tables(url, schema)
                )
                seconds = time.perf_counter() - t0
                kioku.store.set_state(
                    _FILLED_STATE,
                    json.dumps({"memories": size, "seed": seed, "seconds": seconds}),
                )
            else:
                filled = json.loads(info)
                if filled["memories"] != size or filled["seed"] != seed:
                    raise SystemExit(f"schema {schema} holds another store ({filled})")
                seconds = float(filled["seconds"])
            yield kioku, seconds


#: The state row where a kept PostgreSQL store records how it was filled.
_FILLED_STATE = "benchmark.recall_scale.filled"


def _spread(values: list[float]) -> str:
    """The middle half of ``values`` (p25-p75), in milliseconds."""
    return f"{_p(values, 0.25):.2f}-{_p(values, 0.75):.2f}"


def _summary(
    latencies: list[float], floor: list[float], spent: dict[str, list[float]], found: float
) -> dict[str, Any]:
    return {
        "queries": len(latencies),
        "recall_p50_ms": round(_p(latencies, 0.5), 2),
        "recall_p95_ms": round(_p(latencies, 0.95), 2),
        "spread_p25_p75_ms": _spread(latencies),
        "mean_ms": round(statistics.mean(latencies) * 1000, 2),
        "floor_p50_ms": round(_p(floor, 0.5), 2),
        "floor_p95_ms": round(_p(floor, 0.95), 2),
        "ratio_p95": round(_p(latencies, 0.95) / max(_p(floor, 0.95), 1e-9), 2),
        "stages_p50_p95_ms": spent,
        "vector_recall_at_10": round(found, 4),
    }


def _warm(kioku: Kioku, texts: list[str]) -> tuple[float, float, float]:
    """Seconds of the first three recalls (the first loads the vector cache; SQLite's third
    copies the lexical index, which a process does once it has searched twice)."""
    spent = []
    for text in texts[:3]:
        t0 = time.perf_counter()
        kioku.recall(text, mark=False)
        spent.append(time.perf_counter() - t0)
    return spent[0], spent[1], spent[2]


def measure(
    size: int,
    queries: int,
    seed: int,
    keep: Path | None = None,
    long: bool = False,
    store_url: str | None = None,
    schema: str = "recall_scale",
    ann: bool = False,
    only: frozenset[str] | None = None,
    pg_ef: tuple[int, ...] = (),
) -> dict[str, Any]:
    """Fill (or reuse) a store of ``size`` memories (and a PostgreSQL one with ``store_url``)
    and time recall on each query set."""
    rng = random.Random(seed + 1)
    sets = {"short": short_queries(rng, queries)}
    if long:
        sets["long"] = long_queries(rng, queries)
    with ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        home = Path(tmp) if keep is None else keep / f"n{size}-s{seed}"
        home.mkdir(parents=True, exist_ok=True)
        fill_s = _filled(home, size, seed)
        kioku = stack.enter_context(Kioku.open(home, env={_ANN_MIN: "0"}))
        if fill_s is None:
            fill_s = fill(kioku, size, seed)
            (home / "filled.json").write_text(
                json.dumps({"memories": size, "seed": seed, "seconds": fill_s})
            )
        stores = {"sqlite": kioku}
        fills = {"sqlite": fill_s}
        if store_url is not None:
            pg, fills["postgres"] = stack.enter_context(
                _postgres(store_url, f"{schema}_n{size}_s{seed}", size, seed, home)
            )
            stores["postgres"] = pg
            for ef in pg_ef:
                name = f"postgres-ef{ef}"
                stores[name], fills[name] = stack.enter_context(
                    _postgres(store_url, f"{schema}_n{size}_s{seed}", size, seed, home, ef)
                )
        if ann:
            stores["sqlite-ann"] = stack.enter_context(Kioku.open(home, env={_ANN_MIN: "1"}))
            t0 = time.perf_counter()
            graph_store = stores["sqlite-ann"].store
            assert isinstance(graph_store, SqliteStore)
            graph_store.save_vector_cache(kioku.embedder.model_id, wait=True)
            fills["sqlite-ann"] = fill_s
            graph_s = time.perf_counter() - t0
        if only is not None:
            stores = {
                name: k
                for name, k in stores.items()
                if name in only or (name.startswith("postgres-ef") and "postgres" in only)
            }
        warm = {name: _warm(k, sets["short"]) for name, k in stores.items()}
        stages = {name: _Stages(k) for name, k in stores.items()}
        timed: dict[str, dict[str, tuple[list[float], dict[str, list[float]]]]] = {}
        for set_name, texts in sets.items():
            latencies: dict[str, list[float]] = {name: [] for name in stores}
            for n, text in enumerate(texts):
                order = list(stores) if n % 2 == 0 else list(reversed(stores))
                for name in order:
                    stages[name].start()
                    t0 = time.perf_counter()
                    stores[name].recall(text)
                    latencies[name].append(time.perf_counter() - t0)
                    stages[name].stop()
            for name in stores:
                timed.setdefault(name, {})[set_name] = (latencies[name], stages[name].take())
        index, matrix = _matrix(home / "memories.db", kioku.embedder.model_id)
        results: dict[str, Any] = {}
        for name, k in stores.items():
            results[name] = {
                "fill_seconds": round(fills[name], 1),
                "first_query_seconds": round(warm[name][0], 3),
                "second_query_seconds": round(warm[name][1], 3),
                "third_query_seconds": round(warm[name][2], 3),
            }
            if name == "sqlite-ann":
                results[name]["graph_save_seconds"] = round(graph_s, 1)
            for set_name, texts in sets.items():
                latencies_s, spent = timed[name][set_name]
                floor = _floor(k, matrix, texts)
                found = _recall_at_10(k, index, matrix, texts[:50])
                results[name][set_name] = _summary(latencies_s, floor, spent, found)
    return {"memories": size, **results}


#: The configuration key (as an environment variable) of the SQLite store's HNSW graph.
_ANN_MIN = "KIOKU_RETRIEVAL__ANN_MIN_VECTORS"


def _print(r: dict[str, Any], stages: bool) -> None:
    for store in [name for name in r if name != "memories"]:
        s = r[store]
        print(
            f"{r['memories']:>9,} memories on {store} (filled in {s['fill_seconds']} s; first "
            f"query {s['first_query_seconds']} s, second {s['second_query_seconds']} s, "
            f"third {s['third_query_seconds']} s)"
            + (
                f"; graph built or saved in {s['graph_save_seconds']} s"
                if store == "sqlite-ann"
                else ""
            ),
            flush=True,
        )
        for name in ("short", "long"):
            if name not in s:
                continue
            q = s[name]
            print(
                f"   {name:5s} recall p50 {q['recall_p50_ms']} ms  p95 {q['recall_p95_ms']} ms  "
                f"p25-p75 {q['spread_p25_p75_ms']} ms   numpy floor p50 {q['floor_p50_ms']} ms  "
                f"p95 {q['floor_p95_ms']} ms   ratio p95 {q['ratio_p95']}×   "
                f"vector recall@10 vs exact {q['vector_recall_at_10']}",
                flush=True,
            )
            if stages:
                print(
                    "         stages p50/p95 ms: "
                    + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in q["stages_p50_p95_ms"].items()),
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="36500")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--store", type=Path, help="keep filled stores in this directory and reuse them"
    )
    parser.add_argument(
        "--store-url", help="also fill and time a PostgreSQL store on this server (libpq URL)"
    )
    parser.add_argument(
        "--schema",
        default="recall_scale",
        help="prefix of the PostgreSQL schemas (one per size and seed, kept between runs)",
    )
    parser.add_argument("--long", action="store_true", help="also time 30-60 word queries")
    parser.add_argument("--stages", action="store_true", help="print the time of each stage")
    parser.add_argument(
        "--ann", action="store_true", help="also time SQLite with its HNSW graph (usearch)"
    )
    parser.add_argument(
        "--only", help="time only these series (comma-separated: sqlite, sqlite-ann, postgres)"
    )
    parser.add_argument(
        "--pg-ef",
        default="",
        help="with --store-url: also time PostgreSQL with each of these hnsw_ef_search values",
    )
    args = parser.parse_args()
    only = None if args.only is None else frozenset(args.only.split(","))
    if only is not None and not only <= {"sqlite", "sqlite-ann", "postgres"}:
        parser.error(f"--only: unknown series {sorted(only)}; choose sqlite, sqlite-ann, postgres")
    try:
        pg_ef = tuple(int(v) for v in args.pg_ef.split(",") if v)
    except ValueError:
        parser.error(f"--pg-ef: {args.pg_ef!r} is not a comma-separated list of whole numbers")
    if pg_ef and args.store_url is None:
        parser.error("--pg-ef needs --store-url")
    if any(not 1 <= ef <= 1000 for ef in pg_ef):
        parser.error("--pg-ef: each value must be from 1 to 1000 (pgvector's range)")
    for size in (int(s) for s in args.sizes.split(",") if s):
        r = measure(
            size,
            args.queries,
            args.seed,
            args.store,
            args.long,
            args.store_url,
            args.schema,
            args.ann,
            only,
            pg_ef,
        )
        if args.json:
            print(json.dumps(r), flush=True)
        else:
            _print(r, args.stages)


if __name__ == "__main__":
    main()
