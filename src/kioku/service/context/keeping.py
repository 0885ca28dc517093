"""What a working memory keeps: its turns filed when they are ready (long-term memory and the
mid-term tier, :mod:`.midterm`) and its window kept in the store after every change.

:class:`Keeping` is a part of :class:`~.working_memory.WorkingMemory`, kept in its own module
so that one stays short; the module docstring there says what is promised.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from kioku.service.context.window import Entry, Turn, read_window, window_json

if TYPE_CHECKING:
    from kioku.core.context import ThreadPolicy
    from kioku.service.context.midterm import MidTermFiler
    from kioku.service.engine import Engine

__all__ = ["Keeping", "ready_parts"]

_log = logging.getLogger("kioku.service.context.working_memory")


def ready_parts(
    turns: Iterable[Turn],
    thread: int,
    current: Turn | None,
    *,
    complete_all: bool,
    part_size: int,
) -> list[list[Turn]]:
    """The parts ready to be filed, oldest first: the turns waiting of every thread that has
    ended, and those of the current ``thread`` when there are ``part_size`` of them (or with
    ``complete_all``). The ``current`` turn is still growing: it waits unless ``complete_all``.
    """
    waiting: dict[int, list[Turn]] = {}
    for turn in turns:
        if turn.left and not turn.stored and (turn is not current or complete_all):
            waiting.setdefault(turn.thread, []).append(turn)
    return [
        sorted(part, key=lambda t: t.number)
        for number, part in sorted(waiting.items())
        if number != thread or complete_all or len(part) >= part_size
    ]


class Keeping:
    """Filing ready turns and keeping the window in the store (mixed into WorkingMemory)."""

    kioku: Engine | None
    session_id: str
    durable: bool
    threads_policy: ThreadPolicy
    _filer: MidTermFiler | None
    _window: list[Entry]
    _turns: list[Turn]
    _thread_turns: list[Turn]
    _thread: int
    _turn_count: int
    _last_at: datetime | None
    _stored: int
    _prunes: int

    # -- filing ------------------------------------------------------------------------------

    def _store_ready(self, *, complete_all: bool = False, raise_errors: bool = False) -> int:
        """File the parts that are ready (see :func:`ready_parts`)."""
        current = self._thread_turns[-1] if self._thread_turns else None
        parts = ready_parts(
            self._turns,
            self._thread,
            current,
            complete_all=complete_all or self._filer is None,
            part_size=self.threads_policy.max_turns,
        )
        stored = 0
        for part in parts:
            if self._filer is None:
                for turn in part:
                    turn.stored = True  # nowhere to write: it is simply let go
                continue
            try:
                done = self._filer.file(part, self._keep if self.durable else None)
            except Exception as exc:
                if raise_errors:
                    raise
                _log.warning(
                    "%d turn(s) of thread %d stay pending, not yet filed: %s",
                    len(part),
                    part[0].thread,
                    exc,
                )
                continue
            stored += done
            self._stored += done
        in_window = {id(e.turn) for e in self._window if e.turn is not None}
        self._turns = [t for t in self._turns if not t.stored or id(t) in in_window]
        return stored

    # -- kept in the store -------------------------------------------------------------------

    @property
    def _state_key(self) -> str:
        assert self.kioku is not None
        return f"working_memory:{self.kioku.user_id}:{self.kioku.agent_id}:{self.session_id}"

    def _save(self) -> None:
        """Keep the window and every turn not yet filed in the store (one small write)."""
        if not self.durable or self.kioku is None:
            return
        try:
            self._keep(0)
        except Exception as exc:  # the conversation goes on; the next change tries again
            _log.warning("working memory not kept in the store: %s", exc)

    def _keep(self, stored: int) -> None:
        """Keep the window with ``stored`` more turns counted as stored; raises."""
        assert self.kioku is not None
        kept = window_json(
            turn_count=self._turn_count,
            thread=self._thread,
            last_at=self._last_at,
            stored=self._stored + stored,
            prunes=self._prunes,
            turns=(*self._turns, *self._thread_turns),
            thread_turns=self._thread_turns,
            window=self._window,
        )
        if self._filer is not None:
            kept = self._filer.kept(kept)
        self.kioku.store.set_state(self._state_key, kept)

    def _restore(self) -> None:
        """Continue the session kept in the store, if any."""
        assert self.kioku is not None
        raw = self.kioku.store.get_state(self._state_key)
        if not raw:
            return
        try:
            data, turns, window, thread_turns, last_at = read_window(raw)
        except (ValueError, KeyError, TypeError) as exc:
            _log.warning("the kept working memory of %s is unreadable: %s", self.session_id, exc)
            return
        pending = [t for t in turns.values() if t.left and not t.stored]
        if pending:  # kept by a version that wrote turns one by one, or erased: never twice
            from kioku.service.remember.known import known_source_ids

            known = known_source_ids(self.kioku)
            for turn in pending:
                if f"{self.session_id}:{turn.number}" in known:
                    turn.stored = True
        self._window = window
        self._thread_turns = thread_turns
        in_window = {id(e.turn) for e in window if e.turn is not None}
        ordered = sorted(turns.values(), key=lambda t: t.number)
        self._turns = [t for t in ordered if not t.stored or id(t) in in_window]
        self._turn_count = int(data["turn_count"])
        self._thread = int(data["thread"])
        self._last_at = last_at
        self._stored = int(data["stored"])
        self._prunes = int(data["prunes"])
        if self._filer is not None:
            self._filer.restore(data)
