"""Which of spec 000's relation types a new memory has to earlier ones (記憶の関連付け), pure.

The batch links every memory made since the previous batch. Besides ``same_topic`` (cosine
similarity at least ``auto_link_similarity_threshold``, see
:func:`kioku.core.lifecycle.links.auto_links`), four typed relations follow rules that need no
model:

``continues``
    The next turn of the same session, made within :data:`CONTINUE_GAP_SECONDS` of the one
    before it; or a memory that says it continues something (「続き」「昨日の」"where we left
    off", "following up") → the most similar memory of the :data:`CONTINUE_WINDOW_DAYS`
    before it, if it is about the same thing (:data:`TOPIC_SIMILARITY`).
``references``
    A memory that explicitly refers to the past (「前に話した」「前回」「この前」"as we
    discussed", "last time", "you mentioned") → the most similar earlier memory.
``contradicts``
    A decision that overturns one (「やめ」「変更」「やっぱり」「代わりに」"instead", "no
    longer", "changed my mind", "switch to") → the most similar earlier *decision*, if it is
    similar enough to be about the same thing (:data:`TOPIC_SIMILARITY`).
``derived_from``
    A decision (without such markers) → the most similar earlier memory that is not a
    decision, within :data:`DERIVE_WINDOW_DAYS`: the discussion it came out of. kioku
    compresses a memory in place (same id), so compression creates no derived memory.

The markers are surface words: a negated or quoted marker still counts, and a relation the
user implies without them is left to ``same_topic``. "Most similar" needs at least
:data:`MIN_SIMILARITY`. One relation per pair, the most specific type first
(contradicts, derived_from, references, continues, same_topic); its direction is the spec's
(higher score → lower; within ``score_proximity_threshold``, newer → older), so the stored
source is not always the newer memory.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from kioku.core.lifecycle.links import Link, Node, direction

__all__ = [
    "CONTINUE_GAP_SECONDS",
    "CONTINUE_WINDOW_DAYS",
    "DERIVE_WINDOW_DAYS",
    "MIN_SIMILARITY",
    "PRECEDENCE",
    "TOPIC_SIMILARITY",
    "Earlier",
    "Fresh",
    "Proposal",
    "choose",
    "markers",
    "propose",
]

CONTINUES: Final = "continues"
REFERENCES: Final = "references"
DERIVED_FROM: Final = "derived_from"
CONTRADICTS: Final = "contradicts"
SAME_TOPIC: Final = "same_topic"
#: Most specific first: a pair that qualifies twice keeps the earlier type.
PRECEDENCE: Final = (CONTRADICTS, DERIVED_FROM, REFERENCES, CONTINUES, SAME_TOPIC)

#: The longest pause between two turns of a session that still continue each other.
CONTINUE_GAP_SECONDS: Final = 30 * 60.0
#: How far back "let's continue" looks.
CONTINUE_WINDOW_DAYS: Final = 3.0
#: How far back a decision looks for the discussion it came from.
DERIVE_WINDOW_DAYS: Final = 14.0
#: The least cosine similarity for "the most similar earlier memory" of a marker.
MIN_SIMILARITY: Final = 0.3
#: The least similarity for two memories to be about the same thing (decisions).
TOPIC_SIMILARITY: Final = 0.5

_DAY: Final = 86_400.0
_DECISION: Final = "decision"

_PATTERNS: Final = {
    REFERENCES: re.compile(
        r"前に(話|言|相談|聞)|前回|この前|以前(話|言|相談)|さっき(話|言)|先日の|"
        r"\bas (we|i|you) (discussed|said|mentioned|agreed)\b|\blast time\b|"
        r"\b(talked|spoke) about (this|that|it) (before|earlier)\b|\byou mentioned\b|"
        r"\bremember when\b|\bthe other day\b",
        re.IGNORECASE,
    ),
    CONTINUES: re.compile(
        r"続き|昨日の|引き続き|続けよう|続けて|"
        r"\bwhere (we|i) left off\b|\bcontinu(e|ing) (from|with|where|our|the)\b|"
        r"\bfollow(ing)?[- ]up on\b|\bpick(ing)? up where\b|\byesterday's\b|"
        r"\b(from|since) yesterday\b",
        re.IGNORECASE,
    ),
    CONTRADICTS: re.compile(
        r"やめ|止め|変更|やっぱり|代わりに|撤回|取り消|見直|"
        r"\binstead\b|\bno longer\b|\bchanged? (my|our) mind\b|\bswitch(ed|ing)? to\b|"
        r"\bnot going to\b|\bscrap(ped)?\b|\brevers(e|ed|ing)\b|\bdrop(ped)? the\b",
        re.IGNORECASE,
    ),
}


def markers(text: str) -> frozenset[str]:
    """The relation markers in ``text``: any of references, continues, contradicts."""
    return frozenset(kind for kind, pattern in _PATTERNS.items() if pattern.search(text))


@dataclass(frozen=True, slots=True)
class Fresh:
    """A memory made since the previous batch, as its rules need it."""

    id: str
    created: float  # seconds since the epoch
    category: str
    session_id: str | None
    text: str  # trigger and content, as made (Level 1)


@dataclass(frozen=True, slots=True)
class Earlier:
    """An active memory made before a fresh one, and how similar the two are."""

    id: str
    created: float
    category: str
    session_id: str | None
    similarity: float


@dataclass(frozen=True, slots=True)
class Proposal:
    """A relation the rules want between a fresh memory and an earlier one."""

    fresh: str
    earlier: str
    type: str
    similarity: float
    why: str


def _best(options: Sequence[Earlier], floor: float = MIN_SIMILARITY) -> Earlier | None:
    chosen = [e for e in options if e.similarity >= floor]
    return max(chosen, key=lambda e: (e.similarity, e.created, e.id)) if chosen else None


def propose(new: Fresh, earlier: Sequence[Earlier]) -> list[Proposal]:
    """The typed relations of ``new`` to ``earlier`` memories (made before it), one per
    earlier memory, most specific type first. ``same_topic`` is not proposed here."""
    before = [e for e in earlier if (e.created, e.id) < (new.created, new.id)]
    found = markers(new.text)
    chosen: dict[str, Proposal] = {}

    def add(target: Earlier | None, kind: str, why: str) -> None:
        if target is None:
            return
        held = chosen.get(target.id)
        if held is None or PRECEDENCE.index(kind) < PRECEDENCE.index(held.type):
            chosen[target.id] = Proposal(new.id, target.id, kind, target.similarity, why)

    if new.category == _DECISION:
        if CONTRADICTS in found:
            decisions = [e for e in before if e.category == _DECISION]
            add(_best(decisions, TOPIC_SIMILARITY), CONTRADICTS, "overturns an earlier decision")
        else:
            recent = [
                e
                for e in before
                if e.category != _DECISION and new.created - e.created <= DERIVE_WINDOW_DAYS * _DAY
            ]
            add(_best(recent, TOPIC_SIMILARITY), DERIVED_FROM, "a decision out of a discussion")
    if REFERENCES in found:
        add(_best(before), REFERENCES, "refers to the past")
    if new.session_id:
        same = [e for e in before if e.session_id == new.session_id]
        if same:
            last = max(same, key=lambda e: (e.created, e.id))
            if new.created - last.created <= CONTINUE_GAP_SECONDS:
                add(last, CONTINUES, "the next turn of the session")
    if CONTINUES in found:
        window = [e for e in before if new.created - e.created <= CONTINUE_WINDOW_DAYS * _DAY]
        add(_best(window, TOPIC_SIMILARITY), CONTINUES, "says it continues")
    return sorted(chosen.values(), key=lambda p: (PRECEDENCE.index(p.type), -p.similarity))


def choose(
    proposals: Sequence[Proposal],
    existing: Sequence[tuple[str, str]],
    nodes: Mapping[str, Node],
    *,
    max_relations: int,
    proximity: float,
) -> list[tuple[Link, Proposal]]:
    """The proposals that become links: one per pair (never a pair already linked either
    way), most specific type first, no memory past ``max_relations`` links, each directed
    by the spec's rule (:func:`kioku.core.lifecycle.links.direction`). Memories not in
    ``nodes`` (no longer active) are skipped."""
    degree: dict[str, int] = defaultdict(int)
    linked: set[frozenset[str]] = set()
    for source, target in existing:
        degree[source] += 1
        degree[target] += 1
        linked.add(frozenset((source, target)))
    ordered = sorted(
        proposals,
        key=lambda p: (PRECEDENCE.index(p.type), -p.similarity, p.fresh, p.earlier),
    )
    out: list[tuple[Link, Proposal]] = []
    for p in ordered:
        pair = frozenset((p.fresh, p.earlier))
        if p.fresh not in nodes or p.earlier not in nodes or pair in linked:
            continue
        if degree[p.fresh] >= max_relations or degree[p.earlier] >= max_relations:
            continue
        source, target = direction(p.fresh, p.earlier, nodes, proximity)
        linked.add(pair)
        degree[p.fresh] += 1
        degree[p.earlier] += 1
        out.append((Link(source, target, p.type), p))
    return out
