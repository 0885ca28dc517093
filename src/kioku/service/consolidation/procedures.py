"""手続き自動蒸留 and procedure reconsolidation (spec 001 手続き記憶ライフサイクル).

A procedure candidate (from the LLM, or the steps lifted from procedural episodes offline) is
skipped when a procedure at least ``procedure_similarity`` (0.85) alike exists (RAG重複チェック);
when one exists for the same purpose (its description as alike) but with other steps, the
existing one is reconsolidated: its old version saved, its steps replaced, ``version`` + 1,
and its record of outcomes reset (confidence 0.5, no successes, no failures) because it has to
prove itself again. Anything else is a new procedure at confidence 0.4 (``auto_distilled``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.core.consolidation.model import ProcedureCandidate, Source, Terms
from kioku.core.kinds import INITIAL_DISTILLED_CONFIDENCE, ProcedureDetails
from kioku.core.lifecycle.log import Event
from kioku.core.model import Kind, Memory
from kioku.ports.store import MemoryPatch
from kioku.service.consolidation.common import Action, Run, procedure_details, stable_id
from kioku.service.kinds.records import base_record
from kioku.service.kinds.writing import procedure_text

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["RECONSOLIDATED_CONFIDENCE", "plan_procedures", "reconsolidate_procedure"]

#: Spec 001 procedures/ 再固定化時の特別処理: confidence 0.5, counts reset.
RECONSOLIDATED_CONFIDENCE: Final = 0.5


def _text(candidate: ProcedureCandidate) -> str:
    return procedure_text(candidate.description, candidate.steps)


def plan_procedures(
    engine: Engine,
    candidates: Sequence[ProcedureCandidate],
    current: Sequence[Memory],
    *,
    terms: Terms,
    episodes: Sequence[Source],
) -> list[Action]:
    """What to do with each candidate: skip, reconsolidate an existing procedure, or add."""
    from kioku.core.consolidation.similarity import term_similarity

    threshold = engine.config.consolidation.procedure_similarity
    known: list[tuple[str, str, str]] = [
        (m.id, m.content, procedure_details(m).description) for m in current
    ]
    at_of = {e.id: e.at for e in episodes}
    actions: list[Action] = []
    for candidate in candidates:
        if len(candidate.steps) < 2:
            continue
        text = _text(candidate)
        scored = [(term_similarity(text, body, terms), mid) for mid, body, _ in known]
        best, best_id = max(scored, default=(0.0, ""))
        if best >= threshold:
            actions.append(
                Action(
                    "skip_procedure",
                    f"{best:.2f} alike to {best_id} (a procedure ≥ {threshold} alike exists)",
                    (best_id,),
                    candidate.description,
                )
            )
            continue
        purpose = [
            (term_similarity(candidate.description, desc, terms), mid)
            for mid, _, desc in known
            if desc
        ]
        same, same_id = max(purpose, default=(0.0, ""))
        if same >= threshold:
            memory = next(m for m in current if m.id == same_id)
            actions.append(reconsolidate_procedure(memory, candidate, f"{same:.2f}"))
            known = [k for k in known if k[0] != same_id]
            known.append((same_id, text, candidate.description))
            continue
        at = max((at_of[s] for s in candidate.sources if s in at_of), default=None)
        memory = _new_procedure(engine, candidate, at)
        known.append((memory.id, text, candidate.description))
        actions.append(_add(memory, candidate))
    return actions


def _new_procedure(engine: Engine, c: ProcedureCandidate, at: datetime | None) -> Memory:
    memory = base_record(engine, Kind.PROCEDURE, c.title or c.description[:60], _text(c), at)
    details = ProcedureDetails(
        description=c.description,
        steps=tuple(c.steps),
        confidence=INITIAL_DISTILLED_CONFIDENCE,
        auto_distilled=True,
        source_episodes=tuple(dict.fromkeys(c.sources)),
    )
    return stable_id(replace(memory, details=details), *details.source_episodes)


def _add(memory: Memory, candidate: ProcedureCandidate) -> Action:
    def run(r: Run) -> None:
        r.add(memory)
        r.note(Event.CONSOLIDATE, memory.id, kind="procedure", steps=len(candidate.steps))

    return Action(
        "add_procedure",
        f"{len(candidate.steps)} steps distilled from {len(candidate.sources)} episode(s) "
        f"({candidate.origin}), confidence {INITIAL_DISTILLED_CONFIDENCE}",
        (memory.id,),
        memory.content,
        run,
    )


def reconsolidate_procedure(
    memory: Memory, candidate: ProcedureCandidate, alike: str, *, why: str = ""
) -> Action:
    """Replace ``memory``'s steps by the candidate's, keeping the old version."""
    old = procedure_details(memory)

    def run(r: Run) -> None:
        store = r.engine.store
        fresh = store.get(memory.id)
        if fresh is None:
            return
        store.save_version(fresh, r.moment)
        details = replace(
            procedure_details(fresh),
            description=candidate.description or old.description,
            steps=tuple(candidate.steps),
            version=procedure_details(fresh).version + 1,
            success_count=0,
            failure_count=0,
            confidence=RECONSOLIDATED_CONFIDENCE,
            source_episodes=tuple(
                dict.fromkeys((*procedure_details(fresh).source_episodes, *candidate.sources))
            ),
        )
        store.update(memory.id, MemoryPatch(content=_text(candidate), details=details))
        r.note(
            Event.RECONSOLIDATE,
            memory.id,
            kind="procedure",
            version_before=old.version,
            version_after=details.version,
        )

    return Action(
        "reconsolidate_procedure",
        why
        or f"same purpose ({alike} alike) with other steps: version {old.version} kept, "
        f"now version {old.version + 1} at confidence {RECONSOLIDATED_CONFIDENCE}",
        (memory.id,),
        _text(candidate),
        run,
    )
