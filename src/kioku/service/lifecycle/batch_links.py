"""Step 7 of the batch (自動関連付け), scope by scope: new memories get spec 000's typed
relations (kioku.core.lifecycle.relate), then new and re-embedded memories get ``same_topic``
links to similar ones (kioku.core.lifecycle.links). The rules are pure; this module reads what
they need from the store and writes the links they choose, inside the day's transaction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from kioku.core.blas import threads_for
from kioku.core.lifecycle.links import Link, LinkChanges, Node, auto_links
from kioku.core.lifecycle.plan import DayPlan, Snapshot
from kioku.core.lifecycle.relate import Earlier, Fresh, Proposal, choose, propose
from kioku.core.model import Memory
from kioku.ports.store import MemoryFilter, Order

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = [
    "Linked",
    "active_nodes",
    "link_day",
    "scope_lookup",
    "snapshot_links",
    "surviving_links",
]

#: The most similar earlier memories the typed rules look at, per new memory.
CANDIDATES: Final = 8
#: How many new memories share one product with the pool (a pool of 10,000 × 512 is 20 MB).
_BLOCK: Final = 512


@dataclass(frozen=True, slots=True)
class Linked:
    """A link the batch added, why, and the similarity behind it (NaN when none)."""

    link: Link
    why: str
    similarity: float


def link_day(
    engine: Engine,
    snap: Snapshot,
    scope_of: dict[str, int],
    moment: datetime,
    new: set[str],
    changed: set[str],
    existing: list[tuple[str, str]],
    active: dict[str, Node],
) -> list[Linked]:
    """Typed relations for ``new`` memories, then ``same_topic`` for ``new | changed``."""
    fresh = (new | changed) & set(active)
    if not fresh:
        return []
    cfg = engine.config.relations
    store = engine.store
    model = engine.embedder.model_id
    added: list[Linked] = []
    by_scope: dict[int, list[str]] = {}
    for memory_id in sorted(fresh):
        by_scope.setdefault(scope_of.get(memory_id, -1), []).append(memory_id)
    for code, members in sorted(by_scope.items()):
        if code < 0:
            continue
        user, agent = snap.scopes[code]
        ids, matrix = store.link_vectors(model, user, agent, None)
        row = {memory_id: n for n, memory_id in enumerate(ids)}
        keep = [i for i, memory_id in enumerate(ids) if memory_id in active]
        typed = _typed(
            engine, user, agent, [m for m in members if m in new], ids, matrix, row, keep, active
        )
        chosen = choose(
            typed,
            existing,
            active,
            max_relations=cfg.max_relations_per_memory,
            proximity=cfg.score_proximity_threshold,
        )
        store.add_links([link for link, _ in chosen], moment)
        existing.extend((link.source, link.target) for link, _ in chosen)
        added.extend(Linked(link, p.why, p.similarity) for link, p in chosen)
        similar = [m for m in members if m in row]
        if not similar or not keep:
            continue
        links = auto_links(
            similar,
            matrix[[row[m] for m in similar]],
            [ids[i] for i in keep],
            matrix[keep],
            existing,
            active,
            threshold=cfg.auto_link_similarity_threshold,
            max_relations=cfg.max_relations_per_memory,
            proximity=cfg.score_proximity_threshold,
        )
        store.add_links([link for link, _ in links], moment)
        existing.extend((link.source, link.target) for link, _ in links)
        added.extend(Linked(link, "similar", similarity) for link, similarity in links)
    return added


def _typed(
    engine: Engine,
    user: str,
    agent: str,
    new: Sequence[str],
    ids: Sequence[str],
    matrix: npt.NDArray[np.float32],
    row: dict[str, int],
    keep: Sequence[int],
    active: dict[str, Node],
) -> list[Proposal]:
    """What the typed rules propose for each new memory: its most similar earlier memories
    and the turn before it in its session are the candidates."""
    if not new:
        return []
    store = engine.store
    memories = {m.id: m for m in store.get_many(list(new))}
    pool = np.asarray(keep, dtype=np.int64)
    vectors = matrix[pool]
    pool_created = np.asarray([active[ids[i]].created for i in keep], dtype=np.float64)
    wanted: dict[str, dict[str, float]] = {}
    present = [m for m in new if m in memories]
    # The pool's similarity to a block of new memories in one product: one matrix-vector
    # product per memory read the whole pool from memory once each (about 7 s of a 36,500
    # memory batch).
    for start in range(0, len(present), _BLOCK):
        block = present[start : start + _BLOCK]
        rows = [row[m] for m in block if m in row]
        with threads_for(vectors.shape[0] * vectors.shape[1] * len(rows)):
            products = vectors @ matrix[rows].T if rows and pool.size else None
        column = 0
        for memory_id in block:
            sims: dict[str, float] = {}
            if memory_id in row:
                if products is not None:
                    scores = products[:, column]
                    eligible = (pool_created <= active[memory_id].created) & (
                        pool != row[memory_id]
                    )
                    for j in _best(scores, eligible, CANDIDATES):
                        sims[ids[int(pool[j])]] = float(scores[j])
                column += 1
            before = _session_predecessor(engine, user, agent, memories[memory_id])
            if before is not None and before in active:
                sims.setdefault(before, _similarity(matrix, row, memory_id, before))
            wanted[memory_id] = sims
    others = {m.id: m for m in store.get_many(sorted({o for s in wanted.values() for o in s}))}
    proposals: list[Proposal] = []
    for memory_id, sims in wanted.items():
        memory = memories[memory_id]
        earlier = [
            Earlier(o, others[o].created.timestamp(), others[o].category, others[o].session_id, sim)
            for o, sim in sims.items()
            if o in others
        ]
        proposals.extend(propose(_fresh(memory), earlier))
    return proposals


def _best(
    scores: npt.NDArray[np.float32], eligible: npt.NDArray[np.bool_], limit: int
) -> list[int]:
    """The positions of the ``limit`` best ``eligible`` scores, best first, equal scores in
    position order (what a stable sort of every score, filtered, would give first)."""
    positions = np.flatnonzero(eligible)
    if positions.size > limit:
        chosen = scores[positions]
        kth = chosen[np.argpartition(-chosen, limit - 1)[limit - 1]]
        positions = positions[chosen >= kth]  # ties with the last one stay in
    order = sorted(positions.tolist(), key=lambda j: (-float(scores[j]), j))
    return order[:limit]


def _fresh(memory: Memory) -> Fresh:
    return Fresh(
        memory.id,
        memory.created.timestamp(),
        memory.category,
        memory.session_id,
        f"{memory.trigger}\n{memory.content}",
    )


def _similarity(matrix: npt.NDArray[np.float32], row: dict[str, int], a: str, b: str) -> float:
    if a not in row or b not in row:
        return 0.0
    return float(matrix[row[a]] @ matrix[row[b]])


def _session_predecessor(engine: Engine, user: str, agent: str, memory: Memory) -> str | None:
    """The active memory of the same session made just before ``memory``."""
    if not memory.session_id:
        return None
    found = engine.store.list(
        MemoryFilter(
            user_id=user,
            agent_id=agent,
            session_id=memory.session_id,
            archived=False,
            created_before=memory.created,
            limit=1,
            order=Order.CREATED_DESC,
        )
    )
    return found[0].id if found else None


def scope_lookup(snap: Snapshot) -> dict[str, int]:
    pop, arc = snap.population, snap.archived
    lookup = dict(zip(pop.ids.tolist(), pop.scope.tolist(), strict=True))
    lookup.update(zip(arc.ids.tolist(), arc.scope.tolist(), strict=True))
    return lookup


def surviving_links(snap: Snapshot, review: LinkChanges) -> list[tuple[str, str]]:
    gone = {(link.source, link.target) for link, _ in review.removed}
    pairs = [(s, t) for s, t, _ in snap.links if (s, t) not in gone]
    pairs.extend((link.source, link.target) for link, _, _ in review.added)
    return pairs


def snapshot_links(snap: Snapshot) -> list[Link]:
    return [Link(s, t, k) for s, t, k in snap.links]


def active_nodes(snap: Snapshot, plan: DayPlan) -> dict[str, Node]:
    pop = snap.population
    leaving = {t.memory_id for t in plan.archived_today}
    nodes = {
        str(pop.ids[i]): Node(float(plan.score[i]), float(pop.created[i]))
        for i in range(len(pop))
        if str(pop.ids[i]) not in leaving
    }
    arc = snap.archived
    for r in plan.revivals:
        nodes[r.memory_id] = Node(r.score, float(arc.created[r.index]))
    return nodes
