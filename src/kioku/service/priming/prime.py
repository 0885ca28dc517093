"""Priming (spec 001, 自動想起): before every prompt, what matters now, within budgets.

The message's type (greeting, question, request, heartbeat; offline, Japanese and English)
sets the total budget in tokens; the channels share it (:func:`kioku.core.priming.allocate`:
A sender profile 500, B recent activity 1,300, C related knowledge 700, D procedures 200,
E episodes 800, scaled down to the total, a quiet channel's share going to the others).
Each channel fills its share with its best lines (:mod:`.channels`); episodes come from spec
000's recall, so forgetting shapes what is primed. The block is plain data: one tagged
section per channel that has something, every memory line made inert, episodes in the
``<memories>`` format of spec 000.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.core.inject import CLOSE, NOTE, OPEN, Injected, format_memories, memory_line
from kioku.core.model import Kind
from kioku.core.priming.budget import Channel, allocate, fit_lines
from kioku.core.priming.message_type import (
    TYPE_BUDGETS,
    MessageType,
    classify_message,
    parse_message_type,
)
from kioku.ports.store import MemoryFilter, MemoryPatch
from kioku.records import Record
from kioku.service.priming import channels
from kioku.service.priming.channels import Candidate

if TYPE_CHECKING:
    from kioku.core.activity.events import ActivityEvent
    from kioku.core.tokens import TokenCounter
    from kioku.service.engine import Engine
    from kioku.service.recall.results import RecallResult

__all__ = ["ChannelFill", "Priming", "prime"]

TITLES: Final = {
    Channel.SENDER_PROFILE: "sender profile",
    Channel.RECENT_ACTIVITY: "recent activity",
    Channel.RELATED_KNOWLEDGE: "related knowledge",
    Channel.PROCEDURES: "procedures",
    Channel.EPISODES: "episodes",
}
#: The order of the sections in the block: the recalled episodes (what the prompt is about)
#: first, recent activity (the least specific) last, so a cut to the block's size drops it first.
_ORDER: Final = (
    Channel.EPISODES,
    Channel.SENDER_PROFILE,
    Channel.RELATED_KNOWLEDGE,
    Channel.PROCEDURES,
    Channel.RECENT_ACTIVITY,
)
#: Characters per token assumed when a channel's tokens become the episodes' character budget.
_CHARS_PER_TOKEN: Final = 4


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ChannelFill(Record):
    """What one channel showed: its budget, the tokens used, its lines and why."""

    channel: Channel
    budget: int
    used: int
    lines: tuple[str, ...]
    reasons: tuple[str, ...]
    memory_ids: tuple[str, ...]
    skipped: int = 0


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Priming(Record):
    message: str
    message_type: MessageType
    total_budget: int
    channels: tuple[ChannelFill, ...]
    block: str
    #: The episodic recall behind channel E (for its traces), None when it did not run.
    recall: RecallResult | None = None

    @property
    def memory_ids(self) -> tuple[str, ...]:
        return tuple(i for fill in self.channels for i in fill.memory_ids)


def _section(channel: Channel, lines: list[str]) -> str:
    letter = channel.letter
    head = f'<kioku-priming channel="{letter}" name="{TITLES[channel]}">'
    return "\n".join([head, NOTE, *lines, "</kioku-priming>"])


def _kinds_present(engine: Engine) -> set[str]:
    store = engine.store
    present = set()
    for kind in (Kind.KNOWLEDGE, Kind.PROCEDURE, Kind.PROFILE):
        flt = MemoryFilter(
            user_id=engine.user_id, agent_id=engine.agent_id, kind=kind.value, limit=1
        )
        if store.list(flt):
            present.add(kind.value)
    return present


def _episodes(
    engine: Engine,
    text: str,
    session_id: str | None,
    mark: bool,
    now: datetime,
    mood_shift: bool | None,
) -> tuple[list[Injected], list[str], RecallResult]:
    from kioku.service.recall.pipeline import run_recall
    from kioku.service.scope import scoped

    result = run_recall(
        store=engine.store,
        embedder=engine.embedder,
        config=engine.config,
        scope=scoped(engine),
        query=text,
        now=now,
        session_id=session_id,
        mark=mark,
        mood_shift=mood_shift,
    )
    items = [
        Injected(
            i.memory.created,
            i.memory.current_level,
            i.archived,
            channels.defuse(i.memory.trigger),
            channels.defuse(i.memory.content),
        )
        for i in result.items
    ]
    notes = ""
    if result.limited:
        notes += f"; mood limiter ranked {len(result.limited)} negative intense down"
    if result.mood_shifted:
        notes += "; mood shift"
    reasons = [
        (f"recalled: final {i.final:.2f}" if i.via is None else f"recalled via {i.via}") + notes
        for i in result.items
    ]
    return items, reasons, result


def prime(
    engine: Engine,
    message: str,
    *,
    sender: str | None = None,
    message_type: str | None = None,
    session_id: str | None = None,
    mark: bool = True,
    max_chars: int | None = None,
    counter: TokenCounter | None = None,
    at: datetime | None = None,
    mood_shift: bool | None = None,
) -> Priming:
    """Prime for ``message`` (see the module docstring). ``mark=False`` leaves no trace:
    nothing is marked recalled and no event is logged. ``mood_shift`` turns the mood shift
    of the episodes' recall on or off for this call (None: ``mood.shift``)."""
    from kioku.adapters.text.lexical import query_terms
    from kioku.core.tokens import make_counter

    text = message.strip() if isinstance(message, str) else ""
    kind = parse_message_type(message_type) if message_type else classify_message(text)
    total = TYPE_BUDGETS[kind]
    count = counter or make_counter(engine.config.context.tokenizer)
    now = at or engine.clock.now()
    present = _kinds_present(engine) if text else set()
    terms = query_terms(text) if text else []

    found: dict[Channel, list[Candidate]] = {c: [] for c in Channel}
    if "profile" in present:
        found[Channel.SENDER_PROFILE] = channels.sender_profile(engine, sender)
    if "knowledge" in present:
        found[Channel.RELATED_KNOWLEDGE] = channels.knowledge(engine, text, terms, now)
    if "procedure" in present:
        found[Channel.PROCEDURES] = channels.procedures(engine, text, terms)
    recall: RecallResult | None = None
    episodes: list[Injected] = []
    if text and kind is not MessageType.HEARTBEAT:
        episodes, reasons, recall = _episodes(engine, text, session_id, mark, now, mood_shift)
        found[Channel.EPISODES] = [
            Candidate(memory_line(e), why, item.memory.id)
            for e, why, item in zip(episodes, reasons, recall.items, strict=True)
        ]
    # Who is speaking and what happened lately frame what the message is about: they come
    # with a greeting or a heartbeat, or beside something the message is about, never alone
    # for a message about nothing kioku knows (that would inject unrelated memories).
    framed = kind in (MessageType.GREETING, MessageType.HEARTBEAT) or any(
        found[c] for c in (Channel.RELATED_KNOWLEDGE, Channel.PROCEDURES, Channel.EPISODES)
    )
    if not framed:
        found[Channel.SENDER_PROFILE] = []
    activity = ""
    events: list[ActivityEvent] = []
    if framed:
        events = channels.recent_events(engine, now, skip=session_id)
        activity = channels.activity_text(
            events, total, count, now, heartbeat=kind is MessageType.HEARTBEAT
        )
    wanted = {c: sum(count.count(x.line) for x in found[c]) for c in found}
    wanted[Channel.RECENT_ACTIVITY] = count.count(activity) if activity else 0
    shares = allocate(total, wanted)

    fills: list[ChannelFill] = []
    sections: list[str] = []
    for channel in _ORDER:
        budget = shares.get(channel, 0)
        if channel is Channel.RECENT_ACTIVITY:
            lines: list[str] = []
            reasons_b: list[str] = []
            ids: list[str] = []
            skipped = 0
            if activity and budget > 0:
                text_b = activity
                if budget < wanted[channel]:
                    text_b = channels.activity_text(
                        events, budget, count, now, heartbeat=kind is MessageType.HEARTBEAT
                    )
                lines = text_b.splitlines()
                reasons_b = [f"{len(lines)} line(s) of the activity log"]
            fills.append(
                ChannelFill(
                    channel,
                    budget,
                    count.count("\n".join(lines)) if lines else 0,
                    tuple(lines),
                    tuple(reasons_b),
                    tuple(ids),
                    skipped,
                )
            )
            if lines:
                sections.append(_section(channel, lines))
            continue
        items = found[channel]
        kept, skipped = fit_lines([c.line for c in items], budget, count)
        chosen = [c for c in items if c.line in kept][: len(kept)]
        used = sum(count.count(line) for line in kept)
        fills.append(
            ChannelFill(
                channel,
                budget,
                used,
                tuple(kept),
                tuple(c.why for c in chosen),
                tuple(c.memory_id for c in chosen if c.memory_id),
                skipped,
            )
        )
        if not kept:
            continue
        if channel is Channel.EPISODES:
            shown = [e for e, c in zip(episodes, items, strict=True) if c.line in kept]
            # The episodes keep spec 000's own limit too ([retrieval] budget_chars).
            chars = min(budget * _CHARS_PER_TOKEN + 200, engine.config.retrieval.budget_chars)
            sections.append(format_memories(shown, chars))
        else:
            sections.append(_section(channel, kept))
    block = _trim("\n".join(sections), max_chars)
    fills.sort(key=lambda f: list(Channel).index(f.channel))
    primed = Priming(text, kind, total, tuple(fills), block, recall)
    if mark and text:
        _leave_traces(engine, primed, session_id, now)
    return primed


