"""Merge two independent labellings of an emotion set and report how far the labellers agree.

Usage::

    python benchmarks/label_agreement.py --dir benchmarks/data/emotion_2l --lang ja \\
        [--write benchmarks/data/emotion_2l_ja.jsonl] [--disagreements FILE] [--json]

``DIR`` holds ``texts_LANG.jsonl`` (id, lang, genre, text), ``labels_a_LANG.jsonl`` and
``labels_b_LANG.jsonl`` (id, valence, intensity, arousal, tags, category, protected: one labeller
each, made without seeing the other's) and optionally ``adjudication_LANG.jsonl`` (id and any of
valence, category, protected: a third reading of the items the two disagreed on).

Merging rules:

* valence, category, protected: the labellers' value when they agree, else the adjudicated one;
  without an adjudication the item keeps labeller A's value and is counted as unresolved.
* intensity and arousal: the mean of the two, rounded.
* tags: the tags both chose (in A's order); when they share none but the merged valence is not
  neutral, the first tag of each labeller whose valence matches it.
* split: ``tune`` or ``check`` by ``sha256(id) % 2`` (0 is tune), fixed once written.

Agreement: raw agreement and Cohen's kappa for valence, category and protected; Spearman and mean
absolute difference for intensity and arousal; tag micro-F1 of B against A.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from analyzer_eval import hash_split, load, spearman

NOMINAL = ("valence", "category", "protected")


def kappa(a: Sequence[object], b: Sequence[object]) -> float:
    """Cohen's kappa of two labellings of the same items."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    return 1.0 if expected == 1 else (observed - expected) / (1 - expected)


def merge_tags(a: dict[str, Any], b: dict[str, Any], valence: str) -> list[str]:
    shared = [t for t in a["tags"] if t in b["tags"]]
    if shared or valence == "neutral":
        return shared[:3]
    firsts = [r["tags"][0] for r in (a, b) if r["valence"] == valence and r["tags"]]
    return list(dict.fromkeys(firsts))[:3]


def merge(
    texts: list[dict[str, Any]],
    labels_a: dict[str, dict[str, Any]],
    labels_b: dict[str, dict[str, Any]],
    adjudicated: dict[str, dict[str, Any]],
) -> tuple[list[dict[str, Any]], int]:
    merged: list[dict[str, Any]] = []
    unresolved = 0
    for text in texts:
        a, b = labels_a[text["id"]], labels_b[text["id"]]
        fields: dict[str, Any] = {}
        for key in NOMINAL:
            if a[key] == b[key]:
                fields[key] = a[key]
            elif key in adjudicated.get(text["id"], {}):
                fields[key] = adjudicated[text["id"]][key]
            else:
                fields[key] = a[key]
                unresolved += 1
        merged.append(
            {
                "id": text["id"],
                "lang": text["lang"],
                "genre": text["genre"],
                "split": hash_split(text["id"]),
                "text": text["text"],
                "valence": fields["valence"],
                "intensity": round((a["intensity"] + b["intensity"]) / 2),
                "arousal": round((a["arousal"] + b["arousal"]) / 2),
                "tags": merge_tags(a, b, fields["valence"]),
                "category": fields["category"],
                "protected": fields["protected"],
            }
        )
    return merged, unresolved


def agreement(
    ids: list[str], labels_a: dict[str, dict[str, Any]], labels_b: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    a = [labels_a[i] for i in ids]
    b = [labels_b[i] for i in ids]
    out: dict[str, Any] = {"n": len(ids)}
    for key in NOMINAL:
        xs, ys = [r[key] for r in a], [r[key] for r in b]
        out[f"{key}_agreement"] = round(
            sum(x == y for x, y in zip(xs, ys, strict=True)) / len(xs), 3
        )
        out[f"{key}_kappa"] = round(kappa(xs, ys), 3)
    for key in ("intensity", "arousal"):
        xs, ys = [float(r[key]) for r in a], [float(r[key]) for r in b]
        out[f"{key}_spearman"] = round(spearman(xs, ys), 3)
        out[f"{key}_mean_abs_diff"] = round(
            sum(abs(x - y) for x, y in zip(xs, ys, strict=True)) / len(xs), 1
        )
    tp = sum(len(set(x["tags"]) & set(y["tags"])) for x, y in zip(a, b, strict=True))
    na, nb = sum(len(x["tags"]) for x in a), sum(len(y["tags"]) for y in b)
    out["tag_f1_b_vs_a"] = round(2 * tp / (na + nb), 3) if na + nb else 1.0
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--lang", required=True)
    parser.add_argument("--write", type=Path, help="write the merged set here")
    parser.add_argument("--disagreements", type=Path, help="write the items to adjudicate here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    texts = load([args.dir / f"texts_{args.lang}.jsonl"])
    labels_a = {r["id"]: r for r in load([args.dir / f"labels_a_{args.lang}.jsonl"])}
    labels_b = {r["id"]: r for r in load([args.dir / f"labels_b_{args.lang}.jsonl"])}
    adj_path = args.dir / f"adjudication_{args.lang}.jsonl"
    adjudicated = {r["id"]: r for r in load([adj_path])} if adj_path.exists() else {}
    ids = [t["id"] for t in texts]
    missing = [i for i in ids if i not in labels_a or i not in labels_b]
    if missing:
        print(f"labels missing for {len(missing)} ids, e.g. {missing[:3]}", file=sys.stderr)
        return 2
    merged, unresolved = merge(texts, labels_a, labels_b, adjudicated)
    report = {
        "all": agreement(ids, labels_a, labels_b),
        "check": agreement([m["id"] for m in merged if m["split"] == "check"], labels_a, labels_b),
        "unresolved": unresolved,
        "split": dict(Counter(m["split"] for m in merged)),
        "valence": dict(Counter(m["valence"] for m in merged)),
        "category": dict(Counter(m["category"] for m in merged)),
        "genre": dict(Counter(m["genre"] for m in merged)),
    }
    if args.disagreements:
        with args.disagreements.open("w", encoding="utf-8") as fh:
            for text in texts:
                a, b = labels_a[text["id"]], labels_b[text["id"]]
                keys = [k for k in NOMINAL if a[k] != b[k]]
                if keys:
                    row = {"id": text["id"], "text": text["text"], "decide": keys}
                    fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    if args.write:
        with args.write.open("w", encoding="utf-8") as fh:
            for record in merged:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    if args.json:
        json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        for key, value in report.items():
            print(f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
