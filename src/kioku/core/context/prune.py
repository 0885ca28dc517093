"""Pruning a conversation history to a token budget (spec 002, Memory Manager / コンテキスト管理).

The strategy is staged by ``usage = tokens / max_tokens`` (spec 002 §2.2, bounds derived from
``prune_threshold`` so that the defaults reproduce the spec's table):

=================================  ===========  =============================================
usage                              stage        action
=================================  ===========  =============================================
below ``prune_threshold - 0.2``    none         nothing
up to ``prune_threshold``          warn         nothing (the caller may log a warning)
up to ``(prune_threshold+1)/2``    prune        select to ``target_usage``; notices only
up to 1.0                          aggressive   select to ``target_usage - 0.1``; removed runs
                                                of ``min_gap_for_summary`` or more messages are
                                                summarised, shorter ones get a notice
above 1.0                          emergency    select to ``target_usage``; notices only, the
                                                summarizer is never called (§8.2)
=================================  ===========  =============================================

Selection (spec 002 §5.2): the pinned messages are kept first — the leading system messages
(``keep_system``) and the newest ``keep_last`` messages, so the current prompt always survives.
The others are taken by importance (:mod:`kioku.core.context.importance`), highest first and
newer first on ties, each one that still fits the budget (a message that does not fit is skipped,
the loop goes on, as in the spec), and put back in their original order. Every maximal run of
removed messages (a :class:`Gap`) is replaced by one short message: a summary (§5.3, runs of 5
or more) or a notice that says how many messages were left out.

Unlike the spec, kioku guarantees the result: the selection reserves room for a notice per
gap (kept messages plus notices land at the target), summaries replace notices only while the
result stays below ``prune_threshold`` (so the next message does not prune again), and
:func:`assemble` checks the real token count and falls back (summary → notice → no notice →
fewer messages) until the whole history, inserted messages included, is within
``max_tokens``. When the pinned messages alone do not fit, the
oldest pinned ones are shortened (or dropped) and, last, the newest message itself is
shortened with a ``…[truncated]`` marker.

Notices and summaries are written in Japanese when the removed messages are Japanese
(:func:`kioku.core.language.detect_language`), in English otherwise.

Pure: no I/O, no clock; the summarizer is a callable the caller passes to :func:`prune`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Final

from kioku.core.context.importance import ImportanceConfig, importance, score_all
from kioku.core.context.messages import Message
from kioku.core.context.tokens import MESSAGE_OVERHEAD, TokenCounter, message_tokens
from kioku.core.language import detect_language
from kioku.errors import ValidationError

__all__ = [
    "INSERTED_ROLE",
    "MIN_MAX_TOKENS",
    "PRESETS",
    "SUMMARY_MAX_CHARS",
    "TRUNCATION_MARKER",
    "ContextPolicy",
    "Gap",
    "PrunePlan",
    "PruneStats",
    "Stage",
    "assemble",
    "gap_text",
    "merge_notices",
    "notice",
    "notice_count",
    "plan_prune",
    "policy_preset",
    "prune",
    "stage_for",
    "summary_message",
]

#: The smallest budget a policy accepts: room for a notice and a (shortened) message.
MIN_MAX_TOKENS: Final = 64
#: A summary longer than this many characters is cut (the spec asks for about 100).
SUMMARY_MAX_CHARS: Final = 400
#: Appended to a message that had to be shortened to fit the budget.
TRUNCATION_MARKER: Final = "…[truncated]"
#: Role of the inserted notices and summaries (spec 002 §6.1 uses ``assistant``).
INSERTED_ROLE: Final = "assistant"
#: A pinned message is shortened only if at least this many tokens of it remain, else dropped.
_MIN_TRUNCATED_TOKENS: Final = MESSAGE_OVERHEAD + 16
#: Characters of a removed message given to the summarizer (spec 002 §6.1 ``[:200]``).
_GAP_CHARS: Final = 200
#: Language detection samples this many removed messages, this many characters each.
_LANGUAGE_SAMPLES: Final = 12
_LANGUAGE_CHARS: Final = 60
#: The notices :func:`notice` writes, in each language (the count is the group).
_NOTICE_FORMS: Final = (
    re.compile(r"\[(\d+)件のメッセージを省略\]"),
    re.compile(r"\[(\d+) earlier messages? omitted\]"),
)
#: Passes of the selection that shrink the budget by what the inserted messages cost.
_MAX_PASSES: Final = 6


class Stage(StrEnum):
    """How full the context is, and so what pruning does (spec 002 §2.2)."""

    NONE = "none"
    WARN = "warn"
    PRUNE = "prune"
    AGGRESSIVE = "aggressive"
    EMERGENCY = "emergency"


_RANK: Final[Mapping[Stage, int]] = MappingProxyType({stage: i for i, stage in enumerate(Stage)})


@dataclass(frozen=True, slots=True)
class ContextPolicy:
    """The budget and the pruning rules (spec 002 §10.1 ``MemoryConfig``); validated."""

    max_tokens: int = 8000
    prune_threshold: float = 0.8
    target_usage: float = 0.7
    min_gap_for_summary: int = 5
    summaries: bool = True
    keep_system: bool = True
    keep_last: int = 2
    importance: ImportanceConfig = field(default_factory=ImportanceConfig)

    def __post_init__(self) -> None:
        _check_int("max_tokens", self.max_tokens, MIN_MAX_TOKENS)
        _check_int("min_gap_for_summary", self.min_gap_for_summary, 1)
        _check_int("keep_last", self.keep_last, 1)
        for name in ("summaries", "keep_system"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValidationError(
                    f"context.{name}", value, "true or false", hint="use a boolean"
                )
        threshold, target = self.prune_threshold, self.target_usage
        if not _is_number(threshold) or not 0.0 < threshold <= 1.0:
            raise ValidationError(
                "context.prune_threshold",
                threshold,
                "a number above 0 and at most 1",
                hint="the share of max_tokens at which pruning starts, e.g. 0.8",
            )
        if not _is_number(target) or not 0.0 < target < threshold:
            raise ValidationError(
                "context.target_usage",
                target,
                f"a number above 0 and below prune_threshold ({threshold})",
                hint="the share of max_tokens pruning brings the history down to, e.g. 0.7",
            )
        if not isinstance(self.importance, ImportanceConfig):
            raise ValidationError(
                "context.importance",
                self.importance,
                "an ImportanceConfig",
                hint="build it with kioku.core.context.ImportanceConfig(...)",
            )

    @property
    def warn_at(self) -> float:
        """Usage from which the stage is ``warn``."""
        return max(0.0, round(self.prune_threshold - 0.2, 12))

    @property
    def aggressive_at(self) -> float:
        """Usage from which the stage is ``aggressive`` (halfway from the threshold to 1)."""
        return round((self.prune_threshold + 1.0) / 2.0, 12)

    def select_fraction(self, stage: Stage) -> float:
        """Share of ``max_tokens`` the selection aims at in ``stage``."""
        if stage is Stage.AGGRESSIVE:
            return max(min(self.target_usage, 0.1), round(self.target_usage - 0.1, 12))
        return self.target_usage


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _check_int(name: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValidationError(
            f"context.{name}", value, f"an integer >= {minimum}", hint=f"use e.g. {minimum * 2}"
        )


#: The presets of spec 002 §14.
PRESETS: Final[Mapping[str, ContextPolicy]] = MappingProxyType(
    {
        "balanced": ContextPolicy(max_tokens=8000, prune_threshold=0.8, target_usage=0.7),
        "conservative": ContextPolicy(max_tokens=6000, prune_threshold=0.6, target_usage=0.5),
        "aggressive": ContextPolicy(max_tokens=12000, prune_threshold=0.9, target_usage=0.8),
    }
)


def policy_preset(name: str, **overrides: Any) -> ContextPolicy:
    """The preset ``name`` (spec 002 §14) with ``overrides`` applied; everything validated."""
    key = name.strip().lower() if isinstance(name, str) else name
    base = PRESETS.get(key) if isinstance(key, str) else None
    if base is None:
        choices = ", ".join(PRESETS)
        raise ValidationError(
            "context.preset", name, f"one of {choices}", hint=f"pick one of {choices}"
        )
    known = tuple(f.name for f in fields(ContextPolicy))
    for option in overrides:
        if option not in known:
            raise ValidationError(
                "context policy option",
                option,
                f"one of {', '.join(known)}",
                hint="check the spelling of the option",
            )
    return replace(base, **overrides)


def stage_for(usage: float, policy: ContextPolicy) -> Stage:
    """The stage of a context filled to ``usage`` (a share of ``max_tokens``)."""
    if usage > 1.0:
        return Stage.EMERGENCY
    if usage >= policy.aggressive_at:
        return Stage.AGGRESSIVE
    if usage >= policy.prune_threshold:
        return Stage.PRUNE
    if usage >= policy.warn_at:
        return Stage.WARN
    return Stage.NONE


@dataclass(frozen=True, slots=True)
class Gap:
    """A maximal run ``messages[start:end]`` of removed messages."""

    start: int
    end: int
    summarize: bool

    @property
    def count(self) -> int:
        """How many messages the run holds."""
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class PrunePlan:
    """What pruning keeps and removes, before any summary is asked for.

    ``kept`` are ascending indices into the input; every other index lies in exactly one of
    ``gaps``. ``truncated`` is the index of a kept message that must be shortened to
    ``truncate_to`` tokens (overhead included) to fit, or ``None``. ``language`` is the
    language of the notices and summaries (``ja`` or ``en``). ``stage`` is the stage the
    plan was made in: a forced plan below the threshold is made in ``prune``. ``costs`` are
    the tokens of every input message as counted for the plan (empty when nothing is
    removed) by the counter named ``counter``, so :func:`assemble` need not count them
    again with the same counter.
    """

    stage: Stage
    usage: float
    tokens: int
    kept: tuple[int, ...]
    gaps: tuple[Gap, ...]
    truncated: int | None = None
    truncate_to: int = 0
    language: str = "en"
    costs: tuple[int, ...] = ()
    counter: str = ""

    @property
    def removes(self) -> bool:
        """Whether the plan removes or shortens anything."""
        return bool(self.gaps) or self.truncated is not None


@dataclass(frozen=True, slots=True)
class PruneStats:
    """What a pruning did (spec 002 §6.1 ``stats``).

    ``removed_count`` counts input messages that are not in the result; ``removed_tokens`` is
    ``original_tokens - final_tokens`` (net, inserted notices and summaries included).
    """

    pruned: bool
    stage: Stage
    emergency: bool
    original_count: int
    original_tokens: int
    final_count: int
    final_tokens: int
    removed_count: int
    removed_tokens: int
    summaries: int
    notices: int
    max_tokens: int

    def as_dict(self) -> dict[str, object]:
        """The stats as plain values (the stage as its string)."""
        data: dict[str, object] = {f.name: getattr(self, f.name) for f in fields(self)}
        data["stage"] = self.stage.value
        return data


# -- inserted messages -------------------------------------------------------------------------


def notice(count: int, language: str) -> Message:
    """The message that stands for ``count`` removed messages."""
    if language == "ja":
        return Message(INSERTED_ROLE, f"[{count}件のメッセージを省略]")
    noun = "message" if count == 1 else "messages"
    return Message(INSERTED_ROLE, f"[{count} earlier {noun} omitted]")


def notice_count(message: Message) -> int | None:
    """How many messages ``message`` stands for if it is a notice of :func:`notice`, else
    None (so a history pruned again can join its notices)."""
    if message.role != INSERTED_ROLE:
        return None
    for form in _NOTICE_FORMS:
        found = form.fullmatch(message.content)
        if found:
            return int(found.group(1))
    return None


def merge_notices(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with every run of consecutive notices joined into one: a history pruned
    again and again says "[12 earlier messages omitted]" once, not "[3 …]" then "[9 …]"."""
    out: list[Message] = []
    last_count: int | None = None
    for message in messages:
        count = notice_count(message)
        if count is not None and last_count is not None:
            ja = out[-1].content.endswith("件のメッセージを省略]")
            last_count += count
            out[-1] = notice(last_count, "ja" if ja else "en")
            continue
        out.append(message)
        last_count = count
    return out


