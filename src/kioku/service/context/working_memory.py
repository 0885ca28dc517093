"""Working memory: a conversation kept within its token budget, with what leaves it remembered.

Spec 002 keeps a long agent session inside the model's context window: every message is
scored, the least important are removed once the window passes its threshold, and runs of
removed messages become a summary or a notice (:mod:`kioku.core.context.prune`). Spec 003 §3
keeps a short-term thread of recent turns that ends on a topic change, ten idle minutes, a drop
in similarity or the turn cap (:mod:`kioku.core.context.threads`).

kioku joins the two with one promise: **no turn is lost**. A turn (a user message and the
replies and tool results after it) leaves the window when pruning removes any of its messages,
when its thread ends, or when the thread's turn cap pushes it out. A turn that leaves while
its thread goes on waits, pending, for its thread; when the thread ends (or at
:meth:`WorkingMemory.flush`) its turns are filed together (:mod:`.midterm`): the most salient
``long_term_share`` of them (spec 003 §7) are written to long-term memory through the normal
remember path (:meth:`Kioku.remember_turn`'s), and every turn goes to the thread's entry in the
mid-term tier. A thread that grows long is filed in parts of ``max_turns`` waiting turns. A
part that cannot be filed (the analyzer's provider is down, the store is locked) stays pending
and is tried again.

With a store, the window is also kept in it (the ``state`` table, under the session, its user
and its agent) after every change, pending turns included, so a process that crashes or
restarts loses nothing: a ``WorkingMemory`` opened again on the same session continues where
the last one stopped. A part is filed in one transaction with the kept window, so no turn is
written twice. :meth:`WorkingMemory.close` ends the session and clears the kept window.

The similarity rule compares a new user message with the thread's earlier user messages by the
store's embedder. It applies only with a semantic embedding model: the offline embedder hashes
words, so two turns on one topic score about 0.0-0.3 with it and every turn would end its
thread. System messages are instructions, not conversation: they are kept in the window and
never written to long-term memory.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kioku.core.context import (
    ContextPolicy,
    Message,
    PruneStats,
    Stage,
    ThreadEnd,
    TokenCounter,
    assemble,
    gap_text,
    merge_notices,
    message_tokens,
    messages_from_json,
    plan_prune,
    stage_for,
    thread_end,
)
from kioku.errors import ValidationError
from kioku.service.context.keeping import Keeping
from kioku.service.context.midterm import MidTermFiler, TurnSalience, midterm_settings
from kioku.service.context.settings import make_token_counter, thread_policy, window_policy
from kioku.service.context.topic import ThreadTopic
from kioku.service.context.window import (
    SYSTEM,
    USER,
    CachedCounter,
    Entry,
    Turn,
    WorkingMemoryStats,
)

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["WorkingMemory"]

_log = logging.getLogger(__name__)


class WorkingMemory(Keeping):
    """A conversation window within ``max_tokens``; turns that leave it go to ``kioku``.

    ``preset`` is one of spec 002's ``balanced`` (8,000 tokens, prune above 80 % down to
    70 %), ``conservative`` (6,000, 60 % → 50 %) or ``aggressive`` (12,000, 90 % → 80 %);
    ``max_tokens`` overrides the preset's budget. Settings not given come from
    ``kioku``'s ``[context]`` configuration, then from the built-in defaults.

    Without ``kioku`` it only prunes (nothing is remembered) and gaps get notices unless a
    ``summarizer`` is given. With ``kioku``, gaps are summarised by its analyzer (offline or
    LLM); a summarizer that fails leaves a notice instead. ``long_term_share`` is the share
    of each thread's turns written to long-term memory (spec 003 §7: 0.7; 1.0 writes all).
    """

    def __init__(
        self,
        max_tokens: int | None = None,
        preset: str | None = None,
        *,
        kioku: Engine | None = None,
        session_id: str | None = None,
        tokenizer: str | TokenCounter | None = None,
        summaries: bool | None = None,
        summarizer: Callable[[str], str | None] | None = None,
        keep_last: int | None = None,
        thread_similarity: float | None = None,
        thread_idle_minutes: float | None = None,
        max_turns: int | None = None,
        long_term_share: float | None = None,
        auto_prune: bool = True,
        remember: bool = True,
        durable: bool = True,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        cfg = kioku.config.context if kioku is not None else None
        self.policy: ContextPolicy = window_policy(cfg, max_tokens, preset, summaries, keep_last)
        self._counter = CachedCounter(make_token_counter(cfg, tokenizer))
        self.kioku = kioku
        #: Whether turns that leave are written to ``kioku`` (False: they are let go).
        self.remember = remember and kioku is not None
        self.session_id = session_id or f"wm-{secrets.token_hex(6)}"
        self._summarizer = summarizer
        self.auto_prune = auto_prune
        self._topic = ThreadTopic(kioku)
        #: Files ended threads: long-term memory and the mid-term tier (None: nowhere).
        self._filer = (
            MidTermFiler(kioku, self.session_id, midterm_settings(cfg, long_term_share))
            if kioku is not None and self.remember
            else None
        )
        self._clock = clock or (kioku.clock.now if kioku is not None else _local_now)

        self.threads_policy = thread_policy(
            cfg, thread_similarity, thread_idle_minutes, max_turns, semantic=self._topic.semantic
        )

        self._window = []
        self._turns = []  # every turn not yet filed, plus those in the window
        self._turn_count = 0
        self._thread = 1
        self._thread_turns = []
        self._last_at: datetime | None = None
        self._stored = 0
        self._prunes = 0
        self._last_end: ThreadEnd | None = None
        self.last_prune: PruneStats | None = None
        #: Whether the window is kept in the store after every change (see the module).
        self.durable = durable and kioku is not None
        if self.durable:
            self._restore()

    # -- reading ---------------------------------------------------------------------------

    def messages(self) -> list[dict[str, str]]:
        """The window as ``{"role", "content"}`` dicts, oldest first (what to send the model)."""
        return [{"role": e.message.role, "content": e.message.content} for e in self._window]

    @property
    def tokens(self) -> int:
        return sum(message_tokens(self._counter, e.message) for e in self._window)

    def stats(self) -> WorkingMemoryStats:
        tokens = self.tokens
        usage = tokens / self.policy.max_tokens
        window_turns = {id(e.turn) for e in self._window if e.turn is not None}
        pending = sum(1 for t in self._turns if t.left and not t.stored)
        return WorkingMemoryStats(
            messages=len(self._window),
            tokens=tokens,
            max_tokens=self.policy.max_tokens,
            usage=usage,
            stage=stage_for(usage, self.policy),
            turns_seen=self._turn_count,
            turns_in_window=len(window_turns),
            turns_stored=self._stored,
            turns_pending=pending,
            threads=self._thread,
            prunes=self._prunes,
            last_thread_end=self._last_end.value if self._last_end else None,
        )

    def salience(self) -> list[TurnSalience]:
        """Why the latest filed turns went to long-term memory or stayed in the mid-term tier
        only (their salience parts), oldest first; the last 100 of the session."""
        return list(self._filer.decisions) if self._filer is not None else []

    # -- writing ---------------------------------------------------------------------------

    def add(self, role: str, content: str, *, at: datetime | None = None) -> PruneStats | None:
        """Append a message; end the thread or prune when the rules say so.

        Returns the statistics of the pruning this message caused, or None.
        """
        if not isinstance(role, str) or not role.strip():
            raise ValidationError("role", role, "a non-empty string such as 'user'")
        if not isinstance(content, str):
            raise ValidationError("content", content, "a string")
        now = at or self._clock()
        message = Message(role.strip(), content)
        if message.role == USER:
            self._new_turn(message, now)
            entry = Entry(message, self._thread_turns[-1])
        elif message.role == SYSTEM:
            entry = Entry(message, None)
        else:
            turn = self._current_turn(now)
            turn.parts.append((message.role, content))
            entry = Entry(message, turn)
        self._window.append(entry)
        self._last_at = now
        self._store_ready()
        if not self.auto_prune:
            self._save()
            return None
        _, stats = self.prune()  # saves
        return stats if stats.pruned else None

    def extend(self, messages: Iterable[Mapping[str, Any] | Message]) -> PruneStats | None:
        """Add messages (``{"role", "content"}`` dicts or :class:`Message`) in order; the
        statistics of the last pruning they caused, or None."""
        last = None
        for i, m in enumerate(messages):
            if isinstance(m, Message):
                stats = self.add(m.role, m.content)
            else:
                (parsed,) = messages_from_json([m]) if isinstance(m, Mapping) else (None,)
                if parsed is None:
                    raise ValidationError(f"messages[{i}]", m, 'an object {"role", "content"}')
                stats = self.add(parsed.role, parsed.content)
            last = stats or last
        return last

    def prune(self, *, force: bool = False) -> tuple[list[dict[str, str]], PruneStats]:
        """Prune now if the window is past its threshold (or always with ``force``).

        Returns the window (as :meth:`messages`) and the statistics; ``stats.pruned`` says
        whether anything was removed.
        """
        messages = [e.message for e in self._window]
        plan = plan_prune(messages, self.policy, self._counter, force=force)
        if not plan.removes:
            if plan.stage is Stage.WARN:
                _log.debug("working memory at %.0f%% of its budget", plan.usage * 100)
            _, stats = assemble(messages, plan, {}, self._counter, self.policy)
            self._save()
            return self.messages(), stats
        summaries: dict[int, str | None] = {}
        for gap in plan.gaps:
            if gap.summarize:
                summaries[gap.start] = self._summarize(gap_text(messages, gap))
        result, stats = assemble(messages, plan, summaries, self._counter, self.policy)
        self._apply(result)
        self._prunes += 1
        self.last_prune = stats
        self._counter.forget(e.message.content for e in self._window)
        self._store_ready()
        self._save()
        return self.messages(), stats

    def flush(self) -> int:
        """File every turn not yet filed (the session ends): its thread's most salient turns
        go to long-term memory, all of them to the mid-term tier; how many went long-term.

        The window is kept as it is. Raises the error if a part cannot be filed (its turns
        stay pending and are tried again by the next call).
        """
        for turn in self._turns:
            turn.left = True
        try:
            return self._store_ready(complete_all=True, raise_errors=True)
        finally:
            self._save()

    def store_left(self) -> int:
        """File the turns that have left the window, the one in progress too, as a part of
        their thread; how many went to long-term memory. Raises the error if a part cannot be
        filed (it stays pending)."""
        try:
            return self._store_ready(complete_all=True, raise_errors=True)
        finally:
            self._save()

    def close(self) -> int:
        """:meth:`flush`; the window is emptied."""
        stored = self.flush()
        self._window.clear()
        self._turns = [t for t in self._turns if not t.stored]
        self._thread_turns = []
        if self.durable and self.kioku is not None:
            self.kioku.store.set_state(self._state_key, "")  # the session is over
        return stored

    # -- turns and threads -----------------------------------------------------------------

    def _current_turn(self, now: datetime) -> Turn:
        if self._thread_turns:
            return self._thread_turns[-1]
        # replies before any user message (a greeting): a turn of their own
        return self._start_turn(now)

    def _start_turn(self, now: datetime) -> Turn:
        self._turn_count += 1
        turn = Turn(self._turn_count, self._thread, now)
        self._turns.append(turn)
        self._thread_turns.append(turn)
        return turn

    def _new_turn(self, message: Message, now: datetime) -> None:
        if self._thread_turns:
            similarity = self._topic.similarity(message.content, self._similarity_rule)
            end = thread_end(
                previous_at=self._last_at,
                now=now,
                similarity=similarity,
                text=message.content,
                turns=len(self._thread_turns),
                policy=self.threads_policy,
            )
            if end is ThreadEnd.CAP:
                # spec 003 §3.1: the oldest turns leave so the thread keeps max_turns
                excess = len(self._thread_turns) - self.threads_policy.max_turns + 1
                for turn in self._thread_turns[:excess]:
                    self._leave(turn)
                del self._thread_turns[:excess]
                self._last_end = end
            elif end is not None:
                for turn in self._thread_turns:
                    self._leave(turn)
                self._thread_turns = []
                self._thread += 1
                self._topic.reset()
                self._last_end = end
        turn = self._start_turn(now)
        turn.parts.append((USER, message.content))
        self._topic.note(message.content, self._similarity_rule)

    def _leave(self, turn: Turn) -> None:
        turn.left = True
        self._window = [e for e in self._window if e.turn is not turn]

    @property
    def _similarity_rule(self) -> bool:
        return self.threads_policy.similarity_threshold is not None

    # -- pruning -----------------------------------------------------------------------------

    def _apply(self, result: Sequence[Message]) -> None:
        """Make ``result`` the window: messages kept keep their turn; every turn with a
        message missing from it has left; new messages (summaries, notices, shortened
        messages) belong to no turn."""
        by_id = {id(e.message): e for e in self._window}
        window: list[Entry] = []
        kept: set[int] = set()
        for message in merge_notices(result):
            entry = by_id.get(id(message))
            if entry is None:
                window.append(Entry(message, None))
            else:
                window.append(entry)
                kept.add(id(message))
        for entry in self._window:
            if id(entry.message) not in kept and entry.turn is not None:
                entry.turn.left = True
        self._window = window

    def _summarize(self, text: str) -> str | None:
        try:
            if self._summarizer is not None:
                return self._summarizer(text)
            if self.kioku is None:
                return None
            compressed = self.kioku.analyzer.summarize("", text)
            return compressed.content or compressed.trigger or None
        except Exception as exc:  # spec 002 §8.1: a failed summary becomes a notice
            _log.warning("gap summary failed, a notice stands in: %s", exc)
            return None

    # -- async use ---------------------------------------------------------------------------

    async def aadd(
        self, role: str, content: str, *, at: datetime | None = None
    ) -> PruneStats | None:
        """:meth:`add` for an ``async`` agent loop. Pruning is CPU work of milliseconds; a
        gap summary by an LLM analyzer blocks for its request, so turn ``summaries`` off (or
        give a fast ``summarizer``) in latency-sensitive loops."""
        return self.add(role, content, at=at)


def _local_now() -> datetime:
    return datetime.now().astimezone()
