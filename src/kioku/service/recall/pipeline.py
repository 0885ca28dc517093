"""Recall (spec 000, 参照方法 and memory_retrieval.py): find, rank and hand over memories.

1. Candidates from lexical search (BM25 over kioku's own terms, the query's question words left
   out) and vector search (the configured embedder's vectors only), in the owner's scope,
   archive included when ``archive.enable_archive_recall`` is on. With conversation context
   on, the best lexical matches and the turns around them, and the best vector matches, are
   scored again with their neighbours' terms lent (:mod:`.neighbour_terms`); so are the
   memories made on a day the query names ("on 9 November, 2022", :func:`.periods.named_days`),
   which thereby become candidates when they or their neighbours hold a query term.
2. Match = ``vector_weight × cosine + lexical_weight × lexical``, where lexical is BM25 / best
   BM25, and with conversation context on, ``scoring.COVERAGE_SHARE`` of it is the memory's
   own coverage of the query (its neighbours' words lent to BM25, its own words count
   again; see :func:`~.scoring.match_of`). The best matches lend
   ``context_weight × match`` to the candidates recorded just before and after them in their
   session (half as much to the second on each side): relevance = match + that, at most 1.
   Relevance is then shaded by recency (more when the query refers back in time), by the
   periods the query names (a memory made in "June" or 「2023年5月」 counts more, one made on
   a named day more still, see :mod:`.periods`), by the session's category and, with
   conversation context on, by the memory's own coverage of the query (``1 +
   scoring.COVERAGE_FACTOR × coverage``: a memory holding the query's words itself comes
   before one about as relevant through its neighbours).
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
   top-k fallback among them. In a negative mood the mood shift (``mood.shift``) lets
   resonance favour positive memories instead; the mood limiter (``mood.limiter``) gives
   priority 0 to the negative high-intensity memories past their share of the owner's last
   memories primed or recalled (:mod:`.balance`). Neither qualifies a memory, and neither
   touches deliberate search.
5. Related memories to ``relation_traversal_depth``, as companions of the chosen ones;
   recalled memories marked, archived ones asked to be revived; the session's current
   emotion becomes the top memory's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from kioku.config.schema import Config
from kioku.core.model import Valence
from kioku.core.presets import effective_weights
from kioku.core.recall import (
    Candidate,
    ContextSeed,
    choose,
    context_bonus,
    conversation_neighbours,
    mentions_the_past,
)
from kioku.ports.embedder import Embedder, TextEmbedder, text_values
from kioku.ports.store import MemoryFilter, ScoringFields, Store
from kioku.service.recall.balance import rank_down
from kioku.service.recall.mood import SessionMood, session_key
from kioku.service.recall.neighbour_terms import widen
from kioku.service.recall.periods import (
    DAY_GRACE,
    Period,
    in_period,
    named_days,
    named_periods,
)
from kioku.service.recall.results import Recalled, RecallResult, memories_block
from kioku.service.recall.scoring import coverage_of, match_of, score_of, to_recalled
from kioku.service.recall.search_ahead import Ahead
from kioku.service.recall.traces import log_recall, record_traces
from kioku.service.scope import scoped
from kioku.service.vectors import check_vector_model

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["MAX_QUERY_CHARS", "query_vector", "recall", "run_recall"]

#: Only the start of a very long query is used for matching.
MAX_QUERY_CHARS = 4000
#: Conversation context: how many of the best matches lend relevance to the candidates around
#: them, to how many on each side, and how far apart in time two turns may still be neighbours.
_CONTEXT_SEEDS = 5
_CONTEXT_TURNS = 2
_CONTEXT_SPAN = timedelta(hours=1)
#: Most memories read as candidates for each day the query names.
_DAY_MEMORIES = 200


def recall(
    engine: Engine,
    query: str,
    *,
    top_k: int | None = None,
    session_id: str | None = None,
    mark: bool = True,
    at: datetime | None = None,
    mood_shift: bool | None = None,
) -> RecallResult:
    """Recall for ``query`` in ``engine``'s scope (see :meth:`Kioku.recall`)."""
    if session_id:
        from kioku.core.validate import check_provenance_id

        check_provenance_id("session_id", session_id)
    now = at or engine.clock.now()
    result = run_recall(
        store=engine.store,
        embedder=engine.embedder,
        config=engine.config,
        scope=scoped(engine),
        query=query,
        now=now,
        top_k=top_k,
        session_id=session_id,
        mark=False,
        mood_shift=mood_shift,
        first=lambda: check_vector_model(engine),
    )
    if mark and result.items:
        # The traces and the event that names what was recalled, in one transaction; usage
        # records, so its commit need not wait for the disk (see Store.atomic).
        with engine.store.atomic(durable=False):
            chosen = [item for item in result.items if item.via != "relation"]
            record_traces(engine.store, chosen, session_id, now)
            log_recall(engine, result, session_id)
    return result