def summary_message(count: int, summary: str, language: str) -> Message:
    """The message that summarises ``count`` removed messages."""
    text = " ".join(summary.split())
    if len(text) > SUMMARY_MAX_CHARS:
        text = text[: SUMMARY_MAX_CHARS - 1].rstrip() + "…"
    if language == "ja":
        return Message(INSERTED_ROLE, f"[過去{count}件の会話の要約: {text}]")
    noun = "message" if count == 1 else "messages"
    return Message(INSERTED_ROLE, f"[Summary of {count} earlier {noun}: {text}]")


def gap_text(messages: Sequence[Message], gap: Gap, per_message_chars: int = _GAP_CHARS) -> str:
    """The removed run as ``role: content`` lines (each cut) for the summarizer."""
    return "\n".join(
        f"{m.role}: {m.content[:per_message_chars]}" for m in messages[gap.start : gap.end]
    )


# -- planning ----------------------------------------------------------------------------------


class _Costs:
    """Token cost of a notice, cached per run length (the dearer of both languages)."""

    __slots__ = ("_counter", "_notice")

    def __init__(self, counter: TokenCounter) -> None:
        self._counter = counter
        self._notice: dict[int, int] = {}

    def notice(self, count: int) -> int:
        cost = self._notice.get(count)
        if cost is None:
            cost = max(message_tokens(self._counter, notice(count, lang)) for lang in ("en", "ja"))
            self._notice[count] = cost
        return cost


