"""Steady-state speed of the offline analyzer: milliseconds per turn, English and Japanese.

Usage::

    python benchmarks/analyzer_speed.py [--rounds 3] [--json]
    python benchmarks/analyzer_speed.py --compare OLD_SRC NEW_SRC [--pairs 5]

English turns are the LoCoMo dev conversations (``../shared/data/locomo/locomo_dev.json``, or
``--locomo``); Japanese turns are the Japanese emotion sets in ``benchmarks/data``. Every text is
analysed once to warm up (lexicons, memos, the Japanese dictionary), then each set is timed
``--rounds`` times as ``OfflineAnalyzer.analyze(Turn(user=text))``; the best round is reported.
Time is the process's CPU time, so other work on a shared machine disturbs it less than wall
time would.

``--compare`` runs the measurement in fresh processes with ``PYTHONPATH`` set to each of two
source trees (e.g. a ``git worktree`` of an older commit and ``src``), alternating them
``--pairs`` times, and prints the median and range of each and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_LOCOMO = HERE.parent.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
JAPANESE_SETS = ("emotion_2l_ja.jsonl", "emotion_ja_dev.jsonl")


def english_turns(locomo: Path) -> list[str]:
    """Every turn's text in the LoCoMo file, in order."""
    data = json.loads(locomo.read_text(encoding="utf-8"))
    return [
        turn["text"]
        for conversation in data
        for key, turns in conversation["conversation"].items()
        if key.startswith("session_") and not key.endswith("date_time")
        for turn in turns
    ]


def japanese_turns() -> list[str]:
    texts: list[str] = []
    for name in JAPANESE_SETS:
        for line in (HERE / "data" / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.append(json.loads(line)["text"])
    return texts


def measure(locomo: Path, rounds: int) -> dict[str, float | int]:
    """Best-of-``rounds`` ms per turn for each language, in this process."""
    from kioku.adapters.analyzers.offline import OfflineAnalyzer
    from kioku.ports.analyzer import Turn

    sets = {"en": english_turns(locomo), "ja": japanese_turns()}
    analyzer = OfflineAnalyzer()
    for texts in sets.values():
        for text in texts:
            analyzer.analyze(Turn(user=text))
    out: dict[str, float | int] = {}
    for lang, texts in sets.items():
        best = float("inf")
        for _ in range(rounds):
            start = time.process_time()
            for text in texts:
                analyzer.analyze(Turn(user=text))
            best = min(best, time.process_time() - start)
        out[f"{lang}_ms_per_turn"] = round(best * 1000 / len(texts), 4)
        out[f"{lang}_turns"] = len(texts)
    return out


def compare(old: str, new: str, pairs: int, locomo: Path, rounds: int) -> None:
    """Alternate fresh processes on two source trees; print medians, ranges and ratios."""
    results: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for _ in range(pairs):
        for label, src in (("old", old), ("new", new)):
            env = dict(os.environ, PYTHONPATH=src)
            cmd = [sys.executable, __file__, "--json", "--rounds", str(rounds)]
            cmd += ["--locomo", str(locomo)]
            run = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            results[label].append(json.loads(run.stdout))
    for lang in ("en", "ja"):
        key = f"{lang}_ms_per_turn"
        medians = {}
        for label in ("old", "new"):
            values = [r[key] for r in results[label]]
            medians[label] = statistics.median(values)
            print(
                f"{lang} {label}: median {medians[label]:.4f} ms/turn "
                f"(min {min(values):.4f}, max {max(values):.4f}, n={len(values)})"
            )
        pair_ratios = [
            round(o[key] / n[key], 2) for o, n in zip(results["old"], results["new"], strict=True)
        ]
        print(f"{lang} old/new: {medians['old'] / medians['new']:.2f}x (pairs: {pair_ratios})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--locomo", type=Path, default=DEFAULT_LOCOMO)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--compare", nargs=2, metavar=("OLD_SRC", "NEW_SRC"))
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    if args.compare:
        compare(args.compare[0], args.compare[1], args.pairs, args.locomo, args.rounds)
        return
    result = measure(args.locomo, args.rounds)
    if args.json:
        print(json.dumps(result))
        return
    for lang in ("en", "ja"):
        ms = result[f"{lang}_ms_per_turn"]
        print(f"{lang}: {ms:.4f} ms per turn ({result[f'{lang}_turns']} turns)")


if __name__ == "__main__":
    main()