def _context(
    fields: dict[str, ScoringFields], match: dict[str, float], weight: float
) -> dict[str, float]:
    """Relevance lent by the best matches to the candidates recorded just before and after them
    in the same session (see :func:`~kioku.core.recall.context_bonus`)."""
    if weight <= 0:
        return {}
    ranked = sorted((item for item in match.items() if item[1] > 0), key=lambda i: (-i[1], i[0]))
    seeds = [key for key, _ in ranked[:_CONTEXT_SEEDS]]
    times = [(key, f.created) for key, f in fields.items()]
    # The nearest candidates in time, of any session: only these are looked at for their
    # session (twice the turns wanted, so a few turns of another session in between do no harm).
    near = {
        key
        for seed in seeds
        for side in conversation_neighbours(
            fields[seed].created, times, 2 * _CONTEXT_TURNS, _CONTEXT_SPAN
        )
        for key in side
    }
    found = []
    for seed in seeds:
        session = fields[seed].session_id
        if session is None:
            continue
        same = [(key, fields[key].created) for key in near if fields[key].session_id == session]
        before, after = conversation_neighbours(
            fields[seed].created, same, _CONTEXT_TURNS, _CONTEXT_SPAN
        )
        found.append(ContextSeed(match[seed], before, after))
    return context_bonus(found, weight)


