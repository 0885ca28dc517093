#!/usr/bin/env python3
"""Abstention on LoCoMo: off-topic prompts should inject nothing.

    python benchmarks/abstention.py --data ../shared/data/locomo/locomo_dev.json [--json]

Each conversation is remembered into its own store, as in ``benchmarks/locomo.py`` (one memory
per turn, the offline analyzer and embedder, each session at its real date). Every question of
a conversation is then recalled, with the default configuration (top_k, the relevance floor),
against the store of each OTHER conversation: a question about Caroline's painting put to a
store of Jon's and Gina's talks is off topic there, and the right answer is to inject nothing.
Each recall runs in a session whose mood is the store's most intense memory, so emotional
resonance is at its strongest and cannot be what lets an unrelated memory in.

Reported: the share of (question, other store) pairs whose recall injects nothing, per asking
conversation and overall, and for contrast on each question's own store: the share answered
(something injected) and the evidence recall of what is injected (the evidence turns among
the injected memories), and ``R@10``: the evidence recall of a recall with ``top_k`` 10 and
the floor on (``locomo.py`` measures the ranking with no floor; ``--min-relevance 0`` here
gives that figure in the same run).
Each run measures the default qualification, the same without ``require_known_names``, and
no qualification at all (floor 0, names not required: every candidate may be injected), the
reference for R@10. ``--min-relevance`` measures other floors (``[retrieval] min_relevance``)
instead of the default one, to see the trade-off.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import evidence_ids, ingest, question_time

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.config.schema import RetrievalConfig
from kioku.service.recall.mood import SessionMood, session_key

SESSION = "abstention"
DEFAULTS = RetrievalConfig()


def _set_mood(kioku: Kioku) -> None:
    """The session's mood: the store's most intense memory (ties: the newest)."""
    strongest = max(
        kioku.list(limit=100_000), key=lambda m: (m.emotional_intensity, m.created.isoformat())
    )
    kioku.store.set_state(session_key(SESSION), SessionMood.of(strongest).to_json())


def measure(
    samples: list[dict[str, Any]],
    stores: dict[str, Kioku],
    floor: float | None,
    names: bool | None = None,
    prime: bool = False,
) -> dict[str, Any]:
    """Every question against every store, with ``floor`` as the relevance floor and
    ``names`` as ``require_known_names`` (None: the configured ones). With ``prime`` a
    prompt counts as answered or abstained by the primed block (every channel), as the
    UserPromptSubmit hook injects it, instead of the episodes' block alone."""
    abstained: dict[str, list[bool]] = {s["sample_id"]: [] for s in samples}
    answered: dict[str, list[bool]] = {s["sample_id"]: [] for s in samples}
    evidence: dict[str, list[float]] = {s["sample_id"]: [] for s in samples}
    recall10: dict[str, list[float]] = {s["sample_id"]: [] for s in samples}
    for kioku in stores.values():
        retrieval = replace(
            DEFAULTS,
            min_relevance=DEFAULTS.min_relevance if floor is None else floor,
            require_known_names=DEFAULTS.require_known_names if names is None else names,
        )
        kioku.config = replace(kioku.config, retrieval=retrieval)
    for sample in samples:
        conv_id = sample["sample_id"]
        for qa in sample["qa"]:
            for other, kioku in stores.items():
                result = kioku.recall(qa["question"], session_id=SESSION, mark=False)
                block = result.block
                if prime:
                    block = kioku.prime(qa["question"], session_id=SESSION, mark=False).block
                if other != conv_id:
                    abstained[conv_id].append(not block)
                    continue
                answered[conv_id].append(bool(block))
                wanted = evidence_ids(qa.get("evidence", []))
                if wanted and int(qa.get("category", 0)) != 5:
                    found = {s for i in result.items for s in i.memory.source_ids}
                    evidence[conv_id].append(len(wanted & found) / len(wanted))
                    top10 = kioku.recall(qa["question"], top_k=10, session_id=SESSION, mark=False)
                    found = {s for i in top10.items[:10] for s in i.memory.source_ids}
                    recall10[conv_id].append(len(wanted & found) / len(wanted))
    share = {c: round(sum(v) / len(v), 3) for c, v in abstained.items() if v}
    pooled = [x for v in abstained.values() for x in v]
    own = [x for v in answered.values() for x in v]
    retrieval = next(iter(stores.values())).config.retrieval
    return {
        "block": "primed" if prime else "episodes",
        "min_relevance": retrieval.min_relevance,
        "require_known_names": retrieval.require_known_names,
        "off_topic_prompts": len(pooled),
        "abstention": round(sum(pooled) / len(pooled), 3) if pooled else None,
        "abstention_per_conversation": share,
        "abstention_spread": [min(share.values()), max(share.values())] if share else None,
        "abstention_stdev": round(statistics.pstdev(share.values()), 3) if share else None,
        "own_store_answered": round(sum(own) / len(own), 3) if own else None,
        "own_store_answered_per_conversation": {
            c: round(sum(v) / len(v), 3) for c, v in answered.items() if v
        },
        "own_store_injected_evidence_recall": round(
            statistics.mean(x for v in evidence.values() for x in v), 3
        ),
        "own_store_r10": round(statistics.mean(x for v in recall10.values() for x in v), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--limit", type=int, default=0, help="only the first N conversations")
    parser.add_argument(
        "--min-relevance",
        default="",
        help="floors to measure instead of the configured one, comma-separated (0.3,0.4)",
    )
    parser.add_argument(
        "--prime",
        action="store_true",
        help="judge by the primed block the hook injects (every channel), not recall's",
    )
    args = parser.parse_args()
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.limit:
        samples = samples[: args.limit]
    floors = [float(f) for f in args.min_relevance.split(",") if f] or [None]
    # Every run also measures recall with no qualification at all (floor 0, names not
    # required), the reference for how much recall on the right store the floor costs.
    series: list[tuple[float | None, bool | None]] = [(0.0, False)]
    series += [(floor, names) for floor in floors for names in (None, False)]
    started = time.perf_counter()
    reports = []
    with tempfile.TemporaryDirectory() as home:
        stores: dict[str, Kioku] = {}
        try:
            for sample in samples:
                conv_id = sample["sample_id"]
                clock = FixedClock(question_time(sample["conversation"]))
                kioku = Kioku.open(Path(home) / conv_id, clock=clock, env={})
                stores[conv_id] = kioku
                ingest(kioku, sample["conversation"])
                _set_mood(kioku)
            reports = [
                measure(samples, stores, floor, names, args.prime) for floor, names in series
            ]
        finally:
            for kioku in stores.values():
                kioku.close()
    seconds = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps({"seconds": seconds, "runs": reports}, indent=2))
        return
    reference = reports[0]["own_store_r10"]
    for report in reports:
        share = report["abstention_per_conversation"]
        print(
            f"min_relevance {report['min_relevance']}, require_known_names "
            f"{report['require_known_names']}: {report['off_topic_prompts']} off-topic"
        )
        print(f"  abstention (nothing injected): {report['abstention']}")
        for conv, value in share.items():
            print(f"    questions of {conv} asked elsewhere: {value}")
        print(f"    spread {report['abstention_spread']}, stdev {report['abstention_stdev']}")
        print(
            f"  own store: answered {report['own_store_answered']}, evidence recall of the "
            f"injected block {report['own_store_injected_evidence_recall']}, "
            f"R@10 (top_k 10) {report['own_store_r10']} "
            f"({report['own_store_r10'] - reference:+.3f} against no qualification)"
        )
    print(f"{seconds} s in all")


if __name__ == "__main__":
    main()
