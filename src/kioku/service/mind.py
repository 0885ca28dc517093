"""The facade's methods for spec 001's mind: kinds, deliberate recall, priming, activity.

:class:`Mind` is a part of :class:`~kioku.service.kioku.Kioku`, kept in its own module so
the facade stays short. Each method delegates to one use case. The deliberate-recall methods
(``search_memory``, ``read_memory``, ``write_memory``, ``report_procedure_outcome``) are the
tool surface every face (CLI, MCP, HTTP) exposes unchanged.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kioku.core.activity.events import ActivityEvent
    from kioku.core.model import Memory
    from kioku.ports.store import StoredActivity
    from kioku.service.deliberate.search import Read, SearchResult
    from kioku.service.encoding import FinalizeReport
    from kioku.service.engine import Engine
    from kioku.service.journal import StreamingJournal
    from kioku.service.priming.prime import Priming

__all__ = ["Mind"]


class Mind:
    """Deliberate recall and the kinds of memory (mixed into ``Kioku``)."""

    def _engine(self) -> Engine:
        return self  # type: ignore[return-value]  # Kioku, which this is mixed into, is one

    def search_memory(
        self,
        query: str,
        *,
        kinds: Sequence[str] | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        include_archive: bool = True,
        top_k: int = 10,
    ) -> SearchResult:
        """Search on purpose: every kind asked for (default all), archive included, ranked
        by match alone; compressed episodes are found by their original words too."""
        from kioku.service.deliberate.search import search_memory

        return search_memory(
            self._engine(),
            query,
            kinds=kinds,
            since=since,
            until=until,
            include_archive=include_archive,
            top_k=top_k,
        )

    def read_memory(self, memory_id: str, *, mark: bool = True) -> Read:
        """One memory with its kept original text; reading it recalls it (``mark``)."""
        from kioku.service.deliberate.search import read_memory

        return read_memory(self._engine(), memory_id, mark=mark)

    def write_memory(
        self,
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
        """Remember on purpose (意図的記銘): an episode, a knowledge item or a procedure;
        ``at`` dates a knowledge item or procedure (default now)."""
        from kioku.service.kinds.writing import write_memory

        return write_memory(
            self._engine(),
            kind,
            text,
            title=title,
            description=description,
            steps=steps,
            confidence=confidence,
            source_ids=source_ids,
            keywords=keywords,
            protected=protected,
            at=at,
        )

    def edit_memory(
        self,
        memory_id: str,
        *,
        trigger: str | None = None,
        content: str | None = None,
        category: str | None = None,
        intensity: int | None = None,
        tags: Sequence[str] | None = None,
        keywords: Sequence[str] | None = None,
    ) -> Memory:
        """Change some fields of a memory by hand (only those given): checked as a new
        memory is, the old state kept as a version, its text re-indexed and re-embedded."""
        from kioku.service.kinds.editing import edit_memory

        return edit_memory(
            self._engine(),
            memory_id,
            trigger=trigger,
            content=content,
            category=category,
            intensity=intensity,
            tags=tags,
            keywords=keywords,
        )

    def report_procedure_outcome(self, memory_id: str, success: bool) -> Memory:
        """Count one success or failure of a procedure; its confidence follows."""
        from kioku.service.kinds.writing import record_outcome

        return record_outcome(self._engine(), memory_id, success)

    def supersede(self, old_id: str, new_id: str) -> None:
        """Knowledge ``old_id`` is replaced by ``new_id``: kept as history, never primed."""
        from kioku.service.kinds.writing import supersede

        supersede(self._engine(), old_id, new_id)

    # -- the streaming journal ---------------------------------------------------------------

    def journal(
        self, session_id: str, *, trigger: str, sender: str | None = None
    ) -> StreamingJournal:
        """A crash-safe journal of one streaming response in ``<home>/shortterm/``: write
        its text and tool calls as they stream, ``finalize()`` it when the response is
        stored. Orphans of earlier crashes are recovered into episodes first."""
        from kioku.service.journal import StreamingJournal
        from kioku.service.journal.recovery import journal_dir, recover_journals

        recover_journals(self._engine())
        return StreamingJournal.open(
            journal_dir(self._engine()), session_id, trigger=trigger, sender=sender
        )

    def recover_journals(self) -> builtins.list[Memory]:
        """Store every orphaned journal (a response cut off by a crash) as an episode."""
        from kioku.service.journal.recovery import recover_journals

        return recover_journals(self._engine())

    # -- priming and the activity log -------------------------------------------------------

    def prime(
        self,
        message: str,
        *,
        sender: str | None = None,
        message_type: str | None = None,
        session_id: str | None = None,
        mark: bool = True,
        max_chars: int | None = None,
        mood_shift: bool | None = None,
    ) -> Priming:
        """What to inject before ``message`` (spec 001 priming): the sender's profile, recent
        activity, related knowledge, matching procedures and recalled episodes, each within
        its share of the budget of the message's type. ``mood_shift`` turns the mood shift
        on or off for this call (None: the ``mood.shift`` setting)."""
        from kioku.service.priming.prime import prime

        return prime(
            self._engine(),
            message,
            sender=sender,
            message_type=message_type,
            session_id=session_id,
            mark=mark,
            max_chars=max_chars,
            mood_shift=mood_shift,
        )

    def activity(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        types: Sequence[str] = (),
        limit: int | None = None,
    ) -> builtins.list[tuple[StoredActivity, ActivityEvent | None]]:
        """Events of the activity log, oldest first (the newest ``limit``)."""
        from kioku.service.activity.log import read_events

        return read_events(self._engine(), since=since, until=until, types=types, limit=limit)

    # -- profiles --------------------------------------------------------------------------

    def profiles(self) -> builtins.list[Memory]:
        """Every profile of this scope (one per person the store knows)."""
        from kioku.service.kinds.profiles import profiles

        return profiles(self._engine())

    def profile(self, person: str) -> Memory:
        """The profile of ``person`` (name or alias, any case); MemoryNotFoundError if none."""
        from kioku.service.kinds.profiles import get_profile

        return get_profile(self._engine(), person)

    def edit_profile(
        self,
        person: str,
        *,
        facts: Sequence[tuple[str, str]] = (),
        remove_facts: Sequence[str] = (),
        likes: Sequence[str] = (),
        dislikes: Sequence[str] = (),
        remove_preferences: Sequence[str] = (),
        aliases: Sequence[str] = (),
    ) -> Memory:
        """Create or correct a profile by hand (facts, preferences, aliases)."""
        from kioku.service.kinds.profiles import edit_profile

        return edit_profile(
            self._engine(),
            person,
            facts=facts,
            remove_facts=remove_facts,
            likes=likes,
            dislikes=dislikes,
            remove_preferences=remove_preferences,
            aliases=aliases,
        )

    # -- immediate encoding at session boundaries ---------------------------------------------

    def finalize_session(self, session_id: str, *, now: datetime | None = None) -> FinalizeReport:
        """End a session now (spec 001 即時符号化): its turns not finalized yet become one
        session-summary episode and what they report resolved is logged (``issue_resolved``),
        in one transaction. Repeating it stores nothing more until new turns come."""
        from kioku.service.encoding import finalize_session

        return finalize_session(self._engine(), session_id, now=now)

    def heartbeat(
        self, *, now: datetime | None = None, idle_minutes: float = 10
    ) -> builtins.list[FinalizeReport]:
        """The periodic check: finalize every session whose last turn is at least
        ``idle_minutes`` old and has turns not finalized yet; what each finalizing did."""
        from kioku.service.encoding import finalize_idle_sessions

        return finalize_idle_sessions(self._engine(), now=now, idle_minutes=idle_minutes)

    def log_event(
        self,
        type: str,
        content: str = "",
        *,
        memory_ids: Sequence[str] = (),
        session_id: str | None = None,
        **fields: str | int | None,
    ) -> None:
        """Append one event to the activity log (spec 001): a tool the agent used
        (``tool_use`` with ``tool=``), a message to another agent, a notification... ``type``
        is one of the spec's event types; ``fields`` are ``from_``, ``to``, ``channel``,
        ``tool``, ``via``, ``summary``, ``task`` and ``exit_code``."""
        from kioku.core.activity.events import EventType
        from kioku.errors import ValidationError
        from kioku.service.activity.log import log_events, make_event

        try:
            kind = EventType(type)
        except ValueError:
            allowed = ", ".join(t.value for t in EventType)
            raise ValidationError("type", type, f"one of {allowed}") from None
        allowed_fields = {"from_", "to", "channel", "tool", "via", "summary", "task", "exit_code"}
        unknown = set(fields) - allowed_fields
        if unknown:
            raise ValidationError(
                "field", sorted(unknown)[0], "one of " + ", ".join(sorted(allowed_fields))
            )
        from dataclasses import replace

        from kioku.core.activity.events import check_event

        engine = self._engine()
        event = make_event(engine, kind, content, memory_ids=memory_ids, session_id=session_id)
        extra: dict[str, Any] = dict(fields)  # names checked above; values by check_event
        log_events(engine, [check_event(replace(event, **extra))])
