#!/usr/bin/env python3
"""Measure profile-claim extraction against the labelled utterances.

    python benchmarks/profile_extraction.py [--data benchmarks/data/profile_extraction.jsonl]
        [--verbose] [--json]

Each JSON line has ``text``, ``lang`` (``en`` or ``ja``) and ``expected``: the claims a careful
reader would take from the utterance, each ``{"kind", "key", "value", "polarity"}``; an empty
list means the utterance must yield nothing (a question, a hypothetical, someone else's
preference, a negation, small talk, a past state).

The lines are split by position: even indexes (0, 2, ...) are ``dev``, odd ones ``test``.
Rules are tuned on dev only; test shows whether that tuning generalises. A claim is correct
when its kind, key and polarity equal an expected claim's and the values match after
normalisation (NFKC, case-folded, whitespace collapsed, surrounding punctuation trimmed); each
expected claim can be matched once. Reported per split and language: precision, recall and F1
over claims, and how many must-be-empty utterances yielded something. ``--verbose`` lists every
false positive and false negative.

Labelling conventions (the extractor follows them; they are stated so labels are consistent):
a preference's value is the topic as written, without a leading "to" ("I like to cook":
"cook") or a Japanese nominaliser (「映画を見るのが好き」: 映画を見る), and "my favourite X is
Y" yields Y; a fact's value drops a leading article ("a small startup": "small startup"); a
count stays with family members and pets ("two kids", 「子供二人」, 「猫2匹」); an age is the
number; each language spoken is its own claim.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any

from kioku.core.profiles import extract_profile_claims

DEFAULT_DATA = Path(__file__).resolve().parent / "data" / "profile_extraction.jsonl"
Claim = tuple[str, str, str, int]


def norm(value: str) -> str:
    """A value as compared: NFKC, case-folded, whitespace collapsed, edge punctuation trimmed."""
    text = " ".join(unicodedata.normalize("NFKC", value).casefold().split())
    return text.strip(" .,!?;:'\"()[]「」『』。、")


def as_claim(item: dict[str, Any]) -> Claim:
    key = str(item["key"])
    if item["kind"] == "preference":
        key = norm(key)
    return str(item["kind"]), key, norm(str(item["value"])), int(item["polarity"])


def match(predicted: list[Claim], expected: list[Claim]) -> tuple[int, list[Claim], list[Claim]]:
    """(true positives, false positives, false negatives), each expected claim used once."""
    left = list(expected)
    wrong = []
    for claim in predicted:
        if claim in left:
            left.remove(claim)
        else:
            wrong.append(claim)
    return len(predicted) - len(wrong), wrong, left


def score(tp: int, fp: int, fn: int) -> dict[str, float]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3)}


def evaluate(rows: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # tp fp fn neg leaks
    errors: list[str] = []
    for index, row in enumerate(rows):
        split = "dev" if index % 2 == 0 else "test"
        claims = extract_profile_claims(row["text"])
        predicted = [(c.kind, c.key, norm(c.value), c.polarity) for c in claims]
        expected = [as_claim(e) for e in row["expected"]]
        tp, fps, fns = match(predicted, expected)
        for group in (split, f"{split}/{row['lang']}", "all"):
            tally = counts[group]
            tally[0] += tp
            tally[1] += len(fps)
            tally[2] += len(fns)
            if not expected:
                tally[3] += 1
                tally[4] += bool(predicted)
        for claim in fps:
            errors.append(f"[{split} #{index}] FP {claim} <- {row['text']!r}")
        for claim in fns:
            errors.append(f"[{split} #{index}] FN {claim} <- {row['text']!r}")
    report = {
        group: {
            **score(*tally[:3]),
            "tp": tally[0],
            "fp": tally[1],
            "fn": tally[2],
            "empty_utterances": tally[3],
            "empty_but_extracted": tally[4],
        }
        for group, tally in sorted(counts.items())
    }
    return report, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--verbose", action="store_true", help="list every error")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text(encoding="utf-8").splitlines() if line]
    started = time.perf_counter()
    report, errors = evaluate(rows)
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps({"seconds": round(seconds, 3), "splits": report}, indent=2))
    else:
        for group, r in report.items():
            print(
                f"{group:8} P {r['precision']:.3f}  R {r['recall']:.3f}  F1 {r['f1']:.3f}  "
                f"(tp {r['tp']}, fp {r['fp']}, fn {r['fn']}; "
                f"{r['empty_but_extracted']}/{r['empty_utterances']} must-be-empty lines leaked)"
            )
        print(f"{len(rows)} utterances in {seconds * 1000:.0f} ms")
    if args.verbose:
        print("\n".join(errors), file=sys.stderr if args.json else sys.stdout)


if __name__ == "__main__":
    main()
