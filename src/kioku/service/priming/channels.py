"""The candidates of each priming channel, with the reason each was chosen.

* A, sender profile: the profile whose person (or an alias) is the sender, exact match.
* B, recent activity: the activity log of the last days, formatted by spec 001's rules.
* C, related knowledge: knowledge matching the message (lexical and vector), qualified by
  the same coverage floor as episodic recall, ranked by spreading activation; superseded
  knowledge is never primed.
* D, procedures: spec 001's three-stage matching over the procedures' descriptions.
Episodes (E) come from spec 000's recall (:mod:`kioku.service.recall.pipeline`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from kioku.core.inject import neutralise
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails, ProfileDetails, profile_text
from kioku.core.model import Kind, Memory
from kioku.core.presets import effective_weights
from kioku.core.priming.activation import (
    activation_score,
    frequency_boost,
    personalized_pagerank,
    recency_factor,
)
from kioku.core.tokens import TokenCounter
from kioku.ports.store import MemoryFilter
from kioku.records import Record
from kioku.service.recall.pipeline import query_vector
from kioku.service.recall.scoring import coverage_of, match_of

if TYPE_CHECKING:
    from kioku.core.activity.events import ActivityEvent
    from kioku.service.engine import Engine

__all__ = [
    "Candidate",
    "activity_text",
    "defuse",
    "knowledge",
    "procedures",
    "recent_events",
    "sender_profile",
]

#: How far back channel B looks, and how many events it reads at most.
ACTIVITY_DAYS: Final = 7
ACTIVITY_EVENTS: Final = 60
_KNOWLEDGE_CANDIDATES: Final = 50
_PROCEDURES_READ: Final = 500
#: Events that say what kioku itself did for a prompt; they are not news to the reader.
_QUIET: Final = frozenset({"priming", "memory_recall"})


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Candidate(Record):
    """One line a channel could show, best first, and why it is there."""

    line: str
    why: str
    memory_id: str | None = None
    score: float = 0.0


_BLOCK_TAG: Final = re.compile(r"<\s*(/?)\s*kioku-priming\b[^>]*>", re.IGNORECASE)


def defuse(text: str) -> str:
    """``text`` with anything like a priming section tag made inert (line breaks kept)."""
    return _BLOCK_TAG.sub(lambda m: f"‹{m.group(1)}kioku-priming›", text)


def _clean(text: str) -> str:
    """One line of inert text that cannot open or close a block of its own."""
    return _BLOCK_TAG.sub(lambda m: f"‹{m.group(1)}kioku-priming›", neutralise(text))


def sender_profile(engine: Engine, sender: str | None) -> list[Candidate]:
    """Channel A: the lines of the sender's profile (exact name or alias, any case)."""
    name = (sender or engine.user_id).strip().casefold()
    if not name:
        return []
    flt = MemoryFilter(user_id=engine.user_id, agent_id=engine.agent_id, kind=Kind.PROFILE.value)
    for memory in engine.store.list(flt):
        details = memory.details
        if not isinstance(details, ProfileDetails):
            continue
        names = {details.person.casefold(), *(a.casefold() for a in details.aliases)}
        if name in names:
            why = f"profile of {details.person} (the sender)"
            return [
                Candidate(_clean(f"{details.person}: {line}"), why, memory.id)
                for line in profile_text(details).splitlines()
                if line.strip()
            ]
    return []


def recent_events(engine: Engine, now: datetime, skip: str | None = None) -> list[ActivityEvent]:
    """Channel B's events: the newest of the last days, without kioku's own priming and
    recall events or those of the session ``skip`` (the one being primed, already in its
    context)."""
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import read_events

    shown = tuple(t.value for t in EventType if t.value not in _QUIET)
    rows = read_events(
        engine, since=now - timedelta(days=ACTIVITY_DAYS), types=shown, limit=ACTIVITY_EVENTS
    )
    return [e for _, e in rows if e is not None and not (skip and e.session_id == skip)]


def activity_text(
    events: Sequence[ActivityEvent],
    budget: int,
    counter: TokenCounter,
    now: datetime,
    *,
    heartbeat: bool,
) -> str:
    """Channel B: ``events`` as spec 001 formats them for priming, within ``budget``."""
    from kioku.core.activity.priming_format import format_for_priming

    if not events:
        return ""
    # A heartbeat's whole budget (200 tokens) is below spec 001's 400-token floor for channel B
    # at a heartbeat: the total wins, so the floor is not applied.
    primed = format_for_priming(
        events, budget, counter, now=now, heartbeat=heartbeat, min_tokens_heartbeat=0
    )
    return _clean_block(primed.text)


def _clean_block(text: str) -> str:
    return "\n".join(
        line[: len(line) - len(line.lstrip())] + _clean(line) for line in text.splitlines()
    )


