"""LoCoMo evidence recall of retrieval components alone (no kioku store): BM25, dense, fusion.

One document per dialogue turn: ``"{speaker}: {text}"`` plus ``" [image: {blip_caption}]"`` when
the turn shares a picture. Queries are the QA questions; each searches only its own conversation.
Evidence ids are split on ``[;,\\s]+`` and normalised with ``D:?(\\d+):0*(\\d+)``. Recall@k is
the share of a question's evidence turns among the top k, averaged over questions; "overall"
averages the non-adversarial categories 1–4, category 5 (adversarial) is reported apart.

Methods: BM25 (k1=1.2, b=0.75) in tokenizer variants, dense retrieval with each embedder, and
reciprocal-rank fusion (k=60) of BM25 with each dense method.

    .venv/bin/python benchmarks/retrieval_baselines.py                       # hash + wordllama
    .venv/bin/python benchmarks/retrieval_baselines.py --dense hash-1024,minilm --json r.json
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kioku.adapters.embedders.features import english_terms
from kioku.ports.embedder import Embedder

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo_dev.json"
KS = (1, 5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
RRF_K = 60
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True)
class Question:
    text: str
    evidence: frozenset[str]
    category: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turn_ids: tuple[str, ...]
    texts: tuple[str, ...]
    questions: tuple[Question, ...]


def normalise_evidence(raw: Sequence[str]) -> frozenset[str]:
    ids: set[str] = set()
    for item in raw:
        for part in re.split(r"[;,\s]+", str(item)):
            m = _EVIDENCE.fullmatch(part.strip())
            if m:
                ids.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return frozenset(ids)


def load_locomo(path: Path) -> list[Conversation]:
    conversations = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conv = sample["conversation"]
        turn_ids: list[str] = []
        texts: list[str] = []
        sessions = sorted(
            (int(k.split("_")[1]), v)
            for k, v in conv.items()
            if re.fullmatch(r"session_\d+", k) and isinstance(v, list)
        )
        for _, turns in sessions:
            for turn in turns:
                (tid,) = normalise_evidence([turn["dia_id"]]) or {turn["dia_id"]}
                text = f"{turn['speaker']}: {turn.get('text', '')}"
                if turn.get("blip_caption"):
                    text += f" [image: {turn['blip_caption']}]"
                turn_ids.append(tid)
                texts.append(text)
        questions = tuple(
            Question(qa["question"], normalise_evidence(qa.get("evidence", [])), qa["category"])
            for qa in sample["qa"]
        )
        conversations.append(
            Conversation(sample["sample_id"], tuple(turn_ids), tuple(texts), questions)
        )
    return conversations


class BM25:
    """Okapi BM25 with the Lucene-style idf ``ln(1 + (N - df + .5) / (df + .5))``."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.tfs = [Counter(d) for d in docs]
        self.lengths = np.array([len(d) for d in docs], dtype=np.float64)
        self.avg = float(self.lengths.mean()) if len(docs) else 0.0
        df: Counter[str] = Counter()
        for tf in self.tfs:
            df.update(tf.keys())
        n = len(docs)
        self.idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, tf in enumerate(self.tfs):
            for t, c in tf.items():
                self.postings.setdefault(t, []).append((i, c))

    def scores(self, query: Sequence[str]) -> np.ndarray:  # type: ignore[type-arg]
        out = np.zeros(len(self.tfs))
        norm = self.k1 * (1 - self.b + self.b * self.lengths / max(self.avg, 1e-9))
        for term in set(query):
            for i, c in self.postings.get(term, ()):
                out[i] += self.idf[term] * c * (self.k1 + 1) / (c + norm[i])
        return out


Tokenizer = Callable[[str], list[str]]
BM25_VARIANTS: dict[str, Tokenizer] = {
    "bm25": lambda t: english_terms(t, stem=True, stopwords=True),
    "bm25-nostem": lambda t: english_terms(t, stem=False, stopwords=True),
    "bm25-raw": lambda t: english_terms(t, stem=False, stopwords=False),
}


