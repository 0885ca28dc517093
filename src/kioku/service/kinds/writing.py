"""意図的記銘 (spec 001): the one write path an agent has, for every kind of memory.

``write_memory`` stores an episode (as a remembered turn), a knowledge item or a procedure in
the caller's scope; profiles are written by :mod:`.profiles`. Knowledge and procedures are
not episodes: they carry no emotion, are not moved down by spec 000's nightly batch, and
their lifecycle (consolidation, reconsolidation, active forgetting) belongs to the
consolidation pipeline, which calls :func:`supersede` and :func:`record_outcome` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.core.kinds import (
    INITIAL_WRITTEN_CONFIDENCE,
    KnowledgeDetails,
    ProcedureDetails,
    procedure_confidence,
)
from kioku.core.model import Kind, Memory
from kioku.core.validate import check_kind, normalise_keywords
from kioku.errors import MemoryNotFoundError, ValidationError
from kioku.ports.store import MemoryPatch
from kioku.service.kinds.records import base_record
from kioku.service.remember.storing import insert, remember_turn

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["procedure_text", "record_outcome", "supersede", "write_memory"]

_MAX_TITLE: Final = 200
_MAX_STEPS: Final = 100


def _title(title: str, text: str) -> str:
    title = " ".join(title.split())
    if not title:
        title = " ".join(text.split())[:80]
    if len(title) > _MAX_TITLE:
        raise ValidationError("title", title[:40] + "...", f"at most {_MAX_TITLE} characters")
    return title


def _unit(name: str, value: float | None, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ValidationError(name, value, "a number from 0 to 1")
    return float(value)


def procedure_text(description: str, steps: Sequence[str]) -> str:
    """A procedure's searchable text: its description, then its numbered steps."""
    lines = [description.strip()] if description.strip() else []
    lines += [f"{n}. {step.strip()}" for n, step in enumerate(steps, 1)]
    return "\n".join(lines)


def write_memory(
    engine: Engine,
    kind: str,
    text: str,
    *,
    title: str = "",
    description: str = "",
    steps: Sequence[str] = (),
    confidence: float | None = None,
    source_ids: Sequence[str] = (),
    keywords: Sequence[str] = (),
    protected: bool = False,
    at: datetime | None = None,
) -> Memory:
    """Store one memory of ``kind`` written on purpose; the memory as stored.

    * ``episode``: ``title`` is what happened (the trigger), ``text`` what came of it; it is
      analysed and stored like a conversation turn.
    * ``knowledge``: ``text`` is the fact, lesson or policy; ``title`` a short subject.
    * ``procedure``: ``title`` is its name, ``description`` what it is for (what procedure
      matching reads), ``steps`` the steps in order; ``text`` may add notes.
    """
    chosen = check_kind(kind)
    if not isinstance(text, str):
        raise ValidationError("text", text, "text")
    if chosen is Kind.EPISODE:
        episode = remember_turn(engine, title or text, text if title else "").memory
        if protected and not episode.protected:
            from kioku.service.remember.protection import protect

            return protect(engine, episode.id)
        return episode
    if chosen is Kind.PROFILE:
        raise ValidationError(
            "kind", kind, "episode, knowledge or procedure (profiles: use `kioku profile`)"
        )
    if chosen is Kind.KNOWLEDGE:
        if not text.strip():
            raise ValidationError("text", text, "the fact, lesson or policy to remember")
        memory = base_record(engine, chosen, _title(title, text), text.strip(), at)
        details: KnowledgeDetails | ProcedureDetails = KnowledgeDetails(
            confidence=_unit("confidence", confidence, KnowledgeDetails().confidence),
            source_episodes=tuple(source_ids),
            valid_from=memory.created,
        )
    else:
        if len(steps) > _MAX_STEPS:
            raise ValidationError("steps", len(steps), f"at most {_MAX_STEPS} steps")
        clean = tuple(" ".join(s.split()) for s in steps if s.strip())
        desc = " ".join((description or text).split())
        if not desc:
            raise ValidationError("description", description, "what the procedure is for")
        body = procedure_text(desc, clean)
        if text.strip() and text.strip() != desc:
            body = f"{body}\n{text.strip()}"
        memory = base_record(engine, chosen, _title(title, desc), body, at)
        details = ProcedureDetails(
            description=desc,
            steps=clean,
            confidence=_unit("confidence", confidence, INITIAL_WRITTEN_CONFIDENCE),
            source_episodes=tuple(source_ids),
        )
    memory = replace(
        memory, details=details, keywords=normalise_keywords(keywords), protected=bool(protected)
    )
    with engine.store.atomic():
        stored = insert(engine, memory, generated_id=True)
        _log_write(engine, stored)
    return stored


def _log_write(engine: Engine, memory: Memory) -> None:
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import log_events, make_event

    event = make_event(
        engine,
        EventType.MEMORY_WRITE,
        memory.trigger,
        memory_ids=[memory.id],
        summary=f"{memory.kind.value} written",
    )
    log_events(engine, [event])


def _own(engine: Engine, memory_id: str, kind: Kind) -> Memory:
    found = engine.store.get(memory_id)
    if found is None or (found.user_id, found.agent_id) != (engine.user_id, engine.agent_id):
        raise MemoryNotFoundError(memory_id)
    if found.kind is not kind:
        raise ValidationError("id", memory_id, f"the id of a {kind.value} (this is a {found.kind})")
    return found


def record_outcome(
    engine: Engine, memory_id: str, success: bool, *, at: datetime | None = None
) -> Memory:
    """Spec 001 (成功/失敗追跡): count one success or failure of a procedure; its confidence
    becomes ``success / max(1, success + failure)``, and it counts as used at ``at``."""
    moment = at or engine.clock.now()
    with engine.store.atomic():
        memory = _own(engine, memory_id, Kind.PROCEDURE)
        old = memory.details if isinstance(memory.details, ProcedureDetails) else None
        base = old or ProcedureDetails(description=memory.trigger)
        successes = base.success_count + (1 if success else 0)
        failures = base.failure_count + (0 if success else 1)
        new = replace(
            base,
            success_count=successes,
            failure_count=failures,
            confidence=procedure_confidence(successes, failures, base.confidence),
        )
        engine.store.update(memory_id, MemoryPatch(details=new, last_access=moment))
    return replace(memory, details=new, last_access=moment)


def supersede(engine: Engine, old_id: str, new_id: str, at: datetime | None = None) -> None:
    """Mark knowledge ``old_id`` as replaced by ``new_id`` from ``at`` on: the old item is
    kept as history (valid until then) and never primed again."""
    moment = at or engine.clock.now()
    with engine.store.atomic():
        old = _own(engine, old_id, Kind.KNOWLEDGE)
        new = _own(engine, new_id, Kind.KNOWLEDGE)
        old_details = old.details if isinstance(old.details, KnowledgeDetails) else None
        new_details = new.details if isinstance(new.details, KnowledgeDetails) else None
        engine.store.update(
            old_id,
            MemoryPatch(
                details=replace(
                    old_details or KnowledgeDetails(), superseded_by=new_id, valid_until=moment
                )
            ),
        )
        engine.store.update(
            new_id,
            MemoryPatch(
                details=replace(
                    new_details or KnowledgeDetails(),
                    supersedes=old_id,
                    version=(old_details.version if old_details else 1) + 1,
                    valid_from=moment,
                )
            ),
        )
