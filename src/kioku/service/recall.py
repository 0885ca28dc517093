"""Recall (spec 000, 参照方法 and memory_retrieval.py): find, rank and hand over memories.

1. Candidates from lexical search (BM25 over kioku's own terms, the query's question words left
   out) and vector search (the configured embedder's vectors only), in the owner's scope,
   archive included when ``archive.enable_archive_recall`` is on.
2. Match = ``vector_weight × cosine + lexical_weight × BM25 / best BM25``. The best matches lend
   ``context_weight × match`` to the candidates recorded just before and after them in their
   session (half as much to the second on each side): relevance = match + that, at most 1.
   Relevance is then shaded by recency (more when the query refers back in time) and the
   session's category.
3. Qualification by the query alone. When the prompt names people, places or things (see
   :func:`~kioku.adapters.text.lexical.entity_terms`) and no memory of the owner mentions
   any of them, the prompt is about something the store has never heard of: nothing
   qualifies (``retrieval.require_known_names``). Otherwise a memory qualifies when its
   coverage of the query (the IDF-weighted share of the query's terms it holds, see
   :func:`~kioku.core.recall.coverage`) is at least ``retrieval.min_relevance``. Only
   qualified memories lend conversation context, and a memory lent context by one comes
   along as its companion. Nothing else (mood, recency, retention, recall count) qualifies
   a memory: an off-topic query recalls nothing.
4. The spec's priority: ``retention × relevance × (1 + w·recall_count) + α·resonance·retention``
   with the session's current emotion orders the qualified memories; the threshold with its
   top-k fallback among them.
5. Related memories to ``relation_traversal_depth``, as companions of the chosen ones;
   recalled memories marked, archived ones asked to be revived; the session's current
   emotion becomes the top memory's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from kioku.config.schema import Config
from kioku.core.inject import Injected, format_memories
from kioku.core.model import Memory, Valence
from kioku.core.presets import RecallWeights, effective_weights
from kioku.core.recall import (
    Candidate,
    ContextSeed,
    EmotionState,
    Priority,
    choose,
    context_bonus,
    conversation_neighbours,
    coverage,
    mentions_the_past,
    priority,
    resonance,
    term_weight,
)
from kioku.ports.embedder import Embedder, TextEmbedder
from kioku.ports.store import MemoryFilter, MemoryPatch, ScoringFields, Store
from kioku.records import Record

__all__ = [
    "MAX_QUERY_CHARS",
    "RecallResult",
    "Recalled",
    "SessionMood",
    "run_recall",
    "session_key",
]

#: Only the start of a very long query is used for matching.
MAX_QUERY_CHARS = 4000
_SECONDS_PER_DAY = 86_400.0
#: Conversation context: how many of the best matches lend relevance to the candidates around
#: them, to how many on each side, and how far apart in time two turns may still be neighbours.
_CONTEXT_SEEDS = 5
_CONTEXT_TURNS = 2
_CONTEXT_SPAN = timedelta(hours=1)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Recalled(Record):
    """One recalled memory and every component of its score.

    ``relevance`` is the query match (``similarity`` and ``lexical`` weighted) plus ``context``,
    at most 1; ``relevance × recency × category_factor = adjusted_relevance``;
    ``retention × adjusted_relevance × recall_weight = base``; ``base + resonance_term = final``.
    ``coverage`` is how much of the query the memory matches (what qualifies it, against the
    floor ``retrieval.min_relevance``); a memory below the floor comes only as a companion:
    ``via`` "context" (a turn next to a qualified one) or "relation".
    """

    memory: Memory
    archived: bool
    similarity: float
    lexical: float
    relevance: float
    recency: float
    category_factor: float
    adjusted_relevance: float
    retention: float
    recall_weight: float
    base: float
    resonance: float
    resonance_term: float
    final: float
    via: str | None = None
    #: Relevance lent by strong matches recorded just before or after this memory in its
    #: session (a part of ``relevance``).
    context: float = 0.0
    #: The share of the query the memory matches, in [0, 1]: what qualifies it.
    coverage: float = 0.0


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RecallResult(Record):
    """What a recall returns: the memories chosen and the block to inject."""

    query: str
    items: tuple[Recalled, ...]
    block: str
    #: The relevance floor the recall qualified memories with (``retrieval.min_relevance``).
    floor: float = 0.0
    #: The names the prompt mentions when no memory knows any of them: why nothing was
    #: recalled (``retrieval.require_known_names``); empty otherwise.
    unknown_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class SessionMood(Record):
    """What a session carries between turns: the last memory's emotion and category."""

    emotion: EmotionState
    category: str

    def to_json(self) -> str:
        return json.dumps(
            {
                "valence": self.emotion.valence.value,
                "arousal": self.emotion.arousal,
                "tags": list(self.emotion.tags),
                "category": self.category,
            },
            ensure_ascii=False,
        )

    @staticmethod
    def from_json(text: str | None) -> SessionMood | None:
        if not text:
            return None
        try:
            data = json.loads(text)
            emotion = EmotionState(
                Valence(data["valence"]), int(data["arousal"]), tuple(data["tags"])
            )
            return SessionMood(emotion, str(data["category"]))
        except (ValueError, KeyError, TypeError):
            return None

    @staticmethod
    def of(memory: Memory) -> SessionMood:
        return SessionMood(
            EmotionState(memory.emotional_valence, memory.emotional_arousal, memory.emotional_tags),
            memory.category,
        )


