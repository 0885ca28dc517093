"""What every importer shares: the plan of what a source holds, and how it is stored.

An importer reads its source whole and checks it before anything is written: the result is
an :class:`ImportPlan` of conversation turns (stored as episodes through the normal turn
ingestion, each at its own time and in its own session) and notes (stored as knowledge, or
as procedures when they are a list of steps). Every item carries a stable source id made
from the format, where the item lives in the source and, where the source has no id of its
own, a digest of its text: :func:`apply_plan` skips the items whose source id the scope
already knows (stored or erased), so a second import of the same source creates nothing.
With ``dry_run`` it only counts what would be created and shows a sample of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any, Final

from kioku.core.kinds import INITIAL_WRITTEN_CONFIDENCE, KnowledgeDetails, ProcedureDetails
from kioku.core.model import Kind, Memory
from kioku.core.timefmt import format_ts, parse_ts
from kioku.core.validate import check_created, normalise_keywords, validate_memory
from kioku.errors import KiokuError, ValidationError
from kioku.service.remember.imports import ImportTurn, import_turns
from kioku.service.remember.known import known_source_ids

if TYPE_CHECKING:
    from kioku.service.engine import Engine
    from kioku.service.remember.workers import Workers

__all__ = [
    "ImportPlan",
    "ImportSourceError",
    "Note",
    "PlanReport",
    "apply_plan",
    "digest",
    "moment",
]

#: How many items a dry run shows.
SAMPLE_SIZE: Final = 5
_MAX_TITLE: Final = 200


class ImportSourceError(KiokuError):
    """The source of an import cannot be read as its format says (exit 2, nothing written):
    names the file, where in it, and what is wrong."""

    exit_code = 2

    def __init__(self, path: str, where: str, problem: str, *, hint: str | None = None) -> None:
        self.path = path
        self.where = where
        place = f"{path}: {where}" if where else path
        super().__init__(f"{place}: {problem}", hint=hint)


@dataclass(frozen=True, slots=True)
class Note:
    """One fact, lesson or list of steps read from a source, to be stored as knowledge (or a
    procedure when ``steps`` are given)."""

    title: str
    text: str
    at: datetime
    source_id: str
    #: Where it was read: ``path:line``, for errors and dry runs.
    origin: str
    steps: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()

    @property
    def kind(self) -> Kind:
        return Kind.PROCEDURE if self.steps else Kind.KNOWLEDGE


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """Everything a source holds that can be imported, checked, in the source's order."""

    format: str
    turns: tuple[ImportTurn, ...] = ()
    notes: tuple[Note, ...] = ()
    #: Items of the source that are not imported (deleted memories, system messages...).
    ignored: int = 0


@dataclass(slots=True)
class PlanReport:
    """What an import created (or with a dry run, would create)."""

    format: str
    dry_run: bool
    episodes: int = 0
    knowledge: int = 0
    procedures: int = 0
    #: Items whose source id is already known (stored before, or erased).
    skipped: int = 0
    #: Turns already stored as they are (exact duplicates under another source id).
    duplicates: int = 0
    ignored: int = 0
    sample: list[dict[str, Any]] = field(default_factory=list)

    @property
    def created(self) -> int:
        return self.episodes + self.knowledge + self.procedures

    def as_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "dry_run": self.dry_run,
            "created": self.created,
            "episodes": self.episodes,
            "knowledge": self.knowledge,
            "procedures": self.procedures,
            "skipped": self.skipped,
            "duplicates": self.duplicates,
            "ignored": self.ignored,
            "sample": self.sample,
        }


def digest(*parts: str) -> str:
    """A short stable digest of ``parts`` (16 hex digits), for source ids of text without an
    id of its own."""
    hasher = hashlib.sha256()
    for part in parts:
        hasher.update(part.encode("utf-8", "surrogatepass"))
        hasher.update(b"\x00")
    return hasher.hexdigest()[:16]


def moment(raw: object, tz: tzinfo, now: datetime, *, path: str, where: str) -> datetime:
    """A time read from a source: ISO 8601 text (local time without an offset) or epoch
    seconds, from 1970 to a day ahead; ImportSourceError naming the place otherwise."""
    try:
        if isinstance(raw, bool):
            raise ValueError
        if isinstance(raw, int | float):
            at = datetime.fromtimestamp(float(raw), tz)
        elif isinstance(raw, str):
            at = parse_ts(raw.replace(" ", "T", 1) if " " in raw.strip() else raw, tz)
        elif isinstance(raw, datetime):
            at = raw if raw.tzinfo is not None else raw.replace(tzinfo=tz)
        else:
            raise ValueError
    except (ValueError, OverflowError, OSError):
        raise ImportSourceError(
            path, where, f"{raw!r} is not a time (expected ISO 8601 or epoch seconds)"
        ) from None
    try:
        return check_created(where or "time", at, now)
    except ValidationError as exc:
        raise ImportSourceError(path, where, exc.allowed) from None