def _trim(block: str, max_chars: int | None) -> str:
    """Cut whole lines from the end of sections until the block fits (tags kept balanced)."""
    if max_chars is None or len(block) <= max_chars:
        return block
    lines = block.splitlines()
    closers = {"</kioku-priming>", CLOSE}
    while lines and len("\n".join(lines)) > max_chars:
        for i in range(len(lines) - 1, -1, -1):
            if (
                lines[i] not in closers
                and not lines[i].startswith(("<kioku-priming", OPEN))
                and lines[i] != NOTE
            ):
                del lines[i]
                break
        else:
            return ""
    return "\n".join(_drop_empty(lines))


def _drop_empty(lines: list[str]) -> list[str]:
    out: list[str] = []
    for line in lines:
        if line in ("</kioku-priming>", CLOSE) and out and out[-1] == NOTE:
            out.pop()
            out.pop()
            continue
        out.append(line)
    return out


def _leave_traces(engine: Engine, primed: Priming, session_id: str | None, now: datetime) -> None:
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import log_events, make_event

    store = engine.store
    # Usage records only: the commit need not wait for the disk (see Store.atomic).
    with store.atomic(durable=False):
        # Knowledge and procedures injected count as used now (episodes are reinforced by the
        # recall that found them, and by the nightly batch).
        for memory in store.get_many(list(primed.memory_ids)):
            if memory.kind in (Kind.KNOWLEDGE, Kind.PROCEDURE):
                store.update(
                    memory.id,
                    MemoryPatch(recall_count=memory.recall_count + 1, last_access=now),
                )
        # The prompt itself is not logged here: it is the turn's own event, which an erasure
        # of that turn redacts; this event names only what was primed.
        event = make_event(
            engine,
            EventType.PRIMING,
            "",
            at=now,
            memory_ids=primed.memory_ids,
            session_id=session_id,
            summary=f"{primed.message_type.value}: "
            + ", ".join(f"{f.channel.letter} {len(f.lines)}" for f in primed.channels),
        )
        log_events(engine, [event])
