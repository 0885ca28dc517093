"""From an analysed conversation turn to a memory draft (記憶生成 › 生成フロー), and the rules
every path that remembers a turn shares: what an empty turn is, and what an exact duplicate is.

An **exact duplicate** of a new turn's memory is a memory of the same owner scope and the
same session, with the same trigger and content (the analysed text of the turn), the same
source ids (both none, or the same ones) and a creation time less than
:data:`DUPLICATE_WINDOW` away. The same turn remembered twice (a script run again, a double
submit, a retried hook) is therefore stored once; the same words said again later, or in
another session, or with another source id, are a new memory.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from kioku.core.model import Memory
from kioku.core.validate import check_created, check_provenance_id
from kioku.errors import ValidationError
from kioku.ports.analyzer import Analysis
from kioku.ports.store import MemoryFilter
from kioku.service.remember.drafts import MemoryDraft

if TYPE_CHECKING:
    from kioku.ports.store import Store

__all__ = [
    "DUPLICATE_WINDOW",
    "Provenance",
    "RememberedTurn",
    "check_provenance",
    "draft_from_analysis",
    "find_duplicate",
    "is_duplicate",
]

#: Two memories of the same turn text created less than this apart are the same turn.
DUPLICATE_WINDOW: Final = timedelta(seconds=60)


class RememberedTurn(tuple[Memory, Analysis]):
    """``(memory, analysis)`` as :meth:`Kioku.remember_turn` returns them; ``known`` tells
    whether the memory was already stored (an exact duplicate) rather than stored now."""

    known: bool

    def __new__(cls, memory: Memory, analysis: Analysis, *, known: bool = False) -> RememberedTurn:
        self = super().__new__(cls, (memory, analysis))
        self.known = known
        return self

    @property
    def memory(self) -> Memory:
        return self[0]

    @property
    def analysis(self) -> Analysis:
        return self[1]


Provenance = tuple[datetime | None, str | None, tuple[str, ...], tuple[datetime, ...]]


def _aware(moment: object, now: datetime) -> object:
    if isinstance(moment, datetime) and moment.tzinfo is None:
        return moment.replace(tzinfo=now.tzinfo)
    return moment


def check_provenance(
    now: datetime,
    at: object,
    session_id: object,
    source_ids: Iterable[object],
    source_timestamps: Iterable[object],
) -> Provenance:
    """When and where a new memory comes from, checked: ``at`` (a time without offset is
    local time) from 1970 to a day after ``now``, the session and source ids non-blank text.
    Raises ValidationError naming the argument."""
    when = None if at is None else check_created("at", _aware(at, now), now)
    session = None if session_id is None else check_provenance_id("session_id", session_id)
    if isinstance(source_ids, str):
        raise ValidationError("source_ids", source_ids, "a list of ids, not one string")
    sources = tuple(check_provenance_id("source_ids", s) for s in source_ids)
    stamps = tuple(
        check_created("source_timestamps", _aware(t, now), now) for t in source_timestamps
    )
    return when, session, sources, stamps


def find_duplicate(store: Store, memory: Memory) -> Memory | None:
    """The stored exact duplicate of ``memory`` (see the module's docstring), if any."""
    same = store.same_text(
        memory.trigger,
        memory.content,
        MemoryFilter(
            user_id=memory.user_id,
            agent_id=memory.agent_id,
            archived=None,
            session_id=memory.session_id,
            created_after=memory.created - DUPLICATE_WINDOW + timedelta(microseconds=1),
            created_before=memory.created + DUPLICATE_WINDOW,
        ),
    )
    for other in store.get_many(same) if same else ():
        if is_duplicate(memory, other):
            return other
    return None


def is_duplicate(memory: Memory, other: Memory) -> bool:
    """Whether ``other`` is an exact duplicate of ``memory``: the same text, session, kind,
    owner and sources, made within :data:`DUPLICATE_WINDOW` of it (the module's rule)."""
    return (
        other.trigger == memory.trigger
        and other.content == memory.content
        and other.session_id == memory.session_id
        and set(other.source_ids) == set(memory.source_ids)
        and other.kind == memory.kind
        and other.user_id == memory.user_id
        and other.agent_id == memory.agent_id
        and abs(other.created - memory.created) < DUPLICATE_WINDOW
    )


def draft_from_analysis(
    analysis: Analysis,
    *,
    at: datetime | None,
    session_id: str | None,
    source_ids: Iterable[str],
    source_timestamps: Iterable[datetime],
    protected: bool | None = None,
) -> MemoryDraft:
    """The draft of the memory a turn becomes; ``protected`` overrides the analysis."""
    return MemoryDraft(
        trigger=analysis.trigger,
        content=analysis.content,
        intensity=analysis.intensity,
        category=analysis.category,
        valence=analysis.valence.value,
        arousal=analysis.arousal,
        tags=analysis.tags,
        keywords=analysis.keywords,
        protected=analysis.protected if protected is None else protected,
        created=at,
        session_id=session_id,
        source_ids=tuple(source_ids),
        source_timestamps=tuple(source_timestamps),
    )