def _gaps(kept: Sequence[int], n: int) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    previous = -1
    for index in kept:
        if index > previous + 1:
            runs.append((previous + 1, index))
        previous = index
    if previous < n - 1:
        runs.append((previous + 1, n))
    return runs


def plan_prune(
    messages: Sequence[Message],
    policy: ContextPolicy,
    counter: TokenCounter,
    *,
    force: bool = False,
) -> PrunePlan:
    """Decide what to keep. Nothing is removed below ``prune_threshold`` unless ``force``."""
    n = len(messages)
    if n == 0:
        return PrunePlan(stage=Stage.NONE, usage=0.0, tokens=0, kept=(), gaps=())
    count = counter.count
    costs = [count(m.content) + MESSAGE_OVERHEAD for m in messages]
    total = sum(costs)
    usage = total / policy.max_tokens
    stage = stage_for(usage, policy)
    if _RANK[stage] < _RANK[Stage.PRUNE]:
        if not force:
            return PrunePlan(stage=stage, usage=usage, tokens=total, kept=tuple(range(n)), gaps=())
        stage = Stage.PRUNE

    lead = 0
    if policy.keep_system:
        while lead < n and messages[lead].role == "system":
            lead += 1
    tail = max(lead, n - policy.keep_last)
    pinned = [*range(lead), *range(tail, n)]
    pinned_tokens = sum(costs[i] for i in pinned)

    summarize = stage is Stage.AGGRESSIVE and policy.summaries
    min_summary = policy.min_gap_for_summary
    inserted = _Costs(counter)

    def notices_cost(runs: list[tuple[int, int]]) -> int:
        return sum(inserted.notice(e - s) for s, e in runs)

    target = math.floor(policy.select_fraction(stage) * policy.max_tokens)
    order: list[int] = []
    if tail > lead:
        # scores of the whole history (recency is relative to it), newest first, then a stable
        # sort by score: ties stay newer-first
        scores = score_all(messages, policy.importance)
        order = sorted(range(tail - 1, lead - 1, -1), key=scores.__getitem__, reverse=True)

    selected: list[int] = []
    kept: list[int] = pinned
    runs = _gaps(kept, n)
    reserve = 0
    # Every run of removed messages costs a notice, so a message is charged for the notices it
    # adds or saves: kept between two removed neighbours it splits a run (one more notice),
    # next to one kept neighbour it only shortens a run, between two kept ones it closes a run
    # (one notice fewer). The widest notice stands for all; the passes below settle the rest.
    per_notice = inserted.notice(n)
    for _ in range(_MAX_PASSES):
        is_kept = bytearray(n)
        for i in pinned:
            is_kept[i] = 1
        remaining = target - pinned_tokens - reserve - per_notice * len(_gaps(pinned, n))
        selected = []
        for i in order:
            removed_neighbours = (i > 0 and not is_kept[i - 1]) + (i < n - 1 and not is_kept[i + 1])
            cost = costs[i] + per_notice * (removed_neighbours - 1)
            if cost <= remaining:
                selected.append(i)
                is_kept[i] = 1
                remaining -= cost
        kept = sorted(pinned + selected) if selected else pinned
        runs = _gaps(kept, n)
        used = pinned_tokens + sum(costs[i] for i in selected) + notices_cost(runs)
        if used <= target or not selected:
            break
        reserve += used - target
    kept_tokens = pinned_tokens + sum(costs[i] for i in selected)
    if selected and kept_tokens + notices_cost(runs) > policy.max_tokens:
        selected, kept = [], pinned  # the passes ran out: fall back to the pinned messages
        runs = _gaps(kept, n)

    truncated: int | None = None
    truncate_to = 0
    if not selected:
        kept, truncated, truncate_to = _fit_pinned(kept, costs, policy.max_tokens, inserted, n)
        runs = _gaps(kept, n)

    gaps = tuple(Gap(s, e, summarize and e - s >= min_summary) for s, e in runs)
    return PrunePlan(
        stage=stage,
        usage=usage,
        tokens=total,
        kept=tuple(kept),
        gaps=gaps,
        truncated=truncated,
        truncate_to=truncate_to,
        language=_language(messages, gaps),
        costs=tuple(costs),
        counter=counter.name,
    )


