"""LLM知識抽出 and knowledge/ 書き込み (spec 001 日次固定化): candidates, validated, written.

With an LLM, candidates come from it (given the resolved items to take into account); offline
they are sentences lifted from the episodes (:mod:`kioku.core.consolidation.extract`). A
candidate that says what a current item already says adds its episodes to that item instead
of becoming a second copy; every other candidate passes the validation cascade or is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from kioku.core.consolidation.model import KnowledgeCandidate, Source, Terms
from kioku.core.kinds import KnowledgeDetails
from kioku.core.lifecycle.log import Event
from kioku.core.model import Kind, Memory
from kioku.ports.store import MemoryPatch
from kioku.service.consolidation.common import (
    Action,
    Run,
    chunked,
    knowledge_details,
    normal_text,
    stable_id,
    with_sources,
)
from kioku.service.consolidation.validate import validate
from kioku.service.kinds.records import base_record

if TYPE_CHECKING:
    from kioku.ports.consolidation import Consolidator, Nli
    from kioku.service.engine import Engine

__all__ = ["KnowledgePlan", "new_knowledge", "plan_knowledge", "store_new"]


class KnowledgePlan:
    """The knowledge step's actions, and the new items it would store (by id)."""

    def __init__(self) -> None:
        self.actions: list[Action] = []
        self.new: dict[str, Memory] = {}


def new_knowledge(
    engine: Engine,
    title: str,
    text: str,
    sources: Sequence[str],
    confidence: float,
    at: datetime,
) -> Memory:
    """A knowledge item consolidation makes (``auto_consolidated``), valid from ``at``."""
    memory = base_record(engine, Kind.KNOWLEDGE, title or text[:60], text, at)
    details = KnowledgeDetails(
        confidence=confidence,
        source_episodes=tuple(dict.fromkeys(sources)),
        auto_consolidated=True,
        valid_from=at,
    )
    return stable_id(replace(memory, details=details), *details.source_episodes)


def store_new(plan: KnowledgePlan, memory_id: str) -> Action:
    """The action that stores ``plan.new[memory_id]`` as it stands when the run applies
    (a conflict found later may have changed its details)."""

    def run(r: Run) -> None:
        memory = plan.new[memory_id]
        r.add(memory)
        r.note(Event.CONSOLIDATE, memory_id, kind="knowledge", sources=len(_sources(memory)))

    memory = plan.new[memory_id]
    details = knowledge_details(memory)
    return Action(
        "add_knowledge",
        f"from {len(details.source_episodes)} episode(s), confidence {details.confidence:.1f}",
        (memory_id,),
        memory.content,
        run,
    )


def _sources(memory: Memory) -> tuple[str, ...]:
    return knowledge_details(memory).source_episodes


def plan_knowledge(
    engine: Engine,
    episodes: Sequence[Source],
    current: Sequence[Memory],
    *,
    llm: Consolidator | None,
    nli: Nli | None,
    terms: Terms,
    resolved: Sequence[str],
) -> KnowledgePlan:
    """Extract, de-duplicate and validate the day's knowledge candidates."""
    from kioku.core.consolidation.extract import extract_knowledge
    from kioku.core.consolidation.similarity import TermIndex

    plan = KnowledgePlan()
    if not episodes:
        return plan
    cfg = engine.config.consolidation
    if llm is not None:
        candidates: list[KnowledgeCandidate] = [
            c for part in chunked(episodes) for c in llm.extract_knowledge(part, resolved)
        ]
    else:
        candidates = extract_knowledge(
            episodes, terms, max_per_source=cfg.max_knowledge_per_episode
        )
    by_id = {e.id: e for e in episodes}
    known = {m.id: m for m in current}
    exact = {normal_text(m.content): m for m in current}
    index = TermIndex(terms)
    for m in current:
        index.add(m.id, m.content)
    for candidate in candidates:
        text = " ".join(candidate.text.split())
        sources = [by_id[s] for s in candidate.sources if s in by_id]
        if not text or not sources:
            continue
        same = exact.get(normal_text(text))
        if same is None:
            alike = index.alike(text, cfg.duplicate_similarity)
            same = known[alike[0][1]] if alike else None
        if same is not None:
            plan.actions.append(_add_sources(same, [s.id for s in sources], text))
            continue
        verdict = validate(text, [s.text for s in sources], nli=nli, llm=llm, terms=terms)
        if not verdict.accepted or verdict.confidence is None:
            plan.actions.append(
                Action("reject_knowledge", f"{verdict.stage}: {verdict.reason}", (), text)
            )
            continue
        at = max(s.at for s in sources)
        memory = new_knowledge(
            engine, candidate.title, text, [s.id for s in sources], verdict.confidence, at
        )
        plan.new[memory.id] = memory
        known[memory.id] = memory
        exact[normal_text(memory.content)] = memory
        index.add(memory.id, memory.content)
        plan.actions.append(store_new(plan, memory.id))
        plan.actions[-1].why += f"; validated ({verdict.stage}: {verdict.reason})"
    return plan


def _add_sources(memory: Memory, sources: Sequence[str], said: str) -> Action:
    """The action that adds the episodes that said ``memory`` again to its sources."""
    new = [s for s in sources if s not in knowledge_details(memory).source_episodes]

    def run(r: Run) -> None:
        fresh = r.engine.store.get(memory.id)
        if fresh is None:  # one of today's new items: already has them
            return
        details = with_sources(knowledge_details(fresh), new)
        r.engine.store.update(memory.id, MemoryPatch(details=details))
        r.note(Event.REINFORCE_SOURCES, memory.id, sources=len(new))

    return Action(
        "add_sources" if new else "already_known",
        f"said again by {len(new)} episode(s)" if new else "already known from these episodes",
        (memory.id,),
        said,
        run if new else None,
    )
