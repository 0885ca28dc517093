#!/usr/bin/env python3
"""A simulated month of a user in a low mood: does what is primed stay balanced?

    python benchmarks/mood_month.py [--days 30] [--prompts 8] [--seed 7] [--json]

The store starts with memories on twelve topics of a life (work, family, a garden, running,
...): per topic two positive, one neutral, one mildly negative and three negative memories of
high intensity (70-90), each with its own detail words. Every day the user, in a low mood,
says two negative, intense things (remembered), and the session's mood before each prompt is
the last of them (現在の感情状態: the user stays low), so resonance favours negative memories.
Then come ``--prompts`` prompts, alternately about a topic in general ("How are things with
the garden?") and about one memory: its topic and detail words name it, its relevant memory
(half of these a positive memory, a quarter a mildly negative one, a quarter a negative
intense one). Each prompt is primed (spec 001) as the hooks do, marking what it brings.

Four runs on fresh stores with the same data: the safeguards off (no limiter, no shift), the
mood shift alone, the limiter alone (the default ``[mood]``), and the limiter with the shift.
Reported per day: the negative share and the negative high-intensity share of what was primed
(from ``kioku stats``' monitor, :func:`kioku.service.recall.balance.mood_balance`), and overall
the share of prompts whose relevant memory was primed, also per tone of that memory.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.config.schema import MoodConfig
from kioku.service.recall.balance import mood_balance
from kioku.service.recall.mood import SessionMood, session_key

TOKYO = ZoneInfo("Asia/Tokyo")
START = datetime(2026, 3, 1, 8, 0, tzinfo=TOKYO)
TOPICS = {
    "work": "project deadline office",
    "family": "mother father home",
    "garden": "garden plants balcony",
    "running": "running race park",
    "cooking": "cooking kitchen dinner",
    "music": "piano music lesson",
    "friends": "friends weekend cafe",
    "health": "doctor clinic checkup",
    "travel": "trip train hotel",
    "study": "exam course library",
    "money": "rent savings bank",
    "pet": "cat vet food",
}
POSITIVE = (
    "it went wonderfully and I felt proud and happy",
    "we laughed a lot, a warm and joyful day",
)
NEUTRAL = ("nothing special, just a plain note",)
MILD = ("it was a little disappointing",)
HEAVY = (
    "I felt crushed and hopeless, it hurt so much",
    "I was furious and ashamed, I could not sleep",
    "it was awful, I cried and felt worthless",
)
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
CONFIGS = {
    "off": MoodConfig(limiter=False, shift=False),
    "shift": MoodConfig(limiter=False, shift=True),
    "limiter": MoodConfig(),
    "limiter+shift": MoodConfig(shift=True),
}


def _detail(rng: random.Random, used: set[str]) -> str:
    """Two made-up words that name one memory's detail (unique in the store)."""
    while True:
        words = " ".join("".join(rng.choice(SYLLABLES) for _ in range(3)) for _ in range(2))
        if words not in used:
            used.add(words)
            return words


