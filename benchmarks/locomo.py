#!/usr/bin/env python3
"""LoCoMo evidence recall through kioku itself, with same-run baselines.

    python benchmarks/locomo.py --data ../shared/data/locomo/locomo_dev.json [--forgetting] [--json]
    python benchmarks/locomo.py --data ../shared/data/locomo/locomo_dev.json --deliberate \
        [--age-until YYYY-MM-DD] [--conversations N] [--json]

Each conversation is remembered turn by turn (one memory per turn, image captions as text)
with its session's real date, in its own scope (user id = the conversation id), through
``Kioku.remember_turn`` with the offline analyzer and the configured embedder. Every QA item
is then recalled (top 20, nothing marked) and scored by evidence recall@k: the share of the
question's evidence turns among the memories recalled, matched by their provenance source ids.
Adversarial questions (category 5) are reported apart and left out of "overall".

With ``--forgetting`` the nightly batch runs between sessions at their real dates, so by the
time the questions are asked old turns have been summarised, reduced to keywords or archived
(archive recall on), as they would be for a user; every method then answers from that store.

Methods, all on the same stores in the same run: ``kioku`` (the configured preset),
``bm25`` (BM25 over kioku's query and index terms alone) and ``dense`` (cosine of the
configured embedder alone); the baselines ignore retention, recency, category and
conversation context. Recall@10 is also given per conversation, with how many conversations
kioku wins against each baseline.

With ``--deliberate`` it measures deliberate search (``Kioku.search_memory``) and priming
(``Kioku.prime``) before and after each conversation's store is aged by the nightly batch to
``--age-until`` (default today), with and without original texts kept in cold storage; see
:mod:`locomo_forgetting`.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.config.schema import RetrievalConfig

KS = (1, 5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")
_DATE = "%I:%M %p on %d %B, %Y"
UTC = ZoneInfo("UTC")


def evidence_ids(raw: list[str]) -> set[str]:
    out: set[str] = set()
    for item in raw:
        for part in re.split(r"[;,\s]+", item):
            m = _EVIDENCE.search(part)
            if m:
                out.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def session_dates(conv: dict[str, Any]) -> dict[int, datetime]:
    dates = {}
    for key, value in conv.items():
        m = re.fullmatch(r"session_(\d+)_date_time", key)
        if m:
            dates[int(m.group(1))] = datetime.strptime(value.strip(), _DATE).replace(tzinfo=UTC)
    return dates


def question_time(conv: dict[str, Any]) -> datetime:
    """When the questions are asked: a day after the conversation's last turn (as ingested)."""
    dates = session_dates(conv)
    return max(
        dates[n] + timedelta(seconds=30 * max(0, len(conv.get(f"session_{n}", [])) - 1))
        for n in dates
    ) + timedelta(days=1)


def turn_text(turn: dict[str, Any]) -> str:
    """What is remembered of a turn: ``speaker: text``, an image's caption after it."""
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [image: {turn['blip_caption']}]"
    return text


def turn_id(turn: dict[str, Any]) -> str:
    """The turn's evidence id (``D1:3``), leading zeros and stray colons dropped."""
    return re.sub(r"D:?(\d+):0*(\d+)", r"D\1:\2", turn["dia_id"])


def ingest(
    kioku: Kioku, conv: dict[str, Any], clock: FixedClock | None = None
) -> tuple[int, datetime]:
    """Remember every turn; with ``clock``, run the nightly batches due before each session."""
    dates = session_dates(conv)
    count = 0
    last = datetime(2000, 1, 1, tzinfo=UTC)
    for number in sorted(dates):
        if clock is not None and dates[number] > clock.now():
            clock.advance(dates[number] - clock.now())
            kioku.batch(now=dates[number])
        for offset, turn in enumerate(conv.get(f"session_{number}", [])):
            text, dia = turn_text(turn), turn_id(turn)
            at = dates[number] + timedelta(seconds=30 * offset)
            kioku.remember_turn(
                text, "", at=at, session_id=f"s{number}", source_ids=[dia], source_timestamps=[at]
            )
            count += 1
            last = max(last, at)
    return count, last


