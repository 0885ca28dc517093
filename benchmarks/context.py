#!/usr/bin/env python3
"""Pruning a conversation to its token budget (spec 002), against plain FIFO truncation.

    python benchmarks/context.py [--sizes 1000,10000] [--runs 21] [--seed 7] [--json]

For each size, a synthetic agent session of that many messages is generated (seeded): a system
prompt, then user prompts, assistant replies and tool results of 50-400 characters, about a
quarter of them Japanese, some carrying error or success words and ``[Tool:`` markers. Each
is pruned from scratch, as ``kioku context prune`` does it (token counting with the offline
estimator, importance scoring, selection, gap notices; no summaries, so no analyzer), at two
budgets:

- ``over``: the balanced preset's 8,000 tokens, far below the session (emergency stage);
- ``near``: a budget the session fills to 85 % (the prune stage).

The baseline, in the same process on the same list, is FIFO truncation: the newest messages
that fit the same target, counted with the same estimator. Each figure is the median of
``--runs`` runs; the ratio is kioku ÷ FIFO.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from kioku.core.context import (
    EstimateCounter,
    Message,
    TokenCounter,
    message_tokens,
    policy_preset,
    prune,
)

_EN = (
    "deploy the service check the logs the index is slow add a cache for the query we chose "
    "sqlite over postgres because it runs offline the test suite passes after the fix the "
    "user wants a summary of yesterday's meeting about the release plan and the budget"
).split()
_JA = ["デプロイ", "ログ", "確認", "インデックス", "遅い", "キャッシュ", "追加", "会議", "予算",
       "リリース", "計画", "テスト", "修正", "しました", "です", "ます", "について"]  # fmt: skip
_FLAVOURS = ("error: connection refused", "failed to open file", "completed successfully",
             "task done", "warning: disk almost full", "")  # fmt: skip


def _text(rng: random.Random, low: int, high: int) -> str:
    size = rng.randint(low, high)
    if rng.random() < 0.25:
        out = ""
        while len(out) < size // 2:
            out += rng.choice(_JA)
        return out + "。"
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < size:
        words.append(rng.choice(_EN))
    flavour = rng.choice(_FLAVOURS)
    return " ".join(words) + (f". {flavour}" if flavour else ".")


def session(size: int, seed: int) -> list[Message]:
    rng = random.Random(seed)
    out = [Message("system", "You are a careful coding agent. " + _text(rng, 200, 400))]
    while len(out) < size:
        out.append(Message("user", _text(rng, 50, 250)))
        for _ in range(rng.randint(1, 3)):
            if len(out) >= size:
                break
            if rng.random() < 0.4:
                out.append(Message("tool", "[Tool: shell] " + _text(rng, 100, 400)))
            else:
                out.append(Message("assistant", _text(rng, 80, 400)))
    return out[:size]


def fifo(messages: Sequence[Message], target: float, counter: TokenCounter) -> list[Message]:
    """The newest messages that fit ``target`` tokens (plain truncation)."""
    kept: list[Message] = []
    used = 0
    for message in reversed(messages):
        cost = message_tokens(counter, message)
        if used + cost > target:
            break
        kept.append(message)
        used += cost
    kept.reverse()
    return kept


def _median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def measure(size: int, runs: int, seed: int) -> list[dict[str, Any]]:
    messages = session(size, seed)
    total = sum(message_tokens(EstimateCounter(), m) for m in messages)
    rows = []
    for label, budget in (("over", 8000), ("near", max(1, round(total / 0.85)))):
        policy = policy_preset("balanced", max_tokens=budget, summaries=False)
        target = budget * policy.target_usage

        def run_kioku(policy: Any = policy) -> object:
            return prune(messages, policy, EstimateCounter())

        def run_fifo(target: float = target) -> object:
            return fifo(messages, target, EstimateCounter())

        _, stats = prune(messages, policy, EstimateCounter())
        kioku_ms = _median_ms(run_kioku, runs)
        fifo_ms = _median_ms(run_fifo, runs)
        rows.append(
            {
                "messages": size,
                "budget": label,
                "max_tokens": budget,
                "session_tokens": total,
                "stage": stats.stage.value,
                "kept": stats.final_count,
                "final_tokens": stats.final_tokens,
                "kioku_ms": round(kioku_ms, 3),
                "fifo_ms": round(fifo_ms, 3),
                "ratio": round(kioku_ms / fifo_ms, 2) if fifo_ms else None,
                "within_budget": stats.final_tokens <= budget,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [r for n in args.sizes.split(",") for r in measure(int(n), args.runs, args.seed)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"pruning from scratch, median of {args.runs} runs (seed {args.seed})")
    head = ("messages", "budget", "stage", "tokens", "kept", "kioku ms", "FIFO ms", "ratio")
    print("{:>8} {:>6} {:>9} {:>15} {:>5} {:>9} {:>8} {:>6}".format(*head))
    for r in rows:
        print(
            f"{r['messages']:>8} {r['budget']:>6} {r['stage']:>9} "
            f"{r['session_tokens']:>7}→{r['final_tokens']:<7} {r['kept']:>5} "
            f"{r['kioku_ms']:>9.2f} {r['fifo_ms']:>8.2f} {r['ratio']:>5.1f}×"
        )
    targets = {1000: 10.0, 10000: 100.0}
    for r in rows:
        limit = targets.get(r["messages"])
        if limit is not None:
            verdict = "meets" if r["kioku_ms"] <= limit else "MISSES"
            print(f"{r['messages']} messages ({r['budget']}): {verdict} the {limit:g} ms target")


if __name__ == "__main__":
    main()