def _fit_pinned(
    pinned: list[int], costs: Sequence[int], max_tokens: int, inserted: _Costs, n: int
) -> tuple[list[int], int | None, int]:
    """Make the pinned messages fit: shorten or drop the oldest, last shorten the newest."""
    kept = list(pinned)
    while True:
        room = max_tokens - sum(inserted.notice(e - s) for s, e in _gaps(kept, n))
        need = sum(costs[i] for i in kept)
        if need <= room:
            return kept, None, 0
        oldest = kept[0]
        if len(kept) == 1:
            return kept, oldest, max(room, 0)
        allowed = costs[oldest] - (need - room)
        if allowed >= _MIN_TRUNCATED_TOKENS:
            return kept, oldest, allowed
        kept.pop(0)


def _language(messages: Sequence[Message], gaps: Sequence[Gap]) -> str:
    """``ja`` when the removed messages are Japanese, else ``en`` (sampled evenly)."""
    removed = sum(g.count for g in gaps)
    if not removed:
        return "en"
    step = max(1, removed // _LANGUAGE_SAMPLES)
    parts: list[str] = []
    seen = 0
    for gap in gaps:
        first = gap.start + (-seen) % step
        parts.extend(messages[i].content[:_LANGUAGE_CHARS] for i in range(first, gap.end, step))
        seen += gap.count
    return "ja" if detect_language("\n".join(parts)) == "ja" else "en"


# -- assembling --------------------------------------------------------------------------------


def _shorten(message: Message, limit: int, counter: TokenCounter) -> Message:
    """``message`` cut (with :data:`TRUNCATION_MARKER`) to at most ``limit`` tokens in total."""
    budget = limit - MESSAGE_OVERHEAD
    content = message.content
    if counter.count(content) <= budget:
        return message

    def fits(length: int) -> bool:
        return counter.count(content[:length].rstrip() + TRUNCATION_MARKER) <= budget

    if budget <= 0 or not fits(0):
        return Message(message.role, "")
    low, high = 0, len(content)  # fits(low) holds, fits(high) does not
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return Message(message.role, content[:low].rstrip() + TRUNCATION_MARKER)


def assemble(
    messages: Sequence[Message],
    plan: PrunePlan,
    summaries: Mapping[int, str | None],
    counter: TokenCounter,
    policy: ContextPolicy,
) -> tuple[list[Message], PruneStats]:
    """The pruned history: kept messages in order, a summary or notice in place of each gap.

    ``summaries`` maps ``gap.start`` to the summarizer's text, ``None`` when it failed (then
    the gap gets a notice). The result never exceeds ``policy.max_tokens`` when the plan
    removes anything: a summary that does not fit becomes a notice, notices are dropped
    (oldest first) if need be, then the least important messages, last the newest is cut.
    """
    n = len(messages)
    max_tokens = policy.max_tokens
    if not plan.removes:
        return list(messages), _stats(plan, policy, n, n, plan.tokens, 0, 0, n)

    kept: dict[int, Message] = {i: messages[i] for i in plan.kept}
    if plan.truncated is not None and plan.truncated in kept:
        kept[plan.truncated] = _shorten(messages[plan.truncated], plan.truncate_to, counter)
    if len(plan.costs) == n and plan.counter == counter.name:
        cost = {i: plan.costs[i] for i in kept}
    else:
        cost = {i: message_tokens(counter, m) for i, m in kept.items()}
    if plan.truncated is not None and plan.truncated in kept:
        cost[plan.truncated] = message_tokens(counter, kept[plan.truncated])
    language = plan.language
    inserts: dict[int, tuple[Message, int]] = {}  # gap.end -> (message, tokens)
    for gap in plan.gaps:
        m = notice(gap.count, language)
        inserts[gap.end] = (m, message_tokens(counter, m))
    total = sum(cost.values()) + sum(c for _, c in inserts.values())
    summarized: set[int] = set()  # gap ends whose insert is a summary

    if total <= max_tokens:
        # summaries fill the headroom above the selection, but stay below the pruning threshold
        # (a history pruned into the threshold would be pruned again on the next message)
        limit = min(float(max_tokens), policy.prune_threshold * max_tokens - 1e-9)
        for gap in plan.gaps:
            text = summaries.get(gap.start) if gap.summarize else None
            if not text or not text.strip():
                continue
            m = summary_message(gap.count, text, language)
            c = message_tokens(counter, m)
            delta = c - inserts[gap.end][1]
            if total + delta <= limit:
                inserts[gap.end] = (m, c)
                summarized.add(gap.end)
                total += delta
    else:
        for gap in plan.gaps:  # drop notices, oldest first
            if total <= max_tokens:
                break
            total -= inserts.pop(gap.end)[1]
        if total > max_tokens:  # drop the least important messages but the newest
            newest = max(kept)
            droppable = sorted(
                (i for i in kept if i != newest),
                key=lambda i: importance(messages[i], i, n, policy.importance),
            )
            for i in droppable:
                if total <= max_tokens:
                    break
                total -= cost.pop(i)
                del kept[i]
            if total > max_tokens:
                kept[newest] = _shorten(kept[newest], max_tokens, counter)
                total = message_tokens(counter, kept[newest])
                cost[newest] = total

    result: list[Message] = []
    for i in sorted(set(kept) | set(inserts)):
        insert = inserts.get(i)
        if insert is not None:
            result.append(insert[0])
        message = kept.get(i)
        if message is not None:
            result.append(message)
    summaries_used = len(summarized)
    notices_used = len(inserts) - summaries_used
    stats = _stats(plan, policy, n, len(result), total, summaries_used, notices_used, len(kept))
    return result, stats


def _stats(
    plan: PrunePlan,
    policy: ContextPolicy,
    original_count: int,
    final_count: int,
    final_tokens: int,
    summaries: int,
    notices: int,
    kept_count: int,
) -> PruneStats:
    removed = original_count - kept_count
    return PruneStats(
        pruned=removed > 0 or plan.truncated is not None,
        stage=plan.stage,
        emergency=plan.stage is Stage.EMERGENCY,
        original_count=original_count,
        original_tokens=plan.tokens,
        final_count=final_count,
        final_tokens=final_tokens,
        removed_count=removed,
        removed_tokens=plan.tokens - final_tokens,
        summaries=summaries,
        notices=notices,
        max_tokens=policy.max_tokens,
    )


def prune(
    messages: Sequence[Message],
    policy: ContextPolicy,
    counter: TokenCounter,
    summarize: Callable[[str], str | None] | None = None,
    *,
    force: bool = False,
) -> tuple[list[Message], PruneStats]:
    """Plan, summarise the gaps that call for it, assemble (see the module docstring).

    ``summarize`` gets :func:`gap_text` of a removed run and returns a short summary, or
    ``None``; if it raises, the run gets a notice and the error is not propagated.
    """
    plan = plan_prune(messages, policy, counter, force=force)
    summaries: dict[int, str | None] = {}
    if summarize is not None:
        for gap in plan.gaps:
            if not gap.summarize:
                continue
            try:
                text = summarize(gap_text(messages, gap))
            except Exception:  # a failing summarizer degrades to a notice (spec 002 §8.1)
                text = None
            summaries[gap.start] = text if isinstance(text, str) else None
    return assemble(messages, plan, summaries, counter, policy)
