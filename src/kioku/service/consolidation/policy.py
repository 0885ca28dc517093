"""Spec 004's lifecycle policies: importance, compression to a summary, the capacity manager.

Importance (0.5 at first, + 0.1 per access up to 1.0, × 0.95 per week unused) is computed, never
stored, so it needs no job to keep it true. Every policy compresses, in the weekly
integration, full-text episodes whose importance has fallen below 0.3 (spec 001's 週次
episodes/ 圧縮); the ``importance`` policy does so daily too (spec 004's daily lifecycle check),
and ``capacity`` also compresses the least important 10 % of the limit once an owner holds 90 %
of it. Compression is spec 000's Level 1 → 2 summary, with the original kept for deliberate
search when ``compression.keep_originals`` is on.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from kioku.core.consolidation.importance import COMPRESS_BELOW, importance, plan_capacity
from kioku.core.lifecycle.log import Event
from kioku.core.lifecycle.metrics import text_bytes
from kioku.core.model import Embedding, Kind, Level, Memory
from kioku.ports.store import MemoryFilter, MemoryPatch, Original
from kioku.service.consolidation.common import Action, Run

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["episode_importance", "plan_capacity_compression", "plan_low_importance"]


def _full_episodes(engine: Engine) -> list[Memory]:
    flt = MemoryFilter(
        user_id=engine.user_id,
        agent_id=engine.agent_id,
        kind=Kind.EPISODE.value,
        archived=False,
        levels=(Level.FULL,),
    )
    return list(engine.store.iter(flt))


def episode_importance(memory: Memory, moment: datetime) -> float:
    return importance(memory.created, memory.last_access, memory.recall_count, moment)


def plan_low_importance(engine: Engine, moment: datetime) -> list[Action]:
    """Full-text, unprotected episodes whose importance is below 0.3, compressed."""
    chosen = []
    for memory in _full_episodes(engine):
        if memory.protected:
            continue
        score = episode_importance(memory, moment)
        if score < COMPRESS_BELOW:
            chosen.append((memory, f"importance {score:.2f} < {COMPRESS_BELOW} (spec 004)"))
    return [_compress(m, why, moment) for m, why in chosen]


def plan_capacity_compression(engine: Engine, moment: datetime) -> list[Action]:
    """Spec 004 CapacityManager: at 90 % of the limit, the least important 10 % compressed."""
    limit = engine.config.lifecycle.capacity
    count = engine.store.count(
        MemoryFilter(
            user_id=engine.user_id,
            agent_id=engine.agent_id,
            kind=Kind.EPISODE.value,
            archived=False,
        )
    )
    full = {m.id: m for m in _full_episodes(engine)}
    items = [
        (mid, episode_importance(m, moment), not m.protected) for mid, m in sorted(full.items())
    ]
    plan = plan_capacity(items, count, limit)
    if not plan.triggered:
        return []
    return [_compress(full[mid], plan.reason, moment) for mid in plan.to_compress]


def _compress(memory: Memory, why: str, moment: datetime) -> Action:
    def run(r: Run) -> None:
        engine = r.engine
        fresh = engine.store.get(memory.id)
        if fresh is None or fresh.current_level != Level.FULL or fresh.archived:
            return
        out = engine.analyzer.summarize(fresh.trigger, fresh.content)
        vector = engine.embedder.embed([f"{out.trigger}\n{out.content}"])[0]
        embedding = Embedding(engine.embedder.model_id, tuple(float(x) for x in vector.tolist()))
        if engine.config.compression.keep_originals:
            engine.store.put_originals([Original(fresh.id, fresh.trigger, fresh.content)], r.moment)
        engine.store.update(
            fresh.id,
            MemoryPatch(
                trigger=out.trigger,
                content=out.content,
                current_level=Level.SUMMARY,
                embedding=embedding,
            ),
        )
        r.note(
            Event.COMPRESS,
            fresh.id,
            reason=why,
            method="summary",
            bytes_before=text_bytes(fresh.trigger, fresh.content),
            bytes_after=text_bytes(out.trigger, out.content),
        )
        r.log[-1] = replace(r.log[-1], level_before=Level.FULL, level_after=Level.SUMMARY)

    return Action("compress", why, (memory.id,), "", run)
