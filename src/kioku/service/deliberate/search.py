"""``search_memory`` and ``read_memory``: deliberate recall reaches everything.

Priming (:mod:`kioku.service.priming`) shows what matters now and fades with forgetting;
a search on purpose does not. It ranks every kind asked for, archive included by default,
by how well each matches the query and nothing else: no retention, no mood, no recency.
A compressed episode is found by the words compression took out, through its kept original
(spec 003 §8.1 policy B, see ``compression.keep_originals``), and by its current vector.

Match = ``vector_weight × cosine + lexical_weight × BM25 / best BM25`` with the weights of
``[retrieval]``; the lexical part of a compressed memory is its original text's.
Reading a memory (:func:`read_memory`) counts as recalling it: it is marked, and an archived
one is asked to come back, as spec 000's recall does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.core.kinds import KnowledgeDetails, ProcedureDetails
from kioku.core.model import Kind, Memory
from kioku.core.presets import effective_weights
from kioku.core.validate import check_kind
from kioku.errors import MemoryNotFoundError, ValidationError
from kioku.ports.store import MemoryFilter, MemoryPatch, Original
from kioku.records import Record
from kioku.service.deliberate.midterm import MidTermHit, search_midterm
from kioku.service.recall.pipeline import MAX_QUERY_CHARS, query_vector
from kioku.service.recall.scoring import match_of
from kioku.service.vectors import check_vector_model

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["Found", "Read", "SearchResult", "read_memory", "search_memory"]

MAX_TOP_K: Final = 1000


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Found(Record):
    """One search result and why it matched."""

    memory: Memory
    score: float
    similarity: float
    lexical: float
    #: Where the query's words were found: "text" (as the memory reads now), "original"
    #: (the text before compression), both or neither (a vector match only).
    matched_in: tuple[str, ...]

    @property
    def superseded(self) -> bool:
        details = self.memory.details
        return isinstance(details, KnowledgeDetails) and details.superseded


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class SearchResult(Record):
    query: str
    kinds: tuple[str, ...]
    include_archive: bool
    items: tuple[Found, ...]
    #: Turns of the mid-term tier that match (episodes searched): not in long-term memory.
    midterm: tuple[MidTermHit, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Read(Record):
    """A memory read on purpose, with its original text when compression kept one."""

    memory: Memory
    original: Original | None


def _kinds(kinds: Sequence[str] | None) -> tuple[str, ...]:
    if kinds is None or len(kinds) == 0:
        return tuple(k.value for k in (Kind.EPISODE, Kind.KNOWLEDGE, Kind.PROCEDURE, Kind.PROFILE))
    return tuple(dict.fromkeys(check_kind(k).value for k in kinds))


def _normalised(found: Sequence[tuple[str, float]]) -> dict[str, float]:
    best = max((score for _, score in found), default=0.0)
    if best <= 0:
        return dict.fromkeys((key for key, _ in found), 0.0)
    return {key: max(0.0, score) / best for key, score in found}


def search_memory(
    engine: Engine,
    query: str,
    *,
    kinds: Sequence[str] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    include_archive: bool = True,
    top_k: int = 10,
) -> SearchResult:
    """The ``top_k`` best matches of ``query`` among the caller's memories of ``kinds``
    (default: every kind) made from ``since`` (inclusive) to ``until`` (exclusive)."""
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise ValidationError("top_k", top_k, f"a whole number from 1 to {MAX_TOP_K}")
    for name, moment in (("since", since), ("until", until)):
        if moment is not None and (moment.tzinfo is None or moment.utcoffset() is None):
            raise ValidationError(name, moment, "a time with its timezone")
    wanted = _kinds(kinds)
    text = query.strip()[:MAX_QUERY_CHARS] if isinstance(query, str) else ""
    if not text:
        raise ValidationError("query", query, "words to search for")
    flt = MemoryFilter(
        user_id=engine.user_id,
        agent_id=engine.agent_id,
        kinds=wanted,
        archived=None if include_archive else False,
        created_after=since,
        created_before=until,
    )
    check_vector_model(engine)
    weights = effective_weights(engine.config.retrieval)
    depth = max(weights.candidates, top_k * 4)
    store = engine.store

    from kioku.adapters.text.lexical import query_terms

    terms = query_terms(text)
    current: dict[str, float] = {}
    original: dict[str, float] = {}
    if terms:
        current = _normalised(store.search_lexical(terms, flt, depth))
        original = _normalised(store.search_originals(terms, flt, depth))
    similar: dict[str, float] = {}
    embedder = engine.embedder
    if weights.vector > 0:
        vector = query_vector(embedder, text)
        if any(vector):
            similar = dict(store.vector_search(embedder.model_id, vector, flt, depth))
    ids = current.keys() | original.keys() | similar.keys()
    # A compressed memory is judged by its original words: its summary or keywords are
    # derived from them, and short keywords sharing one query word would outrank it.
    kept = set(store.originals(sorted(ids))) if original or current else set()
    lexical_of = {
        key: original.get(key, 0.0) if key in kept else current.get(key, 0.0) for key in ids
    }
    scored: list[tuple[float, str]] = []
    for key in ids:
        lexical = lexical_of[key]
        score = match_of(similar.get(key, 0.0), lexical, weights)
        if score > 0:
            scored.append((score, key))
    scored.sort(key=lambda item: (-item[0], item[1]))
    # Every search applied the kinds and time bounds; _within is a last check.
    chosen = [key for _, key in scored[: top_k * 3]]
    memories = {m.id: m for m in store.get_many(chosen)}
    items: list[Found] = []
    covered: set[str] = set()  # episodes a result already stands for
    for key in chosen:
        memory = memories.get(key)
        if memory is None or not _within(memory, since, until):
            continue
        if _said_already(memory, covered):
            continue
        lexical = lexical_of[key]
        where = tuple(
            name for name, hits in (("text", current), ("original", original)) if key in hits
        )
        items.append(
            Found(
                memory=memory,
                score=match_of(similar.get(key, 0.0), lexical, weights),
                similarity=similar.get(key, 0.0),
                lexical=lexical,
                matched_in=where,
            )
        )
        if len(items) == top_k:
            break
    _log_search(engine, text, items)
    extra: tuple[MidTermHit, ...] = ()
    if Kind.EPISODE.value in wanted and until is None:
        extra = search_midterm(engine, terms, engine.clock.now(), top_k)
    return SearchResult(text, wanted, include_archive, tuple(items), extra)


def _said_already(memory: Memory, covered: set[str]) -> bool:
    """Whether a better-ranked result already says this: an episode a consolidated item was
    lifted from, or a consolidated item whose episodes are all shown. It marks what ``memory``
    stands for as covered when it is kept."""
    details = memory.details
    made = (isinstance(details, KnowledgeDetails) and details.auto_consolidated) or (
        isinstance(details, ProcedureDetails) and details.auto_distilled
    )
    if made and isinstance(details, KnowledgeDetails | ProcedureDetails):
        sources = set(details.source_episodes)
        if sources and sources <= covered:
            return True
        covered.update(sources)
        return False
    if memory.kind is Kind.EPISODE:
        if memory.id in covered:
            return True
        covered.add(memory.id)
    return False


def _log_search(engine: Engine, query: str, items: Sequence[Found]) -> None:
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import log_events, make_event

    event = make_event(
        engine,
        EventType.MEMORY_RECALL,
        query,
        tool="search_memory",
        memory_ids=[i.memory.id for i in items],
        summary=f"{len(items)} found",
    )
    log_events(engine, [event])


def _within(memory: Memory, since: datetime | None, until: datetime | None) -> bool:
    if since is not None and memory.created < since:
        return False
    return until is None or memory.created < until


def read_memory(engine: Engine, memory_id: str, *, mark: bool = True) -> Read:
    """One memory of the caller's, with its kept original; reading it recalls it."""
    store = engine.store
    memory = store.get(memory_id) if isinstance(memory_id, str) else None
    if memory is None or (memory.user_id, memory.agent_id) != (engine.user_id, engine.agent_id):
        raise MemoryNotFoundError(str(memory_id))
    original = store.originals([memory.id]).get(memory.id)
    revive = memory.archived and memory.kind is Kind.EPISODE and not memory.revival_requested
    if mark and (revive or not memory.archived):
        # A usage record: the commit need not wait for the disk (see Store.atomic).
        with store.atomic(durable=False):
            if revive:
                store.update(
                    memory.id,
                    MemoryPatch(revival_requested=True, revival_requested_at=engine.clock.now()),
                )
            else:
                store.mark_recalled([memory.id], at=engine.clock.now())
    return Read(memory, original)