def session_key(session_id: str) -> str:
    return f"session:{session_id}:mood"


def _score(
    fields: ScoringFields,
    similarity: float,
    lexical: float,
    context: float,
    *,
    weights: RecallWeights,
    config: Config,
    mood: SessionMood | None,
    past: bool,
    now: datetime,
) -> dict[str, float]:
    """Every component of one candidate's priority (the numeric fields of Recalled)."""
    relevance = min(1.0, _match(similarity, lexical, weights) + context)
    age_days = max(0.0, (now - fields.created).total_seconds() / _SECONDS_PER_DAY)
    fresh = 0.5 ** (age_days / weights.recency_half_life_days)
    recency = 1.0 + (weights.recency + (weights.temporal_recency if past else 0.0)) * fresh
    category_factor = 1.0 + (
        weights.category if mood is not None and mood.category == fields.category else 0.0
    )
    adjusted = relevance * recency * category_factor
    score = max(0.0, fields.retention_score)
    retention = 100.0 * (score / 100.0) ** weights.retention_exponent if score > 0 else 0.0
    res = resonance(
        mood.emotion if mood else None,
        EmotionState(fields.valence, fields.arousal, fields.tags),
        config.resonance,
    )
    parts: Priority = priority(
        adjusted,
        retention,
        fields.recall_count,
        res,
        recall_count_weight=config.recall.recall_count_weight,
        alpha=config.resonance.priority_weight_alpha,
    )
    return {
        "similarity": similarity,
        "lexical": lexical,
        "context": context,
        "relevance": relevance,
        "recency": recency,
        "category_factor": category_factor,
        "adjusted_relevance": adjusted,
        "retention": retention,
        "recall_weight": parts.recall_weight,
        "base": parts.base,
        "resonance": res,
        "resonance_term": parts.resonance_term,
        "final": parts.final,
    }


def _coverage(store: Store, terms: Sequence[str], keys: Iterable[str]) -> dict[str, float]:
    """Each candidate's coverage of the query's terms (what qualifies it)."""
    wanted = sorted(keys)
    if not terms or not wanted:
        return {}
    memories, documents = store.term_documents(terms)
    weights = {term: term_weight(count, memories) for term, count in documents.items()}
    held = store.indexed_terms(wanted)
    return {key: coverage(weights, held.get(key, frozenset())) for key in wanted}


def _match(similarity: float, lexical: float, weights: RecallWeights) -> float:
    """How well a memory matches the query, in [0, 1]: cosine and normalised BM25, weighted."""
    total = weights.vector + weights.lexical
    if total <= 0:
        return 0.0
    return (weights.vector * max(0.0, similarity) + weights.lexical * lexical) / total