def _sample_turn(turn: ImportTurn) -> dict[str, Any]:
    return {
        "kind": "episode",
        "at": format_ts(turn.at) if turn.at else None,
        "title": " ".join(turn.user.split())[:80],
        "source_id": turn.source_id,
        "session": turn.session_id,
    }


def _sample_note(note: Note) -> dict[str, Any]:
    return {
        "kind": note.kind.value,
        "at": format_ts(note.at),
        "title": note.title,
        "source_id": note.source_id,
        "origin": note.origin,
    }


def _title(title: str, text: str) -> str:
    flat = " ".join(title.split()) or " ".join(text.split())[:80]
    return flat if len(flat) <= _MAX_TITLE else flat[: _MAX_TITLE - 1] + "…"


def _memory(engine: Engine, note: Note) -> Memory:
    """The memory ``note`` becomes, checked (ImportSourceError naming its origin)."""
    from kioku.service.kinds.records import base_record
    from kioku.service.kinds.writing import procedure_text

    title = _title(note.title, note.text)
    details: KnowledgeDetails | ProcedureDetails
    if note.steps:
        description = " ".join(note.text.split()) or title
        body = procedure_text(description, note.steps)
        memory = base_record(engine, Kind.PROCEDURE, title, body, note.at)
        details = ProcedureDetails(
            description=description, steps=note.steps, confidence=INITIAL_WRITTEN_CONFIDENCE
        )
    else:
        memory = base_record(engine, Kind.KNOWLEDGE, title, note.text.strip(), note.at)
        details = KnowledgeDetails(valid_from=note.at)
    memory = replace(
        memory,
        details=details,
        keywords=normalise_keywords(note.keywords),
        source_ids=(note.source_id,),
        source_timestamps=(note.at,),
    )
    try:
        validate_memory(memory, engine.config.categories)
    except ValidationError as exc:
        raise ImportSourceError(note.origin, "", str(exc)) from None
    return memory


def _store_notes(engine: Engine, memories: Sequence[Memory], fmt: str) -> None:
    """Store ``memories`` (checked) with their vectors, in one transaction."""
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import log_events, make_event
    from kioku.service.remember.storing import insert
    from kioku.service.vectors import embed_memory

    ready = [embed_memory(engine, m) for m in memories]
    with engine.store.atomic():
        events = []
        for memory in ready:
            stored = insert(engine, memory, generated_id=True)
            events.append(
                make_event(
                    engine,
                    EventType.MEMORY_WRITE,
                    stored.trigger,
                    memory_ids=[stored.id],
                    summary=f"{stored.kind.value} imported from {fmt}",
                )
            )
        if events:
            log_events(engine, events)


def _known(engine: Engine, dry_run: bool) -> set[str]:
    from kioku.errors import HomeNotFoundError

    try:
        return known_source_ids(engine)
    except HomeNotFoundError:
        if dry_run:
            return set()  # no store yet: everything would be new
        raise


def apply_plan(
    engine: Engine, plan: ImportPlan, *, dry_run: bool = False, workers: Workers | None = None
) -> PlanReport:
    """Store what ``plan`` holds that the scope does not know yet (or, with ``dry_run``,
    only count it). Notes are checked whole first and stored in one transaction; turns go
    through the normal turn ingestion, a batch per transaction, so an interrupted import is
    resumed by running it again. ``workers``: how many processes prepare the turns (see
    :func:`~kioku.service.remember.imports.import_turns`)."""
    report = PlanReport(plan.format, dry_run, ignored=plan.ignored)
    known = _known(engine, dry_run)
    turns: list[ImportTurn] = []
    notes: list[Note] = []
    for turn in plan.turns:
        if turn.source_id is not None and turn.source_id in known:
            report.skipped += 1
            continue
        if turn.source_id is not None:
            known.add(turn.source_id)
        turns.append(turn)
    for note in plan.notes:
        if note.source_id in known:
            report.skipped += 1
            continue
        known.add(note.source_id)
        notes.append(note)
    memories = [_memory(engine, note) for note in notes]
    report.knowledge = sum(1 for m in memories if m.kind is Kind.KNOWLEDGE)
    report.procedures = len(memories) - report.knowledge
    report.sample = [_sample_note(n) for n in notes[:SAMPLE_SIZE]]
    report.sample += [_sample_turn(t) for t in turns[: SAMPLE_SIZE - len(report.sample)]]
    if dry_run:
        report.episodes = len(turns)
        return report
    if memories:
        _store_notes(engine, memories, plan.format)
    if turns:
        result = import_turns(engine, turns, workers=workers)
        report.episodes = result.imported
        report.duplicates = result.duplicates
        report.skipped += result.skipped
    return report