def _made_on(store: Store, flt: MemoryFilter, days: Sequence[Period]) -> list[str]:
    """The memories ``flt`` selects made on the named ``days`` (or within
    :data:`~.periods.DAY_GRACE` after), at most :data:`_DAY_MEMORIES` of each, newest first."""
    found: list[str] = []
    for day in days:
        window = replace(
            flt,
            created_after=day.start,
            created_before=day.end + DAY_GRACE,
            limit=_DAY_MEMORIES,
            offset=0,
        )
        found += [f.id for f in store.activity_fields(window)]
    return list(dict.fromkeys(found))


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
        pointing = store.referencing_many([m.id for m in frontier])
        wanted += [s for m in frontier for s in pointing.get(m.id, ()) if s not in seen]
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
        return list(text_values(embedder, text))
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
    mood_shift: bool | None = None,
    first: Callable[[], None] | None = None,
) -> RecallResult:
    """Recall for ``query`` (see the module docstring). ``mark=False`` leaves no trace.
    ``mood_shift`` turns the mood shift on or off for this recall (None: ``mood.shift``).
    ``first`` runs at the start of the recall's first snapshot, so its reads share it."""
    text = query.strip()[:MAX_QUERY_CHARS]
    floor = config.retrieval.min_relevance
    if not text:
        return RecallResult(query, (), "", floor)
    weights = effective_weights(config.retrieval)
    archived = None if config.archive.enable_archive_recall else False
    # Recall is the episodic path; knowledge, procedures and profiles are primed by their own
    # channels (kioku.service.priming) and found on purpose by deliberate search.
    flt = MemoryFilter(
        user_id=scope.user_id, agent_id=scope.agent_id, archived=archived, kind="episode"
    )

    from kioku.adapters.text.lexical import entity_terms, query_terms

    def embedded() -> list[float] | None:
        """The query's vector; None when vector search plays no part."""
        if embedder is None or weights.vector <= 0:
            return None
        vector = query_vector(embedder, text)
        return vector if any(vector) else None

    def vector_matches(vector: list[float] | None) -> list[tuple[str, float]]:
        if vector is None or embedder is None:
            return []
        return store.vector_search(embedder.model_id, vector, flt, weights.candidates)

    # Each phase reads one snapshot of the store (one transaction, not one per read). On a
    # store that allows it, the query is embedded and the vector search runs on its own thread
    # beside the lexical search (.search_ahead); else both happen between the two snapshots.
    ahead: Ahead | None = None
    # Asked outside any snapshot of this recall's; [store] parallel_search can turn it off.
    parallel = config.store.parallel_search and store.parallel_search
    try:
        with store.reading():
            if first is not None:
                first()
            if config.retrieval.require_known_names:
                names = entity_terms(text)
                if names and not store.known_terms(names, flt, limit=1):
                    return RecallResult(query, (), "", floor, tuple(names))
            ahead = Ahead(lambda: vector_matches(embedded())) if parallel else None
            terms = query_terms(text)
            lexical: dict[str, float] = {}
            if weights.lexical > 0 and terms:
                lexical = dict(store.search_lexical(terms, flt, weights.candidates))
    except BaseException:
        if ahead is not None:
            ahead.wait()
        raise
    vector = None
    if ahead is not None:
        # Collected before the next snapshot is opened: no connection is held meanwhile.
        similar = dict(ahead.result())
    else:
        vector = embedded()  # outside the snapshot: an embedder may be a remote service
    with store.reading():
        if ahead is None:
            similar = dict(vector_matches(vector))
        found = {f.id: f for f in store.scoring_fields(sorted(lexical.keys() | similar.keys()))}
        held: dict[str, frozenset[str]] = {}
        days = named_days(text, now)
        if lexical and weights.context > 0:
            on_days = _made_on(store, flt, days)
            lexical, held = widen(
                store, flt, terms, lexical, similar, weights.candidates, found, on_days
            )
            joined = sorted(lexical.keys() - found.keys())
            found.update((f.id, f) for f in store.scoring_fields(joined))
        best_lexical = max(lexical.values(), default=0.0)
        if best_lexical > 0:
            lexical = {key: value / best_lexical for key, value in lexical.items()}
        else:
            lexical = dict.fromkeys(lexical, 0.0)
        fields = {
            key: found[key]
            for key in sorted(lexical.keys() | similar.keys())
            if key in found and not math.isnan(found[key].retention_score)
        }
        covered = coverage_of(store, terms, fields, held)
        # With the neighbours' terms lent to the lexical match, a memory's own coverage of
        # the query counts in it too (see scoring.COVERAGE_SHARE).
        own = covered if weights.context > 0 else {}
        match = {
            key: match_of(similar.get(key, 0.0), lexical.get(key, 0.0), weights, own.get(key))
            for key in fields
        }
        qualified = {key: match[key] for key in fields if covered.get(key, 0.0) >= floor}
        context = _context(fields, qualified, weights.context)
        mood = (
            SessionMood.from_json(store.get_state(session_key(session_id))) if session_id else None
        )
        past = mentions_the_past(text)
        periods = named_periods(text, now)
        shift_on = config.mood.shift if mood_shift is None else mood_shift
        shifted = shift_on and mood is not None and mood.emotion.valence is Valence.NEGATIVE
        scored = {
            key: score_of(
                f,
                similar.get(key, 0.0),
                lexical.get(key, 0.0),
                context.get(key, 0.0),
                weights=weights,
                config=config,
                mood=mood,
                past=past,
                now=now,
                shift=config.mood.shift_strength if shift_on else None,
                dated=in_period(f.created, periods),
                day=in_period(f.created, days, DAY_GRACE),
                coverage=own.get(key),
            )
            | {"coverage": covered.get(key, 0.0)}
            for key, f in fields.items()
        }
        limited = _limit(store, scope, config, fields, scored, context)
        chosen_ids = choose(
            [
                Candidate(
                    key,
                    parts["coverage"],
                    0.0 if key in limited else parts["final"],
                    context.get(key, 0.0) > 0,
                )
                for key, parts in scored.items()
            ],
            top_k or config.retrieval.top_k,
            config.retrieval.relevance_threshold,
            floor,
        )
        chosen = [
            to_recalled(memory, scored[memory.id], floor) for memory in store.get_many(chosen_ids)
        ]
        items = chosen + _related(
            store,
            chosen,
            config.relations.relation_traversal_depth,
            {i.memory.id for i in chosen} | set(limited),
        )
    if mark and chosen:
        record_traces(store, chosen, session_id, now)
    block = memories_block(items, config.retrieval.budget_chars)
    return RecallResult(
        query, tuple(items), block, floor, limited=limited, mood_shifted=bool(shifted)
    )


def _limit(
    store: Store,
    scope: MemoryFilter,
    config: Config,
    fields: dict[str, ScoringFields],
    scored: dict[str, dict[str, float]],
    context: dict[str, float],
) -> tuple[str, ...]:
    """The qualified candidates the mood limiter ranks down (``mood.limiter``): given
    priority 0, they fall below the selection, and no relation brings them back. The one
    the prompt singles out is spared (see :func:`~.balance.rank_down`)."""
    if not config.mood.limiter:
        return ()
    floor = config.retrieval.min_relevance
    eligible = sorted(
        (k for k, p in scored.items() if p["coverage"] >= floor or context.get(k, 0.0) > 0),
        key=lambda k: (-scored[k]["final"], k),
    )
    coverage = {key: scored[key]["coverage"] for key in eligible}
    return rank_down(store, scope, config.mood, fields, eligible, coverage)