def knowledge(engine: Engine, message: str, terms: Sequence[str], now: datetime) -> list[Candidate]:
    """Channel C: knowledge that matches the message, by spreading activation."""
    store = engine.store
    flt = MemoryFilter(
        user_id=engine.user_id, agent_id=engine.agent_id, kind=Kind.KNOWLEDGE.value, archived=False
    )
    weights = effective_weights(engine.config.retrieval)
    lexical: dict[str, float] = {}
    if terms:
        found = store.search_lexical(terms, flt, _KNOWLEDGE_CANDIDATES)
        best = max((s for _, s in found), default=0.0)
        lexical = {k: (s / best if best > 0 else 0.0) for k, s in found}
    similar: dict[str, float] = {}
    embedder = engine.embedder
    vector = query_vector(embedder, message)
    if any(vector):
        similar = dict(store.vector_search(embedder.model_id, vector, flt, _KNOWLEDGE_CANDIDATES))
    covered = coverage_of(store, terms, lexical.keys() | similar.keys())
    floor = engine.config.retrieval.min_relevance
    qualified = [key for key, value in covered.items() if value >= floor]
    memories = {m.id: m for m in store.get_many(qualified)}
    match = {
        key: match_of(similar.get(key, 0.0), lexical.get(key, 0.0), weights) for key in memories
    }
    rank: dict[str, float] = {}
    if engine.config.priming.graph_spreading and memories:
        rank = _spread(engine, memories, match)
    out: list[Candidate] = []
    for memory in memories.values():
        details = memory.details
        if isinstance(details, KnowledgeDetails) and details.superseded:
            continue
        if memory.kind is not Kind.KNOWLEDGE or memory.archived:
            continue
        similarity = match.get(memory.id, 0.0)
        age = max(0.0, (now - memory.created).total_seconds() / 86400)
        pagerank = rank.get(memory.id) if rank else None
        score = activation_score(similarity, age, memory.recall_count, pagerank)
        why = (
            f"activation {score:.3f} = match {similarity:.3f} + recency "
            f"{0.2 * recency_factor(age):.3f} + use {frequency_boost(memory.recall_count):.3f}"
        )
        if pagerank is not None:
            why += f" + graph {0.5 * pagerank:.3f}"
        confidence = details.confidence if isinstance(details, KnowledgeDetails) else None
        # A title that only repeats the start of the text is not printed twice.
        title, text = memory.trigger.strip(), memory.content.strip()
        said = text if text.startswith(title) else f"{title}: {text}"
        parts = [] if confidence is None else [f"confidence {confidence:.2f}"]
        if _RELATIVE_TIME.search(said):
            # "next Thursday" means nothing a month later without the day it was said on.
            since = details.valid_from if isinstance(details, KnowledgeDetails) else None
            parts.insert(0, f"said {(since or memory.created).date().isoformat()}")
        note = f" ({'; '.join(parts)})" if parts else ""
        line = _clean(f"- {said}{note}")
        out.append(Candidate(line, why, memory.id, score))
    out.sort(key=lambda c: (-c.score, c.memory_id or ""))
    return out


#: Words whose day depends on when they were said: "next Thursday", 「来週」.
_DAYS_EN: Final = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_RELATIVE_TIME: Final = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|recently|lately"
    rf"|(?:this|next|last|coming) (?:week|weekend|month|year|morning|evening|{_DAYS_EN})"
    r"|(?:in|for) (?:a|one|two|three|four|five|six|\d+) (?:days?|weeks?|months?|years?)"
    r"|(?:a|one|two|three|four|five|six|\d+) (?:days?|weeks?|months?|years?) ago)\b"
    r"|今日|昨日|明日|明後日|一昨日|今週|来週|先週|再来週|今月|来月|先月|再来月|今年|来年|去年|昨年"
    r"|再来年|今朝|今夜|今晩|さっき|この前|最近",
    re.IGNORECASE,
)


def _spread(
    engine: Engine, memories: dict[str, Memory], match: dict[str, float]
) -> dict[str, float]:
    """Personalised PageRank from the matched knowledge over its relations, one hop out
    (both directions); the related knowledge reached is added to ``memories``."""
    store = engine.store
    edges: dict[str, list[tuple[str, float]]] = {}
    for memory in list(memories.values()):
        linked = [r.id for r in memory.relations] + store.referencing(memory.id)
        for other in linked:
            edges.setdefault(memory.id, []).append((other, 1.0))
            edges.setdefault(other, []).append((memory.id, 1.0))
    reached = [key for key in edges if key not in memories]
    for memory in store.get_many(reached):
        if (memory.user_id, memory.agent_id) == (engine.user_id, engine.agent_id):
            memories[memory.id] = memory
    seeds = {key: value for key, value in match.items() if value > 0}
    if not seeds or not edges:
        return {}
    return personalized_pagerank(edges, seeds)


def _procedure_line(memory: Memory, details: ProcedureDetails) -> str:
    steps = " → ".join(details.steps[:8])
    tail = f": {steps}" if steps else ""
    return _clean(
        f"- {memory.trigger} ({details.description}; confidence {details.confidence:.2f}){tail}"
    )


def procedures(engine: Engine, message: str, terms: Sequence[str]) -> list[Candidate]:
    """Channel D: procedures whose description the message matches (three stages)."""
    from kioku.adapters.text.lexical import index_terms
    from kioku.core.priming.procedures import ProcedureCandidate, match_procedures

    store = engine.store
    flt = MemoryFilter(
        user_id=engine.user_id,
        agent_id=engine.agent_id,
        kind=Kind.PROCEDURE.value,
        archived=False,
        limit=_PROCEDURES_READ,
    )
    memories = {m.id: m for m in store.list(flt)}
    if not memories:
        return []
    details = {
        key: m.details if isinstance(m.details, ProcedureDetails) else ProcedureDetails(m.trigger)
        for key, m in memories.items()
    }
    candidates = [
        ProcedureCandidate(key, d.description, frozenset(index_terms(d.description)))
        for key, d in details.items()
    ]
    similarities: dict[str, float] = {}
    embedder = engine.embedder
    vector = query_vector(embedder, message)
    if any(vector):
        similarities = dict(store.vector_search(embedder.model_id, vector, flt, 20))
    matches = match_procedures(message, frozenset(terms), candidates, similarities, limit=3)
    return [
        Candidate(
            _procedure_line(memories[m.id], details[m.id]),
            f"stage {m.stage}: {m.reason}",
            m.id,
            m.score if math.isfinite(m.score) else 0.0,
        )
        for m in matches
    ]