def _context(
    store: Store, fields: dict[str, ScoringFields], match: dict[str, float], weight: float
) -> tuple[dict[str, float], dict[str, Memory]]:
    """Relevance lent by the best matches to the candidates recorded just before and after them
    in the same session (see :func:`~kioku.core.recall.context_bonus`), and the memories read
    to find them."""
    if weight <= 0:
        return {}, {}
    ranked = sorted((item for item in match.items() if item[1] > 0), key=lambda i: (-i[1], i[0]))
    seeds = [key for key, _ in ranked[:_CONTEXT_SEEDS]]
    times = [(key, f.created) for key, f in fields.items()]
    # The nearest candidates in time, of any session: only these are read for their session
    # (twice the turns wanted, so a few turns of another session in between do no harm).
    near = {
        key
        for seed in seeds
        for side in conversation_neighbours(
            fields[seed].created, times, 2 * _CONTEXT_TURNS, _CONTEXT_SPAN
        )
        for key in side
    }
    read = {memory.id: memory for memory in store.get_many(sorted(near.union(seeds)))}
    found = []
    for seed in seeds:
        session = read[seed].session_id if seed in read else None
        if session is None:
            continue
        same = [
            (key, fields[key].created)
            for key in near
            if key in read and read[key].session_id == session
        ]
        before, after = conversation_neighbours(
            fields[seed].created, same, _CONTEXT_TURNS, _CONTEXT_SPAN
        )
        found.append(ContextSeed(match[seed], before, after))
    return context_bonus(found, weight), read


def _recalled(memory: Memory, s: dict[str, float], floor: float) -> Recalled:
    companion = s["coverage"] < floor
    return Recalled(
        memory=memory,
        archived=memory.archived,
        similarity=s["similarity"],
        lexical=s["lexical"],
        relevance=s["relevance"],
        recency=s["recency"],
        category_factor=s["category_factor"],
        adjusted_relevance=s["adjusted_relevance"],
        retention=s["retention"],
        recall_weight=s["recall_weight"],
        base=s["base"],
        resonance=s["resonance"],
        resonance_term=s["resonance_term"],
        final=s["final"],
        via="context" if companion else None,
        context=s["context"],
        coverage=s["coverage"],
    )


def _related(
    store: Store, chosen: Sequence[Recalled], depth: int, seen: set[str]
) -> list[Recalled]:
    """Memories linked from the chosen ones, breadth first, to ``depth`` (関連記憶の想起), and
    those linking to them, found with the reverse index (逆方向の参照: links point from the
    higher score to the lower, so a weak memory's way back to a strong one is this)."""
    out: list[Recalled] = []
    frontier = [item.memory for item in chosen]
    for _ in range(depth):
        wanted = [r.id for m in frontier for r in m.relations if r.id not in seen]
        wanted += [s for m in frontier for s in store.referencing(m.id) if s not in seen]
        wanted = list(dict.fromkeys(wanted))
        if not wanted:
            break
        found = [m for m in store.get_many(wanted) if not m.archived]
        for memory in found:
            seen.add(memory.id)
            out.append(Recalled(memory, False, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, via="relation"))
        frontier = found
    return out


def query_vector(embedder: Embedder, text: str) -> list[float]:
    """The vector of one query text. An embedder that embeds one text on its own (the offline
    one does it without numpy) is asked that way, so a hook's fresh process need not load
    numpy; its numbers are the same as ``embed([text])[0]``."""
    if isinstance(embedder, TextEmbedder):
        return list(embedder.embed_one(text))
    vector: list[float] = embedder.embed([text])[0].tolist()
    return vector


