#!/usr/bin/env python3
"""Recall latency at scale, against a numpy brute-force floor measured in the same run.

    python benchmarks/recall_scale.py [--sizes 36500,1000000] [--queries 200] [--json]

For each size, a store is filled with synthetic memories (a spec-like mix of categories and
intensities, English and Japanese text from a fixed vocabulary, vectors from the configured
embedder) and then ``Kioku.recall`` answers random queries in a warm process, query embedding
included, marking what it recalls as it would for a user. The floor is the bare numpy work
of the vector half: one matrix-vector product over the same vectors and a top-k selection.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import tempfile
import time
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np

from kioku import Kioku
from kioku.core.model import Embedding, Memory, Valence
from kioku.core.retention import decay_coefficient

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
    """Add ``size`` synthetic memories in batches; returns seconds taken."""
    rng = random.Random(seed)
    cfg = kioku.config.retention
    embedder = kioku.embedder
    t0 = time.perf_counter()
    batch = 5000
    for start in range(0, size, batch):
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
    return time.perf_counter() - t0


def _matrix(db: Path, model: str) -> np.ndarray:
    """Every stored vector of ``model``, read straight from the file (float32 blobs)."""
    with closing(sqlite3.connect(db)) as conn:
        blobs = conn.execute(
            "SELECT embedding FROM memories WHERE embedding_model = ?", (model,)
        ).fetchall()
    return np.vstack([np.frombuffer(b[0], dtype="<f4") for b in blobs])


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1)))] * 1000


def measure(size: int, queries: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed + 1)
    with tempfile.TemporaryDirectory() as home, Kioku.open(Path(home), env={}) as kioku:
        fill_s = fill(kioku, size, seed)
        texts = [" ".join(_words(rng, 3)) for _ in range(queries)]
        texts += [f"{rng.choice(_JA)}の{rng.choice(_JA)}" for _ in range(queries // 4)]
        t0 = time.perf_counter()
        kioku.recall(texts[0], mark=False)  # warm-up: loads the vector cache
        warm_s = time.perf_counter() - t0
        latencies = []
        for text in texts:
            t0 = time.perf_counter()
            kioku.recall(text)
            latencies.append(time.perf_counter() - t0)
        # The floor: numpy alone over the same vectors (matrix in memory, query embedded).
        embedder = kioku.embedder
        matrix = _matrix(Path(home) / "memories.db", embedder.model_id)
        floor = []
        for text in texts:
            t0 = time.perf_counter()
            q = embedder.embed([text])[0]
            scores = matrix @ q
            top = np.argpartition(-scores, 100)[:100]
            top[np.argsort(-scores[top])]
            floor.append(time.perf_counter() - t0)
    return {
        "memories": size,
        "fill_seconds": round(fill_s, 1),
        "first_query_seconds": round(warm_s, 3),
        "queries": len(latencies),
        "recall_p50_ms": round(_p(latencies, 0.5), 2),
        "recall_p95_ms": round(_p(latencies, 0.95), 2),
        "floor_p50_ms": round(_p(floor, 0.5), 2),
        "floor_p95_ms": round(_p(floor, 0.95), 2),
        "ratio_p95": round(_p(latencies, 0.95) / max(_p(floor, 0.95), 1e-9), 2),
        "mean_ms": round(statistics.mean(latencies) * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="36500")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    for size in (int(s) for s in args.sizes.split(",") if s):
        r = measure(size, args.queries, args.seed)
        if args.json:
            print(json.dumps(r), flush=True)
            continue
        print(
            f"{r['memories']:>9,} memories (filled in {r['fill_seconds']} s; first query "
            f"{r['first_query_seconds']} s)\n"
            f"   recall p50 {r['recall_p50_ms']} ms  p95 {r['recall_p95_ms']} ms   "
            f"numpy floor p50 {r['floor_p50_ms']} ms  p95 {r['floor_p95_ms']} ms   "
            f"ratio p95 {r['ratio_p95']}×",
            flush=True,
        )


if __name__ == "__main__":
    main()
