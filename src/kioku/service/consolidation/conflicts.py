"""知識矛盾検出・解決 (spec 001): contradictions found and resolved three ways.

Daily, the day's new knowledge is compared with the current items it resembles; weekly, every
current item with every other. Offline, claims (subject, relation, value) decide: the same
subject and relation with another value is superseded by the newer, a value that refines the
other is merged, and values that hold under different conditions coexist. With an LLM, a pair
of alike items is judged by it, after an NLI model (when configured) has let pairs that entail
each other (entailment ≥ 0.7) pass without a call.

* **supersede**: the older item gets ``superseded_by`` and ``valid_until``, the newer
  ``supersedes`` and the next ``version``; the older stays as history and is never primed.
* **merge**: a new item with the merged text and ``merged_from`` both; both are archived.
* **coexist**: both are annotated with the other and the condition under which each holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.core.consolidation.model import Conflict, Source, Terms
from kioku.core.lifecycle.log import Event
from kioku.core.model import Memory
from kioku.ports.store import MemoryPatch
from kioku.service.consolidation.common import (
    Action,
    Run,
    knowledge_details,
    source_of,
    stable_id,
)
from kioku.service.consolidation.knowledge import new_knowledge
from kioku.service.remember.storing import insert

if TYPE_CHECKING:
    from kioku.ports.consolidation import Consolidator, Nli

__all__ = ["find_conflicts", "resolve"]

#: Spec 001 矛盾検出フロー: NLI entailment ≥ 0.7 → no contradiction, the LLM is not asked.
NLI_AGREES: Final = 0.7
#: Only pairs at least this alike are worth a judgement (both share what they are about).
_ALIKE: Final = 0.2
#: At most this many alike items are judged against each new one.
_PAIRS_PER_ITEM: Final = 3


def find_conflicts(
    older: Sequence[Memory],
    newer: Sequence[Memory],
    *,
    llm: Consolidator | None,
    nli: Nli | None,
    terms: Terms,
) -> list[Conflict]:
    """Conflicts between ``newer`` items and ``older`` ones (and among ``newer``), each item
    in at most one."""
    old_sources = [source_of(m) for m in older]
    new_sources = sorted((source_of(m) for m in newer), key=lambda s: (s.at, s.id))
    if llm is None:
        from kioku.core.consolidation.claims import detect_conflicts

        found = detect_conflicts(old_sources, new_sources)
    else:
        by_id = {m.id: m for m in (*older, *newer)}
        settled = {
            frozenset((m.id, note.split()[2].rstrip(":")))
            for m in by_id.values()
            for note in knowledge_details(m).notes
            if note.startswith("coexists with ")
        }
        found = _judged(old_sources, new_sources, llm=llm, nli=nli, terms=terms, settled=settled)
    by_id = {m.id: m for m in (*older, *newer)}
    used: set[str] = set()
    chosen: list[Conflict] = []
    for conflict in found:
        if conflict.older in used or conflict.newer in used:
            continue
        if conflict.strategy == "coexist" and _noted(by_id.get(conflict.older), conflict.newer):
            continue  # resolved before: both already say so
        used.update((conflict.older, conflict.newer))
        chosen.append(conflict)
    return chosen


def _noted(memory: Memory | None, other: str) -> bool:
    return memory is not None and any(other in note for note in knowledge_details(memory).notes)


def _judged(
    older: Sequence[Source],
    newer: Sequence[Source],
    *,
    llm: Consolidator,
    nli: Nli | None,
    terms: Terms,
    settled: set[frozenset[str]],
) -> list[Conflict]:
    from kioku.core.consolidation.similarity import TermIndex

    index = TermIndex(terms)
    by_id = {o.id: o for o in older}
    for o in older:
        index.add(o.id, o.text)
    found: list[Conflict] = []
    for item in newer:
        alike = [(s, by_id[k]) for s, k in index.alike(item.text, _ALIKE) if k != item.id]
        index.add(item.id, item.text)  # later items are judged against this one too
        by_id[item.id] = item
        for _, other in alike[:_PAIRS_PER_ITEM]:
            if frozenset((other.id, item.id)) in settled:
                continue
            if nli is not None and nli.classify(other.text, item.text).entailment >= NLI_AGREES:
                continue
            judgement = llm.judge_conflict(other.text, item.text)
            if not judgement.contradicts or judgement.strategy is None:
                continue
            found.append(
                Conflict(
                    other.id,
                    item.id,
                    judgement.strategy,
                    judgement.reason or f"{llm.name} found them in conflict",
                    judgement.merged_text,
                    judgement.condition,
                )
            )
    return found


def resolve(conflict: Conflict, moment: datetime) -> Action:
    """The action that resolves ``conflict`` by its strategy."""
    if conflict.strategy == "supersede":
        return Action(
            "supersede", conflict.reason, (conflict.older, conflict.newer), "", _supersede(conflict)
        )
    if conflict.strategy == "merge":
        return Action(
            "merge",
            conflict.reason,
            (conflict.older, conflict.newer),
            conflict.merged_text or "",
            _merge(conflict),
        )
    return Action(
        "coexist",
        conflict.reason,
        (conflict.older, conflict.newer),
        conflict.condition or "",
        _coexist(conflict),
    )


def _pair(r: Run, conflict: Conflict) -> tuple[Memory, Memory] | None:
    old, new = r.engine.store.get(conflict.older), r.engine.store.get(conflict.newer)
    return None if old is None or new is None else (old, new)


def _supersede(conflict: Conflict) -> Callable[[Run], None]:
    def run(r: Run) -> None:
        pair = _pair(r, conflict)
        if pair is None:
            return
        old, new = pair
        old_d, new_d = knowledge_details(old), knowledge_details(new)
        since = new_d.valid_from or new.created
        r.engine.store.update(
            old.id, MemoryPatch(details=replace(old_d, superseded_by=new.id, valid_until=since))
        )
        r.engine.store.update(
            new.id,
            MemoryPatch(
                details=replace(
                    new_d, supersedes=old.id, version=old_d.version + 1, valid_from=since
                )
            ),
        )
        r.note(Event.SUPERSEDE, old.id, by=new.id)  # ids only: the log keeps no memory text

    return run


def _merge(conflict: Conflict) -> Callable[[Run], None]:
    def run(r: Run) -> None:
        pair = _pair(r, conflict)
        if pair is None or not conflict.merged_text:
            return
        old, new = pair
        old_d, new_d = knowledge_details(old), knowledge_details(new)
        merged = new_knowledge(
            r.engine,
            new.trigger,
            conflict.merged_text,
            (*old_d.source_episodes, *new_d.source_episodes),
            min(old_d.confidence, new_d.confidence),
            max(old.created, new.created),
        )
        merged = stable_id(
            replace(
                merged,
                details=replace(
                    knowledge_details(merged),
                    merged_from=(old.id, new.id),
                    version=max(old_d.version, new_d.version) + 1,
                ),
            ),
            old.id,
            new.id,
        )
        insert(r.engine, merged, generated_id=False)
        for item, details in ((old, old_d), (new, new_d)):
            r.engine.store.update(
                item.id,
                MemoryPatch(
                    archived_at=r.moment,
                    details=replace(details, superseded_by=merged.id, valid_until=r.moment),
                ),
            )
            r.note(Event.MERGE, item.id, into=merged.id)
        r.note(Event.CONSOLIDATE, merged.id, kind="knowledge", merged_from=[old.id, new.id])

    return run


def _coexist(conflict: Conflict) -> Callable[[Run], None]:
    def run(r: Run) -> None:
        pair = _pair(r, conflict)
        if pair is None:
            return
        condition = conflict.condition or "each holds in its own context"
        for item, other in (pair, pair[::-1]):
            details = knowledge_details(item)
            note = f"coexists with {other.id}: {condition}"
            if note not in details.notes:
                r.engine.store.update(
                    item.id, MemoryPatch(details=replace(details, notes=(*details.notes, note)))
                )
            r.note(Event.COEXIST, item.id, other=other.id)

    return run