def make_embedder(name: str) -> tuple[Embedder, str]:
    """``(embedder, size note)`` for a candidate name."""
    if name.startswith("hash"):
        from kioku.adapters.embedders.offline import HashEmbedder, HashWeights

        parts = name.split("-")
        dim = int(parts[1]) if len(parts) > 1 else 384
        japanese = "script" if "script" in parts else "auto"
        weights = HashWeights()
        for p in parts[2:]:
            if p.startswith("w") and ":" in p:  # hash-384-w1:0.5:0.7
                w, bg, ch = (float(x) for x in p[1:].split(":"))
                weights = HashWeights(w, bg, ch)
        return HashEmbedder(dim, japanese=japanese, weights=weights), "0 (code only)"
    if name.startswith("wordllama"):
        from kioku.adapters.embedders.wordllama import WordLlamaEmbedder

        dim = int(name.split("-")[1]) if "-" in name else 256
        return WordLlamaEmbedder(dim), "16 MB weights + 1.8 MB tokenizer"
    if name == "minilm":
        from kioku.adapters.embedders.sentence_transformers import SentenceTransformersEmbedder

        return SentenceTransformersEmbedder("all-MiniLM-L6-v2"), "87 MB weights + torch"
    raise SystemExit(f"unknown dense method {name!r}")


def rank_lists(scores: np.ndarray) -> np.ndarray:  # type: ignore[type-arg]
    return np.argsort(-scores, kind="stable")


def rrf(*rankings: np.ndarray, weights: Sequence[float] = ()) -> np.ndarray:  # type: ignore[type-arg]
    """Reciprocal-rank fusion, ``sum(w / (60 + rank))``; equal weights unless given."""
    fused = np.zeros(len(rankings[0]))
    for i, ranking in enumerate(rankings):
        w = weights[i] if weights else 1.0
        fused[ranking] += w / (RRF_K + np.arange(1, len(ranking) + 1))
    return rank_lists(fused)


def recall_row(ranking: np.ndarray, conv: Conversation, q: Question) -> list[float]:  # type: ignore[type-arg]
    ids = [conv.turn_ids[i] for i in ranking[: max(KS)]]
    return [len(q.evidence & set(ids[:k])) / len(q.evidence) for k in KS]


def summarise(rows: list[tuple[int, list[float]]]) -> dict[str, Any]:
    def mean(sel: list[list[float]]) -> list[float]:
        return [
            round(float(np.mean([r[i] for r in sel])), 4) if sel else 0.0 for i in range(len(KS))
        ]

    overall = [r for c, r in rows if c != 5]
    result: dict[str, Any] = {
        "overall": dict(zip([f"R@{k}" for k in KS], mean(overall), strict=True))
    }
    result["n"] = len(overall)
    for cat, label in CATEGORIES.items():
        sel = [r for c, r in rows if c == cat]
        result[label] = dict(zip([f"R@{k}" for k in KS], mean(sel), strict=True)) | {"n": len(sel)}
    return result


def run(args: argparse.Namespace) -> dict[str, Any]:
    convs = load_locomo(Path(args.data))
    usable = [(c, q) for c in convs for q in c.questions if q.evidence]
    skipped = sum(len(c.questions) for c in convs) - len(usable)
    print(
        f"{len(convs)} conversations, {sum(len(c.texts) for c in convs)} turns, "
        f"{len(usable)} questions with evidence ({skipped} without)",
        file=sys.stderr,
    )
    rankings: dict[str, dict[tuple[int, int], np.ndarray]] = {}  # type: ignore[type-arg]
    meta: dict[str, dict[str, Any]] = {}
    for name in args.bm25.split(","):
        tok = BM25_VARIANTS[name]
        rankings[name] = {}
        for ci, conv in enumerate(convs):
            index = BM25([tok(t) for t in conv.texts])
            for qi, q in enumerate(conv.questions):
                rankings[name][ci, qi] = rank_lists(index.scores(tok(q.text)))
        meta[name] = {"kind": "lexical"}
    fuse_with = args.bm25.split(",")[0]
    for name in [d for d in args.dense.split(",") if d]:
        embedder, size = make_embedder(name)
        embedder.embed(["warm up"])
        all_texts = [t for c in convs for t in c.texts]
        started = time.perf_counter()
        doc_vecs = embedder.embed(all_texts)
        speed = len(all_texts) / (time.perf_counter() - started)
        rankings[name] = {}
        offset = 0
        for ci, conv in enumerate(convs):
            docs = doc_vecs[offset : offset + len(conv.texts)]
            offset += len(conv.texts)
            queries = embedder.embed([q.text for q in conv.questions])
            sims = queries @ docs.T
            for qi in range(len(conv.questions)):
                rankings[name][ci, qi] = rank_lists(sims[qi])
        meta[name] = {
            "kind": "dense",
            "model_id": embedder.model_id,
            "dim": embedder.dim,
            "texts_per_s": round(speed),
            "size": size,
        }
        for w in [float(x) for x in args.dense_weights.split(",") if x]:
            fused = f"rrf({fuse_with}+{name})" if w == 1 else f"rrf({fuse_with}+{w:g}*{name})"
            rankings[fused] = {
                key: rrf(rankings[fuse_with][key], rankings[name][key], weights=(1.0, w))
                for key in rankings[name]
            }
            meta[fused] = {"kind": "fusion", "dense_weight": w}
    results: dict[str, Any] = {}
    for name, by_key in rankings.items():
        rows = [
            (q.category, recall_row(by_key[ci, qi], conv, q))
            for ci, conv in enumerate(convs)
            for qi, q in enumerate(conv.questions)
            if q.evidence
        ]
        results[name] = meta[name] | summarise(rows)
    return results


