"""Ingesting a Claude Code transcript: each of its turns not stored yet becomes one memory,
under a source id that makes ingesting again store only what is new (see :mod:`.transcripts`
for what a turn is)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kioku.core.validate import MAX_ID_CHARS, check_provenance_id
from kioku.interfaces.claude_code.transcripts import TranscriptTurn, parse_transcript

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = ["OFFLINE_BATCH", "IngestResult", "ingest_transcript", "source_id"]

#: Turns stored per transaction when the analyzer is the offline one (fast, no network).
OFFLINE_BATCH = 50


@dataclass(frozen=True, slots=True)
class IngestResult:
    """The outcome of :func:`ingest_transcript` for one transcript."""

    path: Path
    session_id: str
    #: Turns in the transcript (after exclusions).
    turns: int
    #: Turns stored now.
    added: int
    #: Turns stored by an earlier ingestion (matched by source id).
    already: int
    skipped_lines: int
    #: Ids of the memories stored now.
    memory_ids: tuple[str, ...] = field(default=())


def source_id(session_id: str, turn: TranscriptTurn) -> str:
    """The provenance id a turn is stored under: ``{session id}:{turn id}``, or, when that is
    longer than an id may be, the session id cut short and a digest of the turn id."""
    whole = f"{session_id}:{turn.turn_id}"
    if len(whole) <= MAX_ID_CHARS:
        return whole
    digest = hashlib.sha256(turn.turn_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{session_id[: MAX_ID_CHARS - len(digest) - 1]}:{digest}"


def ingest_transcript(
    kioku: Kioku,
    path: Path | str,
    *,
    session_id: str | None = None,
    batch_size: int | None = None,
    known: set[str] | None = None,
) -> IngestResult:
    """Remember each turn of a transcript not stored yet, as one memory per turn.

    A turn's memory is created at the user's timestamp and carries the source id
    ``{session id}:{turn id}``, so ingesting the same transcript again, or after it grew,
    stores only the new turns.

    Turns are stored ``batch_size`` per transaction (default 50 with the offline analyzer,
    one with an LLM analyzer), which also covers the check for stored turns, so two processes
    ingesting the same transcript never store a turn twice. Each batch is analysed before
    its transaction, so the store is locked only for the writes, never while an analyzer or
    a provider works. A crash loses at most the batch in progress and never half-writes a
    turn.

    ``known`` is a snapshot of stored source ids (:meth:`Kioku.known_source_ids`) to share
    across many transcripts: turns in it are not looked at again, and the ids stored now are
    added to it. Raises OSError when the file cannot be read, ValidationError when
    ``session_id`` is not an id kioku can store.
    """
    parsed = parse_transcript(path, tz=kioku.clock.tz, now=kioku.clock.now())
    session = check_provenance_id("session_id", session_id) if session_id else parsed.session_id
    offline = kioku.config.llm.provider == "offline"
    if batch_size is None:
        batch_size = OFFLINE_BATCH if offline else 1
    batch_size = max(1, batch_size)
    turns = parsed.turns
    snapshot = kioku.known_source_ids() if known is None else known
    pending = [t for t in turns if source_id(session, t) not in snapshot]
    added: list[str] = []
    already = len(turns) - len(pending)
    for start in range(0, len(pending), batch_size):
        # Analysed before the transaction: the write lock is held only for the writes.
        prepared = [
            (
                source_id(session, turn),
                kioku.prepare_turn(
                    turn.user,
                    turn.assistant,
                    at=turn.at,
                    session_id=session,
                    source_ids=[source_id(session, turn)],
                    source_timestamps=[turn.at] if turn.at is not None else [],
                ),
            )
            for turn in pending[start : start + batch_size]
        ]
        # Inside the transaction another process ingesting the same transcript waits for
        # the write lock and then sees these turns as stored.
        with kioku.store.atomic():
            stored = kioku.known_source_ids()
            fresh = []
            for sid, ready in prepared:
                if sid in stored:
                    already += 1
                    continue
                fresh.append(ready)
                stored.add(sid)
            for remembered in kioku.store_turns(fresh):
                if remembered.known:  # stored meanwhile, or erased meanwhile: not added
                    already += 1
                    continue
                added.append(remembered.memory.id)
        snapshot.update(stored)
    return IngestResult(
        path=parsed.path,
        session_id=session,
        turns=len(turns),
        added=len(added),
        already=already,
        skipped_lines=parsed.skipped_lines,
        memory_ids=tuple(added),
    )
