"""Storing new memories: one given whole or by its fields, and one conversation turn
(記憶生成). Every path ends in :func:`insert`, which validates, embeds and stores the memory,
checking an exact duplicate and the protected-memory cap in the same transaction.

A turn is remembered in two steps, :func:`prepare_turn` (analysis, the memory, its vector: no
lock) and :func:`store_turn` (the writes), so a caller that stores many turns in one
transaction (an import, a transcript) holds the write lock only for the writes.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Final, Literal, overload

from kioku.errors import DuplicateIdError, ProtectionLimitError
from kioku.ports.erasure import ErasedSourceError
from kioku.service.engine import warn
from kioku.service.remember.drafts import MemoryDraft, build_memory
from kioku.service.remember.protection import check_protection_room
from kioku.service.remember.turns import (
    RememberedTurn,
    check_provenance,
    draft_from_analysis,
    find_duplicate,
)
from kioku.service.vectors import embed_memory, note_vector_model

if TYPE_CHECKING:
    from kioku.core.activity.events import ActivityEvent
    from kioku.core.model import Memory
    from kioku.core.profiles import ProfileClaim
    from kioku.ports.analyzer import Analysis
    from kioku.service.engine import Engine

__all__ = [
    "PreparedTurn",
    "insert",
    "prepare_turn",
    "remember",
    "remember_turn",
    "store_turn",
    "turn_events",
]

#: Fresh ids drawn for one memory before its DuplicateIdError is let through.
_ID_ATTEMPTS: Final = 8


def remember(
    engine: Engine,
    trigger: str,
    content: str,
    *,
    intensity: int,
    category: str,
    valence: str = "neutral",
    arousal: int = 50,
    tags: Iterable[str] = (),
    keywords: Iterable[str] = (),
    protected: bool = False,
    at: datetime | None = None,
    session_id: str | None = None,
    source_ids: Iterable[str] = (),
    source_timestamps: Iterable[datetime] = (),
    kind: str = "episode",
) -> Memory:
    """Store a new memory from trigger, content and emotion fields; the spec's initial values
    are derived (:func:`~kioku.service.remember.drafts.build_memory`)."""
    now = engine.clock.now()
    at, session_id, sources, stamps = check_provenance(
        now, at, session_id, source_ids, source_timestamps
    )
    draft = MemoryDraft(
        trigger=trigger,
        content=content,
        intensity=intensity,
        category=category,
        valence=valence,
        arousal=arousal,
        tags=tags,
        keywords=keywords,
        protected=protected,
        created=at,
        session_id=session_id,
        source_ids=sources,
        source_timestamps=stamps,
        kind=kind,
    )
    memory = _built(engine, draft, now)
    return insert(engine, memory, generated_id=True)


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    """A turn analysed and made into its memory (validated, embedded), not stored yet."""

    memory: Memory
    analysis: Analysis
    session_id: str | None
    #: The turn as said (for the activity log): the user's words and the reply, if any.
    user: str = ""
    assistant: str = ""
    #: What the speaker said about themselves (for their profile), read before any lock.
    claims: tuple[ProfileClaim, ...] = ()


def _built(
    engine: Engine, draft: MemoryDraft, now: datetime, id_suffix: str | None = None
) -> Memory:
    """The new memory ``draft`` describes, in ``engine``'s scope, with a fresh id (or the one
    ``id_suffix`` ends)."""
    return build_memory(
        draft,
        config=engine.config,
        now=now,
        id_suffix=secrets.token_hex(4) if id_suffix is None else id_suffix,
        user_id=engine.user_id,
        agent_id=engine.agent_id,
    )


def prepare_turn(
    engine: Engine,
    user: str,
    assistant: str = "",
    *,
    at: datetime | None = None,
    session_id: str | None = None,
    source_ids: Iterable[str] = (),
    source_timestamps: Iterable[datetime] = (),
    now: datetime | None = None,
    id_suffix: str | None = None,
) -> PreparedTurn:
    """Everything of remembering a turn that needs no lock: its checks, its analysis, the
    memory and its vector. :func:`store_turn` stores it.

    ``now`` (default: the engine's clock, read once) and ``id_suffix`` (default: drawn with
    :mod:`secrets`) are given by a caller that draws them itself, as an import whose turns
    are prepared in worker processes does (:mod:`kioku.service.remember.workers`): given
    both, the turn is a function of its arguments, the configuration and the owner alone."""
    from kioku.core.validate import check_turn
    from kioku.ports.analyzer import Turn

    user, assistant = check_turn(user, assistant)
    if now is None:
        now = engine.clock.now()
    at, session_id, sources, stamps = check_provenance(
        now, at, session_id, source_ids, source_timestamps
    )
    # Provider fallbacks reach ``on_warning`` through the analyzer's own callback and are
    # listed in ``analysis.warnings``.
    analysis = engine.analyzer.analyze(Turn(user=user, assistant=assistant, at=at))
    draft = draft_from_analysis(
        analysis,
        at=at,
        session_id=session_id,
        source_ids=sources,
        source_timestamps=stamps,
    )
    # Built with its id in the engine's scope and validated: only its vector is missing.
    memory = embed_memory(engine, _built(engine, draft, now, id_suffix))
    from kioku.service.kinds.profiles import claims_of

    return PreparedTurn(
        memory,
        analysis,
        session_id,
        user,
        assistant,
        tuple(claims_of(engine, user)),
    )


def store_turn(engine: Engine, turn: PreparedTurn) -> RememberedTurn:
    """Store a prepared turn: an exact duplicate already stored (or an erased source) is
    returned as known; a turn that asks for protection while the cap is reached is stored
    unprotected, with a warning. One transaction (the caller's, if any): the memory, the
    session's mood, the activity log lines and the profile it teaches are kept together or
    not at all."""
    from kioku.service.kinds.profiles import learn_from_turn
    from kioku.service.recall.mood import SessionMood, session_key

    with engine.store.atomic():
        try:
            stored, known = _store(engine, turn.memory, generated_id=True, dedupe=True, own=False)
        except ProtectionLimitError as exc:
            warn(engine, f"stored without protection: {exc}")
            unprotected = replace(turn.memory, protected=False)
            stored, known = _store(engine, unprotected, generated_id=True, dedupe=True, own=False)
        if turn.session_id:
            engine.store.set_state(session_key(turn.session_id), SessionMood.of(stored).to_json())
        if not known:
            _log_turn(engine, stored, turn)
            learn_from_turn(engine, stored, text=turn.user or None, claims=list(turn.claims))
    return RememberedTurn(stored, turn.analysis, known=known)


def _log_turn(engine: Engine, stored: Memory, turn: PreparedTurn) -> None:
    """The turn's two sides in the activity log (spec 001: MSG< and MSG>)."""
    from kioku.service.activity.log import log_events

    log_events(engine, turn_events(engine, stored, turn))


def turn_events(engine: Engine, stored: Memory, turn: PreparedTurn) -> list[ActivityEvent]:
    """The activity lines of a stored turn: its two sides (spec 001: MSG< and MSG>) and the
    provider failures of its analysis (ERR)."""
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import make_event

    at = stored.source_timestamps[0] if stored.source_timestamps else stored.created
    session = turn.session_id
    events = [
        make_event(
            engine,
            EventType.MESSAGE_RECEIVED,
            turn.user or stored.trigger,
            at=at,
            memory_ids=[stored.id],
            session_id=session,
            from_=engine.user_id,
        )
    ]
    if turn.assistant:
        events.append(
            make_event(
                engine,
                EventType.RESPONSE_SENT,
                turn.assistant,
                at=at,
                memory_ids=[stored.id],
                session_id=session,
                to=engine.user_id,
            )
        )
    # A provider that failed and the offline analyzer that stood in (spec 001's ERR).
    events += [
        make_event(engine, EventType.ERROR, warning, at=at, memory_ids=[stored.id])
        for warning in turn.analysis.warnings
    ]
    return events


def remember_turn(
    engine: Engine,
    user: str,
    assistant: str = "",
    *,
    at: datetime | None = None,
    session_id: str | None = None,
    source_ids: Iterable[str] = (),
    source_timestamps: Iterable[datetime] = (),
) -> RememberedTurn:
    """Analyse one turn and store it as one memory (see :meth:`Kioku.remember_turn`)."""
    prepared = prepare_turn(
        engine,
        user,
        assistant,
        at=at,
        session_id=session_id,
        source_ids=source_ids,
        source_timestamps=source_timestamps,
    )
    return store_turn(engine, prepared)


@overload
def insert(engine: Engine, memory: Memory, *, generated_id: bool) -> Memory: ...


@overload
def insert(
    engine: Engine, memory: Memory, *, generated_id: bool, dedupe: Literal[True]
) -> tuple[Memory, bool]: ...


def insert(
    engine: Engine, memory: Memory, *, generated_id: bool, dedupe: bool = False
) -> Memory | tuple[Memory, bool]:
    """Validate, embed and store ``memory`` in ``engine``'s scope. With ``dedupe``, an exact
    duplicate already stored (checked in the same transaction) is returned instead, as
    ``(memory, True)``."""
    prepared = _prepared(engine, memory, generated_id=generated_id)
    stored, known = _store(engine, prepared, generated_id=generated_id, dedupe=dedupe)
    return (stored, known) if dedupe else stored


def _prepared(engine: Engine, memory: Memory, *, generated_id: bool) -> Memory:
    """``memory`` with its id (when to be generated), in ``engine``'s scope, validated and
    embedded."""
    from kioku.core.ids import make_memory_id
    from kioku.core.validate import validate_memory

    if generated_id and not memory.id:
        memory = replace(memory, id=make_memory_id(memory.created, secrets.token_hex(4)))
    if (memory.user_id, memory.agent_id) != (engine.user_id, engine.agent_id):
        memory = replace(memory, user_id=engine.user_id, agent_id=engine.agent_id)
    validate_memory(memory, engine.config.categories)
    return embed_memory(engine, memory)


def _store(
    engine: Engine, memory: Memory, *, generated_id: bool, dedupe: bool, own: bool = True
) -> tuple[Memory, bool]:
    """Store a prepared ``memory`` in one transaction (nested in the caller's, if any):
    ``(the memory stored, False)``, or with ``dedupe`` ``(the one already stored, True)``.

    Without ``own`` the caller's transaction is the memory's: every error below is raised
    before anything is written (a taken id, an erased source and a full protection cap are
    refused before the insert, which undoes itself), so no level of its own is needed."""
    from kioku.core.ids import make_memory_id

    store = engine.store
    for _ in range(_ID_ATTEMPTS):
        try:
            with store.atomic() if own else nullcontext():
                if dedupe:
                    existing = find_duplicate(store, memory)
                    if existing is not None:
                        return existing, True
                if memory.protected:
                    check_protection_room(engine)
                try:
                    store.add(memory)
                except ErasedSourceError:
                    if not dedupe:
                        raise
                    return memory, True  # an erased turn: known, and never stored again
                note_vector_model(engine, memory)
            return memory, False
        except DuplicateIdError:
            if not generated_id:
                raise
            memory = replace(memory, id=make_memory_id(memory.created, secrets.token_hex(4)))
    raise DuplicateIdError(memory.id)