#: Japanese sanity pairs (written for kioku): (anchor, paraphrase, unrelated).
JA_PAIRS = (
    ("寿司が好き", "お寿司が好きです", "明日は雨が降るらしい"),
    ("昨日の会議", "きのうのミーティング", "猫に餌をあげた"),
    ("昨日の会議", "きのうの会議の議事録", "猫に餌をあげた"),
    ("東京に行きたい", "とうきょうへ行った", "新しいパソコンを買った"),
    ("犬の散歩に行った", "犬を散歩させた", "株価が下がった"),
    ("彼女は怒っていた", "彼女は腹を立てていた", "駅前に新しいカフェができた"),
)


def ja_sanity(names: Sequence[str]) -> dict[str, Any]:
    """Cosine of each anchor with its paraphrase and with an unrelated sentence, per embedder."""
    out: dict[str, Any] = {}
    for name in names:
        embedder, _ = make_embedder(name)
        pairs = []
        for anchor, related, unrelated in JA_PAIRS:
            a, r, u = embedder.embed([anchor, related, unrelated])
            pairs.append((round(float(a @ r), 3), round(float(a @ u), 3)))
        out[name] = {
            "pairs": pairs,
            "related_mean": round(float(np.mean([p[0] for p in pairs])), 3),
            "unrelated_mean": round(float(np.mean([p[1] for p in pairs])), 3),
            "wins": sum(p[0] > p[1] for p in pairs),
        }
    return out


def print_table(results: dict[str, Any]) -> None:
    head = (
        f"{'method':<34} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'R@20':>6} | R@10 by category: "
        f"{'multi':>6} {'temp':>6} {'open':>6} {'single':>6} {'adv(5)':>7} | texts/s"
    )
    print(head)
    print("-" * len(head))
    for name, r in results.items():
        o = r["overall"]
        cats = [r[c]["R@10"] for c in ("multi-hop", "temporal", "open-domain", "single-hop")]
        speed = r.get("texts_per_s", "")
        print(
            f"{name:<34} {o['R@1']:>6.3f} {o['R@5']:>6.3f} {o['R@10']:>6.3f} {o['R@20']:>6.3f} | "
            f"{'':>18} {cats[0]:>6.3f} {cats[1]:>6.3f} {cats[2]:>6.3f} {cats[3]:>6.3f} "
            f"{r['adversarial']['R@10']:>7.3f} | {speed}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument(
        "--bm25",
        default="bm25,bm25-nostem,bm25-raw",
        help="BM25 variants; the first one is fused with each dense method",
    )
    parser.add_argument(
        "--dense",
        default="hash-256,hash-384,hash-512,wordllama",
        help="dense candidates: hash-DIM[-script][-wW:B:C], wordllama[-DIM], minilm",
    )
    parser.add_argument(
        "--dense-weights",
        default="1",
        help="weights of the dense ranking in the fusion (BM25 has 1); 1 = plain RRF",
    )
    parser.add_argument("--json", help="also write the results as JSON to this file")
    parser.add_argument(
        "--ja-sanity",
        action="store_true",
        help="only print the Japanese paraphrase check for the dense methods",
    )
    args = parser.parse_args(argv)
    if args.ja_sanity:
        sanity = ja_sanity([d for d in args.dense.split(",") if d])
        for name, r in sanity.items():
            cells = "  ".join(f"{rel:.2f}/{unrel:.2f}" for rel, unrel in r["pairs"])
            print(
                f"{name:<14} related {r['related_mean']:.3f}  unrelated {r['unrelated_mean']:.3f}"
                f"  wins {r['wins']}/{len(JA_PAIRS)}  | {cells}"
            )
        if args.json:
            Path(args.json).write_text(json.dumps(sanity, indent=2, ensure_ascii=False) + "\n")
        return 0
    results = run(args)
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