def method_config(kioku: Kioku, method: str, forgetting: bool = False) -> None:
    base = kioku.config.retrieval
    if method in ("bm25", "dense"):
        # Plain baselines: the match alone, with no retention, recency or category.
        retrieval = replace(
            RetrievalConfig(),
            vector_weight=1.0 if method == "dense" else 0.0,
            lexical_weight=1.0 if method == "bm25" else 0.0,
            retention_exponent=0.0,
            recency_weight=0.0,
            temporal_recency_weight=0.0,
            category_weight=0.0,
            context_weight=0.0,
        )
    else:
        retrieval = base
    kioku.config = replace(
        kioku.config,
        retrieval=replace(retrieval, relevance_threshold=0.0, min_relevance=0.0, top_k=max(KS)),
        archive=replace(kioku.config.archive, enable_archive_recall=forgetting),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--methods", default="kioku,bm25,dense")
    parser.add_argument(
        "--limit", "--conversations", type=int, default=0, help="only the first N conversations"
    )
    parser.add_argument(
        "--forgetting",
        action="store_true",
        help="run the nightly batches between sessions at their real dates (forgetting on); "
        "archived memories stay searchable, as kioku's archive recall allows",
    )
    parser.add_argument(
        "--deliberate",
        action="store_true",
        help="deliberate search and priming R@10 before and after aging each store by the "
        "nightly batch to --age-until (see benchmarks/locomo_forgetting.py)",
    )
    parser.add_argument(
        "--age-until",
        type=date.fromisoformat,
        default=None,
        metavar="YYYY-MM-DD",
        help="with --deliberate: the last batch day (default: today, UTC)",
    )
    args = parser.parse_args()
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.limit:
        samples = samples[: args.limit]
    if args.deliberate and args.forgetting:
        parser.error("--deliberate ages its own stores: leave out --forgetting")
    if args.deliberate:
        from locomo_forgetting import run

        run(samples, args.age_until or datetime.now(UTC).date(), args.json)
        return
    methods = args.methods.split(",")
    hits: dict[str, dict[str, list[dict[int, float]]]] = {m: defaultdict(list) for m in methods}
    by_conv: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in methods}
    latency: dict[str, list[float]] = {m: [] for m in methods}
    injected: dict[str, list[int]] = {m: [] for m in methods}
    turns = 0
    forgotten: dict[str, dict[str, int]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as home:
        for sample in samples:
            conv_id = sample["sample_id"]
            # Without forgetting the clock stands at question time from the start: a memory
            # may not be dated after "now".
            start = datetime(2000, 1, 1, tzinfo=UTC) if args.forgetting else None
            clock = FixedClock(start or question_time(sample["conversation"]))
            # With forgetting, each conversation has its own store: its batches follow its dates.
            place = Path(home) / conv_id if args.forgetting else Path(home)
            with Kioku.open(place, user_id=conv_id, clock=clock, env={}) as kioku:
                n, last = ingest(kioku, sample["conversation"], clock if args.forgetting else None)
                turns += n
                clock.advance(last + timedelta(days=1) - clock.now())  # questions come after
                if args.forgetting:
                    kioku.batch(now=clock.now())
                    levels = kioku.store.stats(None, None).by_level
                    forgotten[conv_id] = {str(k): v for k, v in sorted(levels.items())}
                defaults = kioku.config
                for method in methods:
                    kioku.config = defaults
                    method_config(kioku, method, args.forgetting)
                    for qa in sample["qa"]:
                        wanted = evidence_ids(qa.get("evidence", []))
                        if not wanted:
                            continue
                        t0 = time.perf_counter()
                        result = kioku.recall(qa["question"], mark=False)
                        latency[method].append(time.perf_counter() - t0)
                        found = [s for item in result.items for s in item.memory.source_ids]
                        scores = {k: len(wanted & set(found[:k])) / len(wanted) for k in KS}
                        cat = CATEGORIES.get(int(qa.get("category", 0)), "other")
                        hits[method][cat].append(scores)
                        if cat != "adversarial":
                            hits[method]["overall"].append(scores)
                            by_conv[method][conv_id].append(scores[10])
                            injected[method].append(len(result.block))
                kioku.config = defaults
    report: dict[str, Any] = {"turns": turns, "seconds": round(time.perf_counter() - started, 1)}
    if args.forgetting:
        report["levels_at_question_time"] = forgotten
    for method in methods:
        rows = {
            cat: {
                "n": len(values),
                **{f"R@{k}": round(sum(v[k] for v in values) / len(values), 3) for k in KS},
            }
            for cat, values in sorted(hits[method].items())
            if values
        }
        lat = sorted(latency[method])
        report[method] = {
            "recall": rows,
            "conversation_R@10": {
                conv: round(sum(values) / len(values), 3)
                for conv, values in by_conv[method].items()
            },
            "p50_ms": round(statistics.median(lat) * 1000, 2) if lat else None,
            "p95_ms": round(lat[int(0.95 * (len(lat) - 1))] * 1000, 2) if lat else None,
            "chars_injected_mean": round(statistics.mean(injected[method]), 1)
            if injected[method]
            else 0,
        }
    if "kioku" in methods:
        mine = report["kioku"]["conversation_R@10"]
        report["kioku_wins_R@10"] = {
            other: sum(1 for c, v in mine.items() if v > report[other]["conversation_R@10"][c])
            for other in methods
            if other != "kioku"
        }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{turns} turns remembered; {report['seconds']} s in all")
    for conv, levels in forgotten.items():
        print(f"  {conv}: memories per level when the questions are asked {levels}")
    for method in methods:
        r = report[method]
        chars = r["chars_injected_mean"]
        print(
            f"\n[{method}]  p50 {r['p50_ms']} ms  p95 {r['p95_ms']} ms  "
            f"<memories> block {chars} chars (~{chars / 4:.0f} tokens)"
        )
        print(f"  {'category':<12} {'n':>4} " + " ".join(f"{'R@' + str(k):>6}" for k in KS))
        for cat, row in r["recall"].items():
            print(f"  {cat:<12} {row['n']:>4} " + " ".join(f"{row[f'R@{k}']:>6}" for k in KS))
    convs = list(report[methods[0]]["conversation_R@10"])
    print(f"\nR@10 per conversation\n  {'method':<8} " + " ".join(f"{c:>8}" for c in convs))
    for method in methods:
        row = report[method]["conversation_R@10"]
        print(f"  {method:<8} " + " ".join(f"{row[c]:>8}" for c in convs))
    for other, wins in report.get("kioku_wins_R@10", {}).items():
        print(f"  kioku wins {wins} of {len(convs)} conversations against {other}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
