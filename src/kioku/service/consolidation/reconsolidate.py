"""予測誤差ベースの再固定化 (spec 001): an item a newer episode contradicts is rewritten.

For each of the day's episodes, the current knowledge items and procedures it resembles most
are checked for a contradiction: by the NLI model (contradiction ≥ 0.7) when one is configured,
else by the offline claim rules (same subject and relation, another value). Only a pair found
in contradiction is given to the LLM, which rewrites the item or says no update is needed.
The old text is saved as a version and ``version`` goes up; a procedure also starts its record
of outcomes again (confidence 0.5, no successes, no failures).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Final

from kioku.core.consolidation.model import Source, Terms
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails
from kioku.core.lifecycle.log import Event
from kioku.core.model import Kind, Memory
from kioku.ports.store import MemoryPatch
from kioku.service.consolidation.common import Action, Run, active_items
from kioku.service.consolidation.procedures import RECONSOLIDATED_CONFIDENCE

if TYPE_CHECKING:
    from kioku.ports.consolidation import Consolidator, Nli
    from kioku.service.engine import Engine

__all__ = ["plan_reconsolidation"]

#: Spec 001: NLI contradiction ≥ 0.7 between an episode and an item.
NLI_CONTRADICTION: Final = 0.7
_RELATED: Final = 0.3
_PER_EPISODE: Final = 2


def _contradicts(episode: Source, item: Memory, nli: Nli | None) -> bool:
    if nli is not None:
        return nli.classify(episode.text, item.content).contradiction >= NLI_CONTRADICTION
    from kioku.core.consolidation.claims import claims_of, judge_claims

    item_claims = claims_of(item.content)
    for new in claims_of(episode.text):
        for old in item_claims:
            judged = judge_claims(old, new)
            if judged is not None and judged.strategy == "supersede":
                return True
    return False


def plan_reconsolidation(
    engine: Engine,
    episodes: Sequence[Source],
    *,
    llm: Consolidator,
    nli: Nli | None,
    terms: Terms,
) -> list[Action]:
    """Items the day's episodes contradict, rewritten by the LLM."""
    from kioku.core.consolidation.similarity import TermIndex

    items = {
        m.id: m
        for m in (*active_items(engine, Kind.KNOWLEDGE), *active_items(engine, Kind.PROCEDURE))
    }
    index = TermIndex(terms)
    for m in items.values():
        index.add(m.id, m.content)
    actions: list[Action] = []
    done: set[str] = set()
    for episode in episodes:
        related = [
            items[key]
            for _, key in index.alike(episode.text, _RELATED)
            if key not in done and items[key].created < episode.at
        ]
        for item in related[:_PER_EPISODE]:
            if not _contradicts(episode, item, nli):
                continue
            text = llm.reconsolidate(item.content, episode.text)
            if not text or text.strip() == item.content.strip():
                continue
            done.add(item.id)
            actions.append(_rewrite(item, text.strip(), episode.id, llm.name))
    return actions


def _rewrite(item: Memory, text: str, episode_id: str, by: str) -> Action:
    def run(r: Run) -> None:
        store = r.engine.store
        fresh = store.get(item.id)
        if fresh is None:
            return
        store.save_version(fresh, r.moment)
        details = fresh.details
        if isinstance(details, ProcedureDetails):
            steps = tuple(
                line.split(". ", 1)[1]
                if ". " in line and line.split(". ", 1)[0].isdigit()
                else line
                for line in text.splitlines()[1:]
                if line.strip()
            )
            new: KnowledgeDetails | ProcedureDetails = replace(
                details,
                steps=steps or details.steps,
                version=details.version + 1,
                success_count=0,
                failure_count=0,
                confidence=RECONSOLIDATED_CONFIDENCE,
            )
        elif isinstance(details, KnowledgeDetails):
            new = replace(
                details,
                version=details.version + 1,
                source_episodes=tuple(dict.fromkeys((*details.source_episodes, episode_id))),
            )
        else:
            return
        store.update(item.id, MemoryPatch(content=text, details=new))
        r.note(Event.RECONSOLIDATE, item.id, by=by, episode=episode_id, version=new.version)

    return Action(
        "reconsolidate",
        f"episode {episode_id} contradicts it; rewritten by {by}, old version kept",
        (item.id, episode_id),
        text,
        run,
    )
