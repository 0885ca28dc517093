"""Measure the offline analyzer against labelled emotion data.

Usage::

    python benchmarks/analyzer_eval.py --data benchmarks/data/emotion_ja_dev.jsonl \\
        --data ../shared/data/emotion/goemotions_dev.jsonl [--split check] [--json] [--errors 20]

Each JSON line has ``text`` (the user's turn), optional ``assistant``, ``lang``, ``valence`` and
optionally ``intensity``, ``arousal``, ``tags``, ``category``, ``protected``. The analyzer sees only
``Turn(user=text, assistant=assistant)``. Per language it reports valence accuracy and macro-F1,
tag micro-F1, intensity MAE and Spearman, arousal MAE, category accuracy, protected precision and
recall (each only where labelled) and turns per second.

``--split tune`` or ``--split check`` keeps one half of each file: a record's own ``split`` field
when it has one, otherwise a hash of its id (``sha256(id) % 2``: 0 is the tune half, 1 the check
half). Tune on the tune half; read only the check half's aggregate scores. Where categories
are labelled, the category confusion table is printed too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.ports.analyzer import Analysis, Turn

VALENCES = ("positive", "negative", "neutral")
CATEGORIES = ("casual", "work", "decision", "emotional")


def split_of(record: dict[str, Any]) -> str:
    """The record's half: its own ``split`` field, else a hash of its id."""
    if record.get("split") in {"tune", "check"}:
        return str(record["split"])
    return hash_split(str(record["id"]))


def hash_split(item_id: str) -> str:
    """``tune`` or ``check`` by ``sha256(id) % 2`` (0 is tune)."""
    digest = int(hashlib.sha256(item_id.encode("utf-8")).hexdigest(), 16)
    return "tune" if digest % 2 == 0 else "check"


def ranks(values: Sequence[float]) -> list[float]:
    """Ranks starting at 1, ties sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        avg = (i + j) / 2 + 1
        for k in range(i, j + 1):
            out[order[k]] = avg
        i = j + 1
    return out


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    n = len(xs)
    if n < 2:
        return float("nan")
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return float("nan")
    return float(sxy / (sxx * syy) ** 0.5)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (Pearson correlation of the tie-averaged ranks)."""
    return pearson(ranks(xs), ranks(ys))


def macro_f1(gold: Sequence[str], pred: Sequence[str], labels: Sequence[str]) -> float:
    scores = []
    for label in labels:
        tp = sum(1 for g, p in zip(gold, pred, strict=True) if g == label and p == label)
        fp = sum(1 for g, p in zip(gold, pred, strict=True) if g != label and p == label)
        fn = sum(1 for g, p in zip(gold, pred, strict=True) if g == label and p != label)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        scores.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return sum(scores) / len(scores)


