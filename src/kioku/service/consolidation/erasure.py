"""What consolidation made from a memory that is being erased.

A knowledge item or procedure lifted from an erased episode would keep its words, so it goes
too, unless another of its source episodes still says the same thing word for word (the
episode is then only taken off its sources). Notes of other items that name it are removed,
and so are the resolutions reported from it and the mid-term entries of its session.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kioku.core.kinds import KnowledgeDetails, ProcedureDetails
from kioku.core.model import Kind, Memory
from kioku.ports.store import MemoryFilter, MemoryPatch
from kioku.service.consolidation.common import normal_text

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["derived_to_erase"]


def _still_said(engine: Engine, item: Memory, others: list[str]) -> bool:
    """Whether a remaining source episode says the item's text word for word."""
    if not others:
        return False
    said = normal_text(item.content)
    kept = engine.store.originals(others)
    for source in engine.store.get_many(others):
        original = kept.get(source.id)
        texts = [source.trigger, source.content]
        if original is not None:
            texts += [original.trigger, original.content]
        if any(said in normal_text(t) for t in texts):
            return True
    return False


def derived_to_erase(engine: Engine, memory: Memory) -> list[str]:
    """Inside the caller's transaction: the ids of the items to erase with ``memory``; the
    other traces of it are cleaned up here (sources, notes, resolutions, mid-term)."""
    store = engine.store
    store.forget_traces(memory.id, memory.user_id, memory.agent_id, memory.session_id)
    if memory.kind is not Kind.EPISODE:
        _drop_notes(engine, memory)
        return []
    flt = MemoryFilter(
        user_id=memory.user_id,
        agent_id=memory.agent_id,
        kinds=(Kind.KNOWLEDGE.value, Kind.PROCEDURE.value),
    )
    erase: list[str] = []
    for item in store.iter(flt):
        details = item.details
        if not isinstance(details, KnowledgeDetails | ProcedureDetails):
            continue
        if memory.id not in details.source_episodes:
            continue
        others = [s for s in details.source_episodes if s != memory.id]
        if _still_said(engine, item, others):
            store.update(
                item.id, MemoryPatch(details=replace(details, source_episodes=tuple(others)))
            )
        else:
            erase.append(item.id)
            _drop_notes(engine, item)
    return erase


def _drop_notes(engine: Engine, gone: Memory) -> None:
    """Take the notes that name ``gone`` off the items that carry them (a coexist note
    quotes the condition the other item states)."""
    flt = MemoryFilter(user_id=gone.user_id, agent_id=gone.agent_id, kind=Kind.KNOWLEDGE.value)
    for item in engine.store.iter(flt):
        details = item.details
        if isinstance(details, KnowledgeDetails) and any(gone.id in n for n in details.notes):
            notes = tuple(n for n in details.notes if gone.id not in n)
            engine.store.update(item.id, MemoryPatch(details=replace(details, notes=notes)))
