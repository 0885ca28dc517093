"""日次固定化 (spec 001 日次固定化パイプライン): one batch day's episodes consolidated.

In the spec's order: accesses counted, the day's episodes collected, procedural content told
from semantic, procedures distilled, knowledge extracted and validated and written,
low-activation marks set (synaptic downscaling), existing items reconsolidated by episodes that
contradict them, and contradictions among new and updated knowledge resolved. Spec 004's
policies, when chosen, compress the least important episodes at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from kioku.core.consolidation.model import ProcedureCandidate, Source, Terms
from kioku.core.model import Kind, Memory
from kioku.ports.store import MemoryFilter, Order
from kioku.service.consolidation.common import (
    LLM_SKIPPED,
    Action,
    Run,
    active_items,
    chunked,
    consolidator_of,
    source_of,
    terms_of,
)
from kioku.service.consolidation.conflicts import find_conflicts, resolve
from kioku.service.consolidation.forgetting import plan_downscaling
from kioku.service.consolidation.knowledge import plan_knowledge
from kioku.service.consolidation.procedures import plan_procedures
from kioku.service.consolidation.reconsolidate import plan_reconsolidation
from kioku.service.consolidation.resolutions import plan_resolution_updates, resolved_between

if TYPE_CHECKING:
    from kioku.ports.consolidation import Nli
    from kioku.service.engine import Engine

__all__ = ["day_episodes", "episode_sources", "plan_daily"]


def day_episodes(engine: Engine, start: datetime | None, end: datetime) -> list[Memory]:
    """The episodes made in ``(start, end]`` (session summaries left out: they repeat their
    turns), oldest first."""
    from kioku.service.encoding.session_end import is_session_summary

    flt = MemoryFilter(
        user_id=engine.user_id,
        agent_id=engine.agent_id,
        kind=Kind.EPISODE.value,
        created_after=start,
        created_before=end,
        order=Order.CREATED_ASC,
    )
    return [
        m
        for m in engine.store.iter(flt)
        if not is_session_summary(m) and (start is None or m.created > start) and m.created <= end
    ]


def episode_sources(engine: Engine, memories: Sequence[Memory]) -> list[Source]:
    """The episodes as consolidation reads them: in their original words when the nightly
    batch has already compressed them (the original is kept for deliberate search)."""
    kept = engine.store.originals([m.id for m in memories if m.current_level > 1])
    out: list[Source] = []
    for memory in memories:
        original = kept.get(memory.id)
        if original is not None:
            memory = replace(memory, trigger=original.trigger, content=original.content)
        out.append(source_of(memory))
    return out


def _touch(engine: Engine) -> Action:
    def run(r: Run) -> None:
        r.engine.store.touch_accessed(
            [
                f.id
                for f in r.engine.store.activity_fields(
                    MemoryFilter(
                        user_id=engine.user_id,
                        agent_id=engine.agent_id,
                        kinds=(Kind.KNOWLEDGE.value, Kind.PROCEDURE.value),
                        recalled_since_last_batch=True,
                    )
                )
            ],
            r.moment,
        )

    return Action("count_accesses", "knowledge and procedures used since the last run", run=run)


def _procedure_candidates(
    engine: Engine, procedural: Sequence[Source], terms: Terms
) -> list[ProcedureCandidate]:
    llm = consolidator_of(engine)
    if llm is not None:
        return [c for part in chunked(procedural) for c in llm.distil_procedures(part)]
    from kioku.core.consolidation.extract import extract_procedures

    return extract_procedures(procedural, terms)


def plan_daily(
    engine: Engine,
    start: datetime | None,
    end: datetime,
    moment: datetime,
    *,
    nli: Nli | None,
) -> list[Action]:
    """Every action of the day whose episodes were made in ``(start, end]``."""
    from kioku.core.consolidation.classify import is_procedural

    terms = terms_of(engine)
    llm = consolidator_of(engine)
    actions: list[Action] = [_touch(engine)]
    episodes = episode_sources(engine, day_episodes(engine, start, end))
    procedural = [e for e in episodes if is_procedural(e.text)]
    actions.append(
        Action(
            "collect",
            f"{len(episodes)} episode(s) of the day, {len(procedural)} procedural",
            tuple(e.id for e in episodes[:50]),
        )
    )
    if procedural:
        actions += plan_procedures(
            engine,
            _procedure_candidates(engine, procedural, terms),
            active_items(engine, Kind.PROCEDURE),
            terms=terms,
            episodes=procedural,
        )
    knowledge = active_items(engine, Kind.KNOWLEDGE)
    resolutions = resolved_between(engine, start, end)
    plan = plan_knowledge(
        engine,
        episodes,
        knowledge,
        llm=llm,
        nli=nli,
        terms=terms,
        resolved=[r.item for r in resolutions],
    )
    actions += plan.actions
    actions += plan_downscaling(engine, moment)
    if llm is not None:
        actions += plan_reconsolidation(engine, episodes, llm=llm, nli=nli, terms=terms)
    elif episodes:
        actions.append(
            Action(
                "skipped",
                "reconsolidation by rewriting an item: "
                + LLM_SKIPPED
                + "; contradicted knowledge is superseded by the newer fact instead",
            )
        )
    if llm is None and resolutions:
        actions += plan_resolution_updates(engine, resolutions, knowledge, plan, terms=terms)
    new = list(plan.new.values())
    if new:
        taken = {mid for a in actions if a.action == "supersede" for mid in a.ids}
        older = [m for m in knowledge if m.id not in taken]
        fresh = [m for m in new if m.id not in taken]
        for conflict in find_conflicts(older, fresh, llm=llm, nli=nli, terms=terms):
            actions.append(resolve(conflict, moment))
    return actions