def _plan(seed: int, days: int, prompts: int) -> dict[str, Any]:
    """The memories and the month's turns, the same for every run."""
    rng = random.Random(seed)
    used: set[str] = set()
    memories: list[dict[str, Any]] = []
    for topic, words in TOPICS.items():
        tones = ["positive"] * 2 + ["neutral"] + ["mild"] + ["heavy"] * 3
        for tone in tones:
            memories.append(
                {"topic": topic, "words": words, "tone": tone, "detail": _detail(rng, used)}
            )
    month = []
    for _ in range(days):
        said = [
            {"topic": t, "words": TOPICS[t], "tone": "heavy", "detail": _detail(rng, used)}
            for t in rng.sample(sorted(TOPICS), 2)
        ]
        asked: list[dict[str, Any] | str] = []
        for n in range(prompts):
            if n % 2:
                asked.append(rng.choice(sorted(TOPICS)))
                continue
            tone = ("positive", "mild", "positive", "heavy")[(n // 2) % 4]
            pool = [m for m in memories if m["tone"] == tone]
            asked.append(rng.choice(pool))
        month.append({"said": said, "asked": asked})
    return {"memories": memories, "month": month}


def _remember(kioku: Kioku, m: dict[str, Any], at: datetime, session: str | None) -> str:
    tone = m["tone"]
    text = {
        "positive": POSITIVE,
        "neutral": NEUTRAL,
        "mild": MILD,
        "heavy": HEAVY,
    }[tone][len(m["detail"]) % (3 if tone == "heavy" else 2 if tone == "positive" else 1)]
    valence = {"positive": "positive", "neutral": "neutral"}.get(tone, "negative")
    intensity = {"positive": 55, "neutral": 25, "mild": 40, "heavy": 80}[tone]
    tags = {"positive": ["joy"], "neutral": [], "mild": ["regret"]}.get(tone, ["sadness", "anger"])
    stored = kioku.remember(
        f"about the {m['words']}: {m['detail']}",
        f"{m['words']} {m['detail']}: {text}",
        intensity=intensity,
        category="emotional" if tone == "heavy" else "casual",
        valence=valence,
        arousal=30 if tone == "heavy" else 50,
        tags=tags,
        at=at,
        session_id=session,
    )
    return stored.id


def run(plan: dict[str, Any], mood: MoodConfig, home: Path) -> dict[str, Any]:
    """One month on a fresh store with ``mood`` as the ``[mood]`` section."""
    clock = FixedClock(START - timedelta(days=1))
    hits = {"positive": [0, 0], "mild": [0, 0], "heavy": [0, 0]}
    took: list[float] = []
    with Kioku.open(home, clock=clock, env={}) as kioku:
        kioku.config = replace(kioku.config, mood=mood)
        ids: dict[str, str] = {}
        for n, m in enumerate(plan["memories"]):
            at = START - timedelta(days=60 - n % 50, hours=n % 7)
            ids[m["detail"]] = _remember(kioku, m, at, None)
        for day, turns in enumerate(plan["month"]):
            now = START + timedelta(days=day)
            clock.advance(now - clock.now())
            session = f"day-{day + 1}"
            for m in turns["said"]:
                ids[m["detail"]] = _remember(kioku, m, clock.now(), session)
                clock.advance(timedelta(minutes=5))
            low = kioku.get(ids[turns["said"][-1]["detail"]])
            for m in turns["asked"]:
                # The user stays low: each prompt comes after another such turn.
                kioku.store.set_state(session_key(session), SessionMood.of(low).to_json())
                started = time.perf_counter()
                if isinstance(m, str):
                    kioku.prime(f"How are things with the {TOPICS[m]}?", session_id=session)
                else:
                    primed = kioku.prime(
                        f"Do you remember the {m['words']}, {m['detail']}?", session_id=session
                    )
                    hits[m["tone"]][0] += ids[m["detail"]] in primed.memory_ids
                    hits[m["tone"]][1] += 1
                took.append(time.perf_counter() - started)
                clock.advance(timedelta(minutes=20))
        balance = mood_balance(kioku, len(plan["month"]))
    days = balance.as_dict()["days"]
    assert isinstance(days, list)
    found = sum(h[0] for h in hits.values())
    asked = sum(h[1] for h in hits.values())
    return {
        "days": [
            {
                "day": d["day"],
                "negative_share": d["negative_share"],
                "high_intensity_share": d["high_intensity_share"],
                "total": d["total"],
            }
            for d in days
        ],
        "negative_share": balance.as_dict()["negative_share"],
        "high_intensity_share": balance.as_dict()["high_intensity_share"],
        "relevant_recall": round(found / asked, 4),
        "relevant_recall_by_tone": {k: round(h[0] / h[1], 4) for k, h in hits.items() if h[1]},
        "prime_ms_median": round(1000 * statistics.median(took), 1),
        "worst_day_high_intensity_share": max(
            (d["high_intensity_share"] for d in days if d["high_intensity_share"] is not None),
            default=None,
        ),
    }


def latency(home: Path, count: int, days: int) -> dict[str, float]:
    """Median milliseconds of a prime (nothing marked) about a topic in a low mood, on the
    store a month left, with the limiter on and off in turn (the same load for both)."""
    clock = FixedClock(START + timedelta(days=days))
    took: dict[str, list[float]] = {"on": [], "off": []}
    topics = sorted(TOPICS)
    with Kioku.open(home, clock=clock, env={}) as kioku:
        low = max(kioku.list(limit=100_000), key=lambda m: (m.emotional_intensity, m.id))
        kioku.store.set_state(session_key("latency"), SessionMood.of(low).to_json())
        for n in range(2 * count):
            mode = ("on", "off")[(n + n // 2) % 2]
            kioku.config = replace(kioku.config, mood=MoodConfig(limiter=mode == "on"))
            started = time.perf_counter()
            kioku.prime(
                f"How are things with the {TOPICS[topics[n % 12]]}?",
                mark=False,
                session_id="latency",
            )
            took[mode].append(time.perf_counter() - started)
    return {mode: round(1000 * statistics.median(values), 2) for mode, values in took.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--latency",
        type=int,
        default=0,
        metavar="N",
        help="also time N primes on the month's store with the limiter on and off, in turn",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    plan = _plan(args.seed, args.days, args.prompts)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, mood in CONFIGS.items():
            results[name] = run(plan, mood, Path(tmp) / name)
        if args.latency:
            results["latency_ms"] = latency(Path(tmp) / "limiter", args.latency, len(plan["month"]))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    timing = results.pop("latency_ms", None)
    names = list(results)
    print("day         " + "  ".join(f"{n:>22}" for n in names))
    print("            " + "  ".join(f"{'negative  neg.intense':>22}" for _ in names))
    for i, day in enumerate(results[names[0]]["days"]):
        cells = []
        for n in names:
            d = results[n]["days"][i]
            neg, heavy = d["negative_share"], d["high_intensity_share"]
            cells.append(f"{neg:>9.0%}  {heavy:>11.0%}" if neg is not None else f"{'-':>22}")
        print(f"{day['day']}  " + "  ".join(f"{c:>22}" for c in cells))
    print()
    for n in names:
        r = results[n]
        tones = "  ".join(f"{k} {v:.0%}" for k, v in r["relevant_recall_by_tone"].items())
        print(
            f"{n:<14} negative {r['negative_share']:.1%}  negative intense "
            f"{r['high_intensity_share']:.1%} (worst day {r['worst_day_high_intensity_share']:.0%})"
            f"  relevant memory primed {r['relevant_recall']:.1%} ({tones})"
            f"  prime median {r['prime_ms_median']} ms"
        )
    if timing:
        print(
            f"prime median on the month's store: limiter on {timing['on']} ms, "
            f"off {timing['off']} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
