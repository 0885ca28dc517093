"""Steps 3, 3.5 and 4 of one batch day: the texts of compressed memories (summary, then
keywords), their new vectors, and the writes and log entries of every memory moving down."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.lifecycle.metrics import text_bytes
from kioku.core.lifecycle.plan import DayPlan, Snapshot, Transition
from kioku.core.model import Embedding, Level, Memory
from kioku.ports.analyzer import Compressed
from kioku.ports.store import MemoryPatch, Original

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["apply_transitions", "compress_steps", "text_key"]


def text_key(memory: Memory, target: int) -> str:
    digest = hashlib.blake2b(
        f"{memory.trigger}\x00{memory.content}".encode(), digest_size=12
    ).hexdigest()
    return f"{memory.id}:{digest}:{target}"


def compress_steps(
    engine: Engine, memory: Memory, from_level: int, to_level: int
) -> list[Compressed]:
    """The texts of each step from ``from_level`` down to ``min(to_level, 3)``."""
    steps: list[Compressed] = []
    trigger, content = memory.trigger, memory.content
    for level in range(from_level, min(to_level, Level.TRACE)):
        if level == Level.FULL:
            out = engine.analyzer.summarize(trigger, content)
        else:
            out = engine.analyzer.extract_keywords(trigger, content)
        steps.append(out)
        trigger, content = out.trigger, out.content
    return steps


def apply_transitions(
    engine: Engine,
    plan: DayPlan,
    snap: Snapshot,
    moment: datetime,
    prefetched: dict[str, list[Compressed]],
    log: list[LogEntry],
    entry: Callable[..., LogEntry],
) -> set[str]:
    """Rewrite, re-embed and archive the memories that move down; returns those re-embedded."""
    if not plan.transitions:
        return set()
    store = engine.store
    pop = snap.population
    memories = {m.id: m for m in store.get_many([t.memory_id for t in plan.transitions])}
    rewritten: dict[str, tuple[Transition, Memory, list[Compressed]]] = {}
    for t in plan.transitions:
        memory = memories.get(t.memory_id)
        if memory is None:
            continue
        steps: list[Compressed] = []
        if t.from_level < min(t.to_level, Level.TRACE):
            steps = prefetched.get(text_key(memory, t.to_level)) or compress_steps(
                engine, memory, t.from_level, t.to_level
            )
        rewritten[t.memory_id] = (t, memory, steps)
    # Step 3.5: new vectors for every rewritten text, in one call.
    embed_ids = [mid for mid, (_, _, steps) in rewritten.items() if steps]
    vectors: dict[str, Embedding] = {}
    if embed_ids:
        embedder = engine.embedder
        texts = [
            f"{rewritten[mid][2][-1].trigger}\n{rewritten[mid][2][-1].content}" for mid in embed_ids
        ]
        for mid, vector in zip(embed_ids, embedder.embed(texts), strict=True):
            vectors[mid] = Embedding(embedder.model_id, tuple(float(x) for x in vector.tolist()))
    if engine.config.compression.keep_originals:
        # Spec 003 §8.1 policy B: the words compression takes out stay findable on purpose.
        store.put_originals(
            [
                Original(mid, memory.trigger, memory.content)
                for mid, (t, memory, steps) in rewritten.items()
                if steps and t.from_level == Level.FULL
            ],
            moment,
        )
    for mid, (t, memory, steps) in rewritten.items():
        scope = int(pop.scope[t.index])
        patch = MemoryPatch(current_level=t.to_level)
        if steps:
            patch = replace(
                patch, trigger=steps[-1].trigger, content=steps[-1].content, embedding=vectors[mid]
            )
        if t.to_level == Level.ARCHIVED:
            patch = replace(patch, archived_at=moment)
        store.update(mid, patch)
        before = memory
        level = t.from_level
        for step in steps:
            log.append(
                entry(
                    Event.COMPRESS,
                    mid,
                    scope,
                    level_before=level,
                    level_after=level + 1,
                    score_before=float(pop.score[t.index]),
                    score_after=t.score,
                    details={
                        "reason": t.reason,
                        "method": "summary" if level == Level.FULL else "keywords",
                        "chars_before": len(before.trigger) + len(before.content),
                        "chars_after": len(step.trigger) + len(step.content),
                        # UTF-8 sizes of trigger + content: spec 004's compression ratio.
                        "bytes_before": text_bytes(before.trigger, before.content),
                        "bytes_after": text_bytes(step.trigger, step.content),
                    },
                )
            )
            before = replace(before, trigger=step.trigger, content=step.content)
            level += 1
        if t.to_level == Level.ARCHIVED:
            log.append(
                entry(
                    Event.ARCHIVE,
                    mid,
                    scope,
                    level_before=level,
                    level_after=Level.ARCHIVED,
                    score_before=float(pop.score[t.index]),
                    score_after=t.score,
                    details={"reason": t.reason},
                )
            )
    return set(embed_ids)