def load(paths: Sequence[Path]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for path in paths:
        with path.open(encoding="utf-8") as fh:
            records.extend(json.loads(line) for line in fh if line.strip())
    return records


def _round(x: float | None, digits: int = 3) -> float | None:
    return None if x is None else round(x, digits)


def evaluate(records: list[dict[str, Any]], analyzer: OfflineAnalyzer) -> dict[str, Any]:
    # Warm up (dictionary loading is a one-off cost, not per-turn speed).
    analyzer.analyze(Turn("ウォームアップです。"))
    analyzer.analyze(Turn("warm up"))
    by_lang: dict[str, list[tuple[dict[str, Any], Analysis]]] = defaultdict(list)
    elapsed: dict[str, float] = defaultdict(float)
    for rec in records:
        turn = Turn(user=rec["text"], assistant=rec.get("assistant") or "")
        start = time.perf_counter()
        result = analyzer.analyze(turn)
        elapsed[rec.get("lang", "?")] += time.perf_counter() - start
        by_lang[rec.get("lang", "?")].append((rec, result))
    report: dict[str, Any] = {}
    for lang, pairs in sorted(by_lang.items()):
        report[lang] = summarise(pairs, elapsed[lang])
    return report


def summarise(pairs: list[tuple[dict[str, Any], Analysis]], seconds: float) -> dict[str, Any]:
    gold = [r["valence"] for r, _ in pairs]
    pred = [a.valence.value for _, a in pairs]
    tp = fp = fn = 0
    for rec, res in pairs:
        if "tags" not in rec:
            continue
        g, p = set(rec["tags"] or ()), set(res.tags)
        tp += len(g & p)
        fp += len(p - g)
        fn += len(g - p)
    tag_p = tp / (tp + fp) if tp + fp else 0.0
    tag_r = tp / (tp + fn) if tp + fn else 0.0
    out: dict[str, Any] = {
        "n": len(pairs),
        "valence_accuracy": _round(
            sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
        ),
        "valence_macro_f1": _round(macro_f1(gold, pred, VALENCES)),
        "tag_micro_f1": _round(2 * tag_p * tag_r / (tag_p + tag_r) if tag_p + tag_r else 0.0),
        "tag_precision": _round(tag_p),
        "tag_recall": _round(tag_r),
    }
    inten = [(r["intensity"], a.intensity) for r, a in pairs if r.get("intensity") is not None]
    if inten:
        out["intensity_mae"] = _round(sum(abs(g - p) for g, p in inten) / len(inten), 1)
        out["intensity_spearman"] = _round(spearman([g for g, _ in inten], [p for _, p in inten]))
    arous = [(r["arousal"], a.arousal) for r, a in pairs if r.get("arousal") is not None]
    if arous:
        out["arousal_mae"] = _round(sum(abs(g - p) for g, p in arous) / len(arous), 1)
        out["arousal_spearman"] = _round(spearman([g for g, _ in arous], [p for _, p in arous]))
    cats = [(r["category"], a.category) for r, a in pairs if r.get("category")]
    if cats:
        out["category_accuracy"] = _round(sum(g == p for g, p in cats) / len(cats))
        out["category_confusion"] = {
            g: {p: sum(1 for gg, pp in cats if gg == g and pp == p) for p in CATEGORIES}
            for g in CATEGORIES
        }
    prot = [(bool(r["protected"]), a.protected) for r, a in pairs if r.get("protected") is not None]
    if prot:
        ptp = sum(1 for g, p in prot if g and p)
        pfp = sum(1 for g, p in prot if not g and p)
        pfn = sum(1 for g, p in prot if g and not p)
        out["protected_precision"] = _round(ptp / (ptp + pfp) if ptp + pfp else 1.0)
        out["protected_recall"] = _round(ptp / (ptp + pfn) if ptp + pfn else 1.0)
    out["turns_per_second"] = round(len(pairs) / seconds) if seconds > 0 else None
    return out


def print_errors(records: list[dict[str, Any]], analyzer: OfflineAnalyzer, limit: int) -> None:
    shown = 0
    for rec in records:
        res = analyzer.analyze(Turn(rec["text"], rec.get("assistant") or ""))
        if res.valence.value != rec["valence"]:
            print(f"  gold={rec['valence']:<8} pred={res.valence.value:<8} {rec['text'][:110]}")
            shown += 1
            if shown >= limit:
                break


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, action="append", required=True, help="JSONL file")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--errors", type=int, default=0, help="print up to N valence errors")
    parser.add_argument(
        "--split",
        choices=("tune", "check", "all"),
        default="all",
        help="evaluate one half only (the record's split field, else a hash of its id)",
    )
    parser.add_argument(
        "--segmenter",
        choices=("auto", "fugashi", "script"),
        default="auto",
        help="Japanese segmenter (default: fugashi when installed)",
    )
    args = parser.parse_args(argv)
    analyzer = OfflineAnalyzer(segmenter=args.segmenter)
    records = load(args.data)
    if args.split != "all":
        records = [r for r in records if split_of(r) == args.split]
    report = evaluate(records, analyzer)
    if args.json:
        json.dump(report, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        for lang, metrics in report.items():
            print(f"[{lang}]")
            for key, value in metrics.items():
                if key == "category_confusion":
                    print(
                        f"  {'category gold → pred':<22} " + " ".join(f"{c:>9}" for c in CATEGORIES)
                    )
                    for gold_cat, row in value.items():
                        cells = " ".join(f"{row[c]:>9}" for c in CATEGORIES)
                        print(f"    {gold_cat:<20} {cells}")
                    continue
                print(f"  {key:<22} {value}")
    if args.errors:
        print_errors(records, analyzer, args.errors)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
