"""Deliberate search and priming on LoCoMo, before and after a store is aged to a given day.

    python benchmarks/locomo.py --data ../shared/data/locomo/locomo_dev.json --deliberate \
        [--age-until YYYY-MM-DD] [--conversations N] [--json]

Each conversation is remembered turn by turn into a fresh store of its own (as in
:mod:`locomo`, every turn at its real date, nothing marked), and then, for every question
that has evidence (adversarial ones left out, as in ``locomo.py``'s "overall"):

1. before forgetting, at question time (``locomo.question_time``): priming (``Kioku.prime``,
   ``mark=False``) and then deliberate search (``Kioku.search_memory``, top 10, every kind,
   archive included) are asked the question. Priming comes first because every search is
   logged as activity, which priming's channel B reads. Search R@10 counts the evidence turns
   among the ten memories found; priming R@10 those among the episodes channel E recalled
   (``Priming.recall.items``, with ``retrieval.top_k`` 10; every other setting is the
   default). The size of the priming block is kept, in characters and in tokens of the
   configured counter, with the tokens channel E alone used.
2. The store is aged: one nightly batch at the first session's date starts the batch record,
   then one ``Kioku.batch`` catches up every day from there to ``--age-until`` (default
   today), the clock standing at that day. Memories made later than a batch day are outside
   it, so each turn ages from its own date, as it would have for a user who never recalled it.
3. After forgetting, the same questions are asked again with the clock at ``--age-until``.
4. The same conversation is remembered again into a second store whose ``config.toml`` sets
   ``[compression] keep_originals = false`` (policy A: no original texts in cold storage),
   aged the same way, and searched after forgetting.

R@10 after / before is the share of deliberate recall that survives forgetting; the
before-values are measured in the same run on the same questions. Totals pool every question.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo import CATEGORIES, UTC, evidence_ids, ingest, question_time, session_dates

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.context.tokens import TokenCounter, make_counter
from kioku.core.model import Kind
from kioku.ports.store import MemoryFilter

TOP_K = 10
#: The store's state is fixed: no automatic batch, no daemon, nothing from the environment.
ENV = {"KIOKU_NO_AUTO_BATCH": "1"}
POLICY_A = "[compression]\nkeep_originals = false\n"
#: Metrics gathered per question, in the order the tables show them.
METRICS = (
    "search_before",
    "search_after",
    "search_after_a",
    "priming_before",
    "priming_after",
)


@dataclass
class Questions:
    """The questions of one conversation that have evidence, outside category 5."""

    items: list[tuple[str, set[str], str]]

    @classmethod
    def of(cls, sample: dict[str, Any]) -> Questions:
        items = []
        for qa in sample["qa"]:
            wanted = evidence_ids(qa.get("evidence", []))
            category = CATEGORIES.get(int(qa.get("category", 0)), "other")
            if wanted and category != "adversarial":
                items.append((qa["question"], wanted, category))
        return cls(items)


@dataclass
class Tally:
    """Per-question values of one conversation (or of all of them pooled)."""

    hits: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    by_category: dict[str, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    chars: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    tokens: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    #: Tokens each channel used (by its letter), as priming counts them.
    channel_tokens: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def extend(self, other: Tally) -> None:
        for mine, theirs in (
            (self.hits, other.hits),
            (self.chars, other.chars),
            (self.tokens, other.tokens),
            (self.channel_tokens, other.channel_tokens),
            (self.latency, other.latency),
        ):
            for key, values in theirs.items():
                mine[key].extend(values)  # type: ignore[attr-defined]
        for cat, rows in other.by_category.items():
            for key, values in rows.items():
                self.by_category[cat][key].extend(values)


def _share(wanted: set[str], memories: list[Any]) -> float:
    found = {s for memory in memories[:TOP_K] for s in memory.source_ids}
    return len(wanted & found) / len(wanted)


def _turns_of(kioku: Kioku, memories: list[Any]) -> list[Any]:
    """Each found memory as the turns it stands for: an episode itself; a knowledge item or
    procedure made by consolidation, the episodes it was lifted from (their turn ids are its
    evidence), so an item that says what the evidence turn said counts as finding it."""
    out: list[Any] = []
    for memory in memories[:TOP_K]:
        sources = getattr(memory.details, "source_episodes", ())
        if memory.source_ids or not sources:
            out.append(memory)
            continue
        merged = tuple(s for m in kioku.store.get_many(list(sources)) for s in m.source_ids)
        out.append(replace(memory, source_ids=merged))
    return out


def _search(kioku: Kioku, questions: Questions, tally: Tally, key: str) -> None:
    for question, wanted, category in questions.items:
        t0 = time.perf_counter()
        result = kioku.search_memory(question, top_k=TOP_K)
        tally.latency[key].append(time.perf_counter() - t0)
        score = _share(wanted, _turns_of(kioku, [found.memory for found in result.items]))
        tally.hits[key].append(score)
        tally.by_category[category][key].append(score)


def _prime(
    kioku: Kioku, questions: Questions, tally: Tally, key: str, counter: TokenCounter
) -> None:
    defaults = kioku.config
    # Ten episodes for R@10; priming is otherwise as configured by default.
    kioku.config = replace(defaults, retrieval=replace(defaults.retrieval, top_k=TOP_K))
    try:
        for question, wanted, category in questions.items:
            t0 = time.perf_counter()
            primed = kioku.prime(question, mark=False)
            tally.latency[key].append(time.perf_counter() - t0)
            items = primed.recall.items if primed.recall is not None else ()
            score = _share(wanted, [item.memory for item in items])
            tally.hits[key].append(score)
            tally.by_category[category][key].append(score)
            tally.chars[key].append(len(primed.block))
            tally.tokens[key].append(counter.count(primed.block) if primed.block else 0)
            for fill in primed.channels:
                tally.channel_tokens[f"{key} {fill.channel.letter}"].append(fill.used)
    finally:
        kioku.config = defaults


def _age(kioku: Kioku, clock: FixedClock, first: datetime, until: datetime) -> dict[str, Any]:
    """Run the nightly batch over every day from ``first`` to ``until``; what it took."""
    t0 = time.perf_counter()
    start = kioku.batch(now=first)  # the first batch day: nothing is older
    clock.advance(until - clock.now())
    caught_up = kioku.batch(now=until)
    seconds = time.perf_counter() - t0
    warnings = [*start.warnings, *caught_up.warnings]
    if start.status != "done" or caught_up.status != "done" or warnings:
        raise SystemExit(f"aging did not run every day: {start.to_dict()} {warnings}")
    days = [*start.due, *caught_up.due]
    memories = kioku.store.list(
        MemoryFilter(user_id=kioku.user_id, agent_id=kioku.agent_id, archived=None)
    )
    levels = Counter(m.current_level for m in memories if m.kind is Kind.EPISODE)
    others = Counter(m.kind.value for m in memories if m.kind is not Kind.EPISODE)
    return {
        "from": days[0],
        "to": days[-1],
        "days": len(days),
        "seconds": round(seconds, 1),
        "levels": {f"L{n}": levels.get(n, 0) for n in (1, 2, 3, 4)},
        "other_kinds": dict(sorted(others.items())),
    }


def _open(home: Path, conv_id: str, clock: FixedClock) -> Kioku:
    return Kioku.open(home, user_id=conv_id, clock=clock, env=ENV)


def conversation(
    sample: dict[str, Any], root: Path, until: datetime
) -> tuple[dict[str, Any], Tally]:
    """Every measurement of one conversation, in its two stores (policies B and A)."""
    conv_id = sample["sample_id"]
    conv = sample["conversation"]
    questions = Questions.of(sample)
    first = min(session_dates(conv).values())
    tally = Tally()
    info: dict[str, Any] = {"questions": len(questions.items)}

    clock = FixedClock(question_time(conv))
    with _open(root / conv_id / "policy-b", conv_id, clock) as kioku:
        counter = make_counter(kioku.config.context.tokenizer)
        t0 = time.perf_counter()
        info["turns"], _ = ingest(kioku, conv)
        info["ingest_seconds"] = round(time.perf_counter() - t0, 1)
        # Priming first: every search is logged as activity, which channel B reads.
        _prime(kioku, questions, tally, "priming_before", counter)
        _search(kioku, questions, tally, "search_before")
        info["aging"] = _age(kioku, clock, first, until)
        _prime(kioku, questions, tally, "priming_after", counter)
        _search(kioku, questions, tally, "search_after")

    home_a = root / conv_id / "policy-a"
    home_a.mkdir(parents=True)
    (home_a / "config.toml").write_text(POLICY_A, encoding="utf-8")
    clock = FixedClock(question_time(conv))
    with _open(home_a, conv_id, clock) as kioku:
        if kioku.config.compression.keep_originals:
            raise SystemExit(f"{home_a / 'config.toml'} was not read")
        ingest(kioku, conv)
        info["aging_policy_a"] = _age(kioku, clock, first, until)
        _search(kioku, questions, tally, "search_after_a")
    return info, tally


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def _rank(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[int(share * (len(ordered) - 1))]


def summary(tally: Tally) -> dict[str, Any]:
    r10 = {key: _mean(tally.hits[key]) for key in METRICS}
    before, after, after_a = r10["search_before"], r10["search_after"], r10["search_after_a"]
    return {
        "R@10": r10,
        "search_ratio": round(after / before, 3) if before and after is not None else None,
        "search_ratio_policy_a": round(after_a / before, 3)
        if before and after_a is not None
        else None,
        "R@10_by_category": {
            cat: {"n": len(rows["search_before"]), **{key: _mean(rows[key]) for key in METRICS}}
            for cat, rows in sorted(tally.by_category.items())
        },
        "priming_block": {
            key.removeprefix("priming_"): {
                "chars_p50": statistics.median(tally.chars[key]),
                "chars_p90": _rank(tally.chars[key], 0.9),
                "tokens_p50": statistics.median(tally.tokens[key]),
                "tokens_p90": _rank(tally.tokens[key], 0.9),
                "channel_tokens_p50": {
                    name.rsplit(" ", 1)[1]: statistics.median(values)
                    for name, values in sorted(tally.channel_tokens.items())
                    if name.startswith(key + " ")
                },
                "empty": sum(1 for c in tally.chars[key] if c == 0),
            }
            for key in ("priming_before", "priming_after")
            if tally.chars[key]
        },
        "latency_ms": {
            key: {
                "p50": round(statistics.median(values) * 1000, 1),
                "p95": round(_rank(values, 0.95) * 1000, 1),
            }
            for key, values in sorted(tally.latency.items())
            if values
        },
    }


def run(samples: list[dict[str, Any]], until_day: date, as_json: bool) -> None:
    # A little after noon UTC, well after the batch hour, so the last day is due.
    until = datetime(until_day.year, until_day.month, until_day.day, 12, tzinfo=UTC)
    latest = max(question_time(s["conversation"]) for s in samples)
    if until < latest + timedelta(days=1):
        raise SystemExit(f"--age-until must be after the last question time ({latest:%Y-%m-%d})")
    started = time.perf_counter()
    convs: dict[str, Any] = {}
    pooled = Tally()
    with tempfile.TemporaryDirectory() as root:
        for sample in samples:
            t0 = time.perf_counter()
            info, tally = conversation(sample, Path(root), until)
            convs[sample["sample_id"]] = {**info, **summary(tally)}
            pooled.extend(tally)
            seconds = time.perf_counter() - t0
            print(f"  {sample['sample_id']}: {seconds:.0f} s", file=sys.stderr, flush=True)
    report = {
        "age_until": until.isoformat(),
        "seconds": round(time.perf_counter() - started, 1),
        "conversations": convs,
        "total": {
            "turns": sum(c["turns"] for c in convs.values()),
            "questions": sum(c["questions"] for c in convs.values()),
            "days_aged": sum(c["aging"]["days"] for c in convs.values()),
            "aging_seconds": round(sum(c["aging"]["seconds"] for c in convs.values()), 1),
            "levels": {
                level: sum(c["aging"]["levels"][level] for c in convs.values())
                for level in ("L1", "L2", "L3", "L4")
            },
            **summary(pooled),
        },
    }
    if as_json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)


def _print(report: dict[str, Any]) -> None:
    rows = {**report["conversations"], "total": report["total"]}
    total = report["total"]
    print(
        f"{total['turns']} turns, {total['questions']} questions; aged to "
        f"{report['age_until'][:10]}; {report['seconds']} s in all "
        f"(aging {total['aging_seconds']} s for {total['days_aged']} batch days)"
    )
    print(
        "\nAging, policy B store (episodes per level after it; L4 = archived; other kinds "
        "apart). Policy A ages the same turns over the same days."
    )
    print(f"  {'conv':<8} {'from':>10} {'days':>5} {'s':>6}   L1   L2   L3   L4  other")
    for name, row in report["conversations"].items():
        a = row["aging"]
        lv = a["levels"]
        other = ", ".join(f"{k} {v}" for k, v in a["other_kinds"].items()) or "-"
        print(
            f"  {name:<8} {a['from']:>10} {a['days']:>5} {a['seconds']:>6} "
            f"{lv['L1']:>4} {lv['L2']:>4} {lv['L3']:>4} {lv['L4']:>4}  {other}"
        )
    lv = total["levels"]
    print(f"  {'total':<8} {'':>10} {total['days_aged']:>5} {total['aging_seconds']:>6} ", end="")
    print(f"{lv['L1']:>4} {lv['L2']:>4} {lv['L3']:>4} {lv['L4']:>4}")

    print("\nDeliberate search R@10 (search_memory, top 10) and priming R@10 (channel E, top 10)")
    head = ("n", "search before", "after", "after/before", "A: after", "A: ratio")
    head2 = ("priming before", "after")
    print(f"  {'conv':<8} " + " ".join(f"{h:>13}" for h in head + head2))
    for name, row in rows.items():
        r = row["R@10"]
        cells = (
            row["questions"],
            r["search_before"],
            r["search_after"],
            row["search_ratio"],
            r["search_after_a"],
            row["search_ratio_policy_a"],
            r["priming_before"],
            r["priming_after"],
        )
        print(f"  {name:<8} " + " ".join(f"{c:>13}" for c in cells))

    print(
        "\nPriming block, before -> after (tokens of the configured counter; "
        "channel X: the median tokens that channel used)"
    )
    letters = sorted(
        {
            letter
            for row in rows.values()
            for when in ("before", "after")
            for letter, used in row["priming_block"][when]["channel_tokens_p50"].items()
            if used
        }
    )
    keys = ("chars_p50", "chars_p90", "tokens_p50", "tokens_p90")
    head = (*keys, *(f"channel {letter}" for letter in letters), "empty")
    print(f"  {'conv':<8} " + " ".join(f"{h.replace('_', ' '):>14}" for h in head))
    for name, row in rows.items():
        b, a = row["priming_block"]["before"], row["priming_block"]["after"]
        cells = [f"{b[k]:.0f} -> {a[k]:.0f}" for k in keys]
        cells += [
            f"{b['channel_tokens_p50'][letter]:.0f} -> {a['channel_tokens_p50'][letter]:.0f}"
            for letter in letters
        ]
        cells.append(f"{b['empty']} -> {a['empty']}")
        print(f"  {name:<8} " + " ".join(f"{c:>14}" for c in cells))

    print("\nBy category, all conversations (R@10)")
    print(
        f"  {'category':<12} {'n':>4} "
        + " ".join(f"{k:>15}" for k in ("search before", "after", "A: after", "priming before"))
        + f" {'after':>8}"
    )
    for cat, r in total["R@10_by_category"].items():
        cells = (
            r["search_before"],
            r["search_after"],
            r["search_after_a"],
            r["priming_before"],
        )
        print(
            f"  {cat:<12} {r['n']:>4} "
            + " ".join(f"{c:>15}" for c in cells)
            + f" {r['priming_after']:>8}"
        )
    lat = total["latency_ms"]
    print(
        "\nLatency p50 / p95 ms: "
        + ", ".join(f"{k} {v['p50']} / {v['p95']}" for k, v in lat.items())
    )
    sys.stdout.flush()
