#!/usr/bin/env python3
"""Consolidation at scale offline, and what a day of it costs with an LLM.

    python benchmarks/consolidation.py --data ../shared/data/locomo/locomo_dev.json \
        [--size 36500] [--runs 3] [--day 100] [--json]

**Scale.** A store of ``--size`` episodes (LoCoMo dev turns, cycled, 100 a day back from the
run's moment; a repeated turn is numbered so none is an exact copy) is built once and copied
for every run. Each run, on its fresh copy, times the first consolidation of the whole store
offline (one daily period over every episode: classification, extraction, de-duplication,
lexical validation, writing, downscaling, contradiction rules, and the weekly and monthly
steps due that day), then, as the baseline, one ordinary day: ``--day`` new episodes
consolidated on top of it. Medians, the spread (min–max) and the ratio are printed. The store
is fixed: no nightly batch runs, no daemon.

**Cost.** One day of ``--day`` LoCoMo turns is consolidated by an LLM analyzer whose wire is
replaced by a scripted model: the real prompts are built and the real parsers read the
answers, and the scripted model answers as a careful model would on this data (the knowledge
it lifts is what the offline extractor lifts; every candidate is supported; no contradiction).
The calls per task and their tokens (kioku's calibrated estimate of the prompt and the answer)
are printed with the cost at Claude Haiku 4.5 prices and at the Haiku 3.5 prices of spec 004's
estimate (§6.1: $0.00055 per memory).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from kioku import Kioku
from kioku.adapters.analyzers.llm.base import ChatAnalyzer, Reply
from kioku.adapters.analyzers.llm.prompts import Prompt
from kioku.adapters.clock import FixedClock
from kioku.core.consolidation.extract import extract_knowledge, extract_procedures
from kioku.core.consolidation.model import Source
from kioku.core.model import Level, Memory, Valence
from kioku.core.tokens import EstimateCounter

TOKYO = ZoneInfo("Asia/Tokyo")
END = datetime(2026, 11, 1, 3, 30, tzinfo=TOKYO)
#: USD per million tokens (input, output).
HAIKU_45 = (1.0, 5.0)
HAIKU_35 = (0.25, 1.25)
SPEC_004_PER_MEMORY = 0.00055


def turns(data: Path) -> list[str]:
    """Every LoCoMo dev turn, as ``speaker: text``."""
    out: list[str] = []
    for conv in json.loads(data.read_text()):
        sessions = conv["conversation"]
        for key in sorted(sessions, key=lambda k: (len(k), k)):
            if key.startswith("session_") and not key.endswith("date_time"):
                out += [f"{t['speaker']}: {t['text']}" for t in sessions[key]]
    return out


def build(home: Path, texts: list[str], size: int) -> None:
    """``size`` episodes, 100 a day back from END, at their levels' shapes (Level 1 text)."""
    rng = random.Random(7)
    with Kioku.open(home, env={}, clock=FixedClock(END)) as k:
        memories = []
        for i in range(size):
            created = END - timedelta(days=size // 100 - i // 100, hours=-(i % 100) * 0.1)
            text = texts[i % len(texts)]
            memories.append(
                Memory(
                    id=f"mem_bench_{i:07d}",
                    created=created - timedelta(days=1),
                    trigger=f"{text} ({i // len(texts)})" if i >= len(texts) else text,
                    content="",
                    emotional_intensity=rng.randint(10, 90),
                    emotional_valence=Valence.NEUTRAL,
                    emotional_arousal=40,
                    category="casual",
                    decay_coefficient=0.99,
                    retention_score=50.0,
                    current_level=Level.FULL,
                )
            )
        k.store.add_many(memories)


def timed_run(
    base: Path, work: Path, texts: list[str], day: int
) -> tuple[float, float, dict[str, int]]:
    """On a fresh copy: the first consolidation of the whole store, then one ordinary day of
    ``day`` new episodes on top of it (the baseline); both times and the first run's actions."""
    shutil.copytree(base, work)
    clock = FixedClock(END)
    with Kioku.open(work, env={}, clock=clock) as k:
        started = time.perf_counter()
        report = k.consolidate(now=END)
        first = time.perf_counter() - started
        counts: Counter[str] = Counter()
        for period in report.periods:
            counts.update(period.counts())
        rng = random.Random(len(texts))
        k.store.add_many(
            [
                Memory(
                    id=f"mem_bench_day_{n:05d}",
                    created=END + timedelta(hours=8, minutes=n),
                    trigger=rng.choice(texts),
                    content="",
                    emotional_intensity=50,
                    emotional_valence=Valence.NEUTRAL,
                    emotional_arousal=40,
                    category="casual",
                    decay_coefficient=0.99,
                    retention_score=50.0,
                )
                for n in range(day)
            ]
        )
        started = time.perf_counter()
        k.consolidate(levels=["daily"], now=END + timedelta(days=1))
        ordinary = time.perf_counter() - started
    shutil.rmtree(work)
    return first, ordinary, dict(counts)


class ScriptedModel(ChatAnalyzer):
    """A chat analyzer whose wire is a scripted model; counts calls and tokens per task."""

    def __init__(self) -> None:
        super().__init__(provider="scripted", model="haiku-like", base_url="http://127.0.0.1:9")
        self.counter = EstimateCounter()
        self.calls: Counter[str] = Counter()
        self.tokens: Counter[str] = Counter()

    def _complete(self, prompt: Prompt) -> Reply:
        from kioku.adapters.text.lexical import index_terms

        first = prompt.system.partition("\n")[0]
        task = first.removeprefix("kioku-task:").strip() if "kioku-task:" in first else "analyze"
        answer: dict[str, Any]
        episodes = _episodes(prompt.user)
        if task == "extract_knowledge":
            lifted = extract_knowledge(episodes, index_terms)
            answer = {
                "knowledge": [
                    {"title": c.title, "text": c.text, "sources": list(c.sources)}
                    for c in lifted[:50]
                ]
            }
        elif task == "distil_procedures":
            found = extract_procedures(episodes, index_terms)
            answer = {
                "procedures": [
                    {
                        "title": p.title,
                        "description": p.description,
                        "steps": list(p.steps),
                        "sources": list(p.sources),
                    }
                    for p in found[:50]
                ]
            }
        elif task == "review_knowledge":
            answer = {"reason": "the source states it", "supported": True}
        elif task == "judge_conflict":
            answer = {
                "contradicts": False,
                "strategy": None,
                "merged_text": None,
                "condition": None,
                "reason": "compatible",
            }
        elif task == "reconsolidate":
            answer = {"update": False, "text": None}
        else:
            answer = {"outcome": "unknown"}
        text = json.dumps(answer, ensure_ascii=False)
        used_in = self.counter.count(prompt.system) + self.counter.count(prompt.user)
        used_out = self.counter.count(text)
        self.calls[task] += 1
        self.tokens[f"{task}:in"] += used_in
        self.tokens[f"{task}:out"] += used_out
        return Reply(text, used_in, used_out)


def _episodes(user: str) -> list[Source]:
    import html
    import re

    found = re.findall(r'<episode id="([^"]*)"[^>]*>(.*?)</episode>', user, re.S)
    return [Source(html.unescape(i), html.unescape(t), END) for i, t in found]


def llm_day(texts: list[str], day: int) -> dict[str, Any]:
    """One day of ``day`` turns consolidated by the scripted model; calls and tokens."""
    model = ScriptedModel()
    with tempfile.TemporaryDirectory() as tmp:
        clock = FixedClock(END - timedelta(days=1))
        with Kioku.open(Path(tmp) / "home", env={}, clock=clock) as offline:
            for n, text in enumerate(texts[:day]):
                offline.remember_turn(text, "", at=END - timedelta(hours=20) + timedelta(minutes=n))
        with Kioku.open(Path(tmp) / "home", env={}, clock=FixedClock(END), analyzer=model) as k:
            k.consolidate(levels=["daily"], now=END)
    calls = sum(model.calls.values())
    tokens_in = sum(v for k, v in model.tokens.items() if k.endswith(":in"))
    tokens_out = sum(v for k, v in model.tokens.items() if k.endswith(":out"))

    def usd(prices: tuple[float, float]) -> float:
        return (tokens_in * prices[0] + tokens_out * prices[1]) / 1_000_000

    return {
        "episodes": day,
        "calls": calls,
        "calls_by_task": dict(model.calls),
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "usd_haiku_4_5": round(usd(HAIKU_45), 5),
        "usd_haiku_3_5": round(usd(HAIKU_35), 5),
        "spec_004_estimate_usd": round(SPEC_004_PER_MEMORY * day, 5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo/locomo_dev.json"))
    parser.add_argument("--size", type=int, default=36_500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--day", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    texts = turns(args.data)
    result: dict[str, Any] = {"size": args.size, "runs": args.runs}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        started = time.perf_counter()
        build(base, texts, args.size)
        result["build_seconds"] = round(time.perf_counter() - started, 1)
        consolidation: list[float] = []
        daily: list[float] = []
        counts: dict[str, int] = {}
        for run in range(args.runs):
            first, ordinary, counts = timed_run(base, Path(tmp) / f"c{run}", texts, args.day)
            consolidation.append(first)
            daily.append(ordinary)
    c_med, d_med = statistics.median(consolidation), statistics.median(daily)
    result["consolidation_seconds"] = {
        "median": round(c_med, 2),
        "min": round(min(consolidation), 2),
        "max": round(max(consolidation), 2),
    }
    result["ordinary_day_seconds"] = {
        "median": round(d_med, 2),
        "min": round(min(daily), 2),
        "max": round(max(daily), 2),
    }
    result["ratio_to_ordinary_day"] = round(c_med / d_med, 1) if d_med else None
    result["actions"] = counts
    result["llm_day"] = llm_day(texts, args.day)
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    c, b = result["consolidation_seconds"], result["ordinary_day_seconds"]
    print(f"{args.size:,} episodes, {args.runs} runs, each on a fresh copy")
    for label, x in (("first consolidation, all at once", c), (f"one day of {args.day}", b)):
        print(f"  {label:<34} median {x['median']} s (min {x['min']}, max {x['max']})")
    print(f"  ratio {result['ratio_to_ordinary_day']}")
    print(f"  actions {counts}")
    d = result["llm_day"]
    print(
        f"one day of {d['episodes']} episodes with an LLM: {d['calls']} calls {d['calls_by_task']}"
    )
    print(f"  tokens in {d['input_tokens']:,}, out {d['output_tokens']:,}")
    print(
        f"  ${d['usd_haiku_4_5']} at Haiku 4.5 prices, ${d['usd_haiku_3_5']} at Haiku 3.5 "
        f"prices; spec 004's estimate for {d['episodes']} memories: ${d['spec_004_estimate_usd']}"
    )


if __name__ == "__main__":
    main()