def run_recall(
    *,
    store: Store,
    embedder: Embedder | None,
    config: Config,
    scope: MemoryFilter,
    query: str,
    now: datetime,
    top_k: int | None = None,
    session_id: str | None = None,
    mark: bool = True,
) -> RecallResult:
    """Recall for ``query`` (see the module docstring). ``mark=False`` leaves no trace."""
    text = query.strip()[:MAX_QUERY_CHARS]
    floor = config.retrieval.min_relevance
    if not text:
        return RecallResult(query, (), "", floor)
    weights = effective_weights(config.retrieval)
    archived = None if config.archive.enable_archive_recall else False
    flt = MemoryFilter(user_id=scope.user_id, agent_id=scope.agent_id, archived=archived)

    from kioku.adapters.text.lexical import entity_terms, query_terms

    if config.retrieval.require_known_names:
        names = entity_terms(text)
        if names and not store.known_terms(names, flt):
            return RecallResult(query, (), "", floor, tuple(names))
    terms = query_terms(text)
    lexical: dict[str, float] = {}
    if weights.lexical > 0 and terms:
        lexical = dict(store.search_lexical(terms, flt, weights.candidates))
    similar: dict[str, float] = {}
    if embedder is not None and weights.vector > 0:
        vector = query_vector(embedder, text)
        if any(vector):
            similar = dict(store.vector_search(embedder.model_id, vector, flt, weights.candidates))
    best_lexical = max(lexical.values(), default=0.0)
    if best_lexical > 0:
        lexical = {key: value / best_lexical for key, value in lexical.items()}
    else:
        lexical = dict.fromkeys(lexical, 0.0)
    fields = {
        f.id: f
        for f in store.scoring_fields(sorted(lexical.keys() | similar.keys()))
        if not math.isnan(f.retention_score)
    }
    covered = _coverage(store, terms, fields)
    match = {key: _match(similar.get(key, 0.0), lexical.get(key, 0.0), weights) for key in fields}
    qualified = {key: match[key] for key in fields if covered.get(key, 0.0) >= floor}
    context, read = _context(store, fields, qualified, weights.context)
    mood = SessionMood.from_json(store.get_state(session_key(session_id))) if session_id else None
    past = mentions_the_past(text)
    scored = {
        key: _score(
            f,
            similar.get(key, 0.0),
            lexical.get(key, 0.0),
            context.get(key, 0.0),
            weights=weights,
            config=config,
            mood=mood,
            past=past,
            now=now,
        )
        | {"coverage": covered.get(key, 0.0)}
        for key, f in fields.items()
    }
    chosen_ids = choose(
        [
            Candidate(key, parts["coverage"], parts["final"], context.get(key, 0.0) > 0)
            for key, parts in scored.items()
        ],
        top_k or config.retrieval.top_k,
        config.retrieval.relevance_threshold,
        floor,
    )
    unread = {
        memory.id: memory for memory in store.get_many([i for i in chosen_ids if i not in read])
    }
    chosen = [
        _recalled(memory, scored[memory.id], floor)
        for memory in (read.get(key) or unread.get(key) for key in chosen_ids)
        if memory is not None
    ]
    items = chosen + _related(
        store, chosen, config.relations.relation_traversal_depth, {i.memory.id for i in chosen}
    )
    if mark and chosen:
        _leave_traces(store, chosen, session_id, now)
    block = memories_block(items, config.retrieval.budget_chars)
    return RecallResult(query, tuple(items), block, floor)


def memories_block(items: Sequence[Recalled], budget_chars: int) -> str:
    """The ``<memories>`` block of recalled memories within ``budget_chars`` (注入形式)."""
    return format_memories(
        [
            Injected(
                i.memory.created,
                i.memory.current_level,
                i.archived,
                i.memory.trigger,
                i.memory.content,
            )
            for i in items
        ],
        budget_chars,
    )


def leave_traces(store: Store, result: RecallResult, session_id: str | None, now: datetime) -> None:
    """What ``mark=True`` does, for a recall made with ``mark=False``: its chosen memories
    (not those that came along as related) are marked and archived ones asked back."""
    chosen = [i for i in result.items if i.via != "relation"]
    if chosen:
        _leave_traces(store, chosen, session_id, now)


def _leave_traces(
    store: Store, chosen: Sequence[Recalled], session_id: str | None, now: datetime
) -> None:
    """Mark what was recalled, ask for archived ones back, carry the mood (one transaction)."""
    with store.atomic():
        store.mark_recalled([i.memory.id for i in chosen if not i.archived])
        for item in chosen:
            if item.archived and not item.memory.revival_requested:
                store.update(
                    item.memory.id,
                    MemoryPatch(revival_requested=True, revival_requested_at=now),
                )
        if session_id:
            store.set_state(session_key(session_id), SessionMood.of(chosen[0].memory).to_json())
