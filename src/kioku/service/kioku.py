"""``Kioku``: the facade. Interfaces call it; each method delegates to a use case.

The use cases live in the capability packages beside this module (``remember``, ``recall``,
``lifecycle``, ``erasure``, ``context``, ``inspection``) as functions of an
:class:`~kioku.service.engine.Engine`, which a ``Kioku`` is (its parts come from
:class:`~kioku.service.runtime.Runtime`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from kioku.core.model import Memory
from kioku.ports.store import MemoryFilter, Order
from kioku.service.mind import Mind
from kioku.service.recall import pipeline
from kioku.service.runtime import Runtime
from kioku.service.scope import get_owned, scoped
from kioku.service.sleep import Sleep

# Only what opening and recall need is imported up front: Claude Code's hook opens a Kioku
# in a fresh process on every prompt. The rest is imported by the methods that use it.
if TYPE_CHECKING:
    from kioku.core.cost import CostReport
    from kioku.core.explain import RetentionExplanation
    from kioku.core.lifecycle.log import LogEntry
    from kioku.ports.analyzer import Analysis, Compressed
    from kioku.ports.erasure import BackupRecord
    from kioku.ports.store import IntegrityReport
    from kioku.service.erasure.erasure import ErasurePlan, ErasureReport
    from kioku.service.inspection.reports import Stats
    from kioku.service.lifecycle.batch_state import BatchReport
    from kioku.service.recall.results import RecallResult
    from kioku.service.remember.storing import PreparedTurn
    from kioku.service.remember.turns import RememberedTurn

__all__ = ["Kioku"]


class Kioku(Runtime, Mind, Sleep):
    """Long-term memory for one owner (``user_id``/``agent_id``) on one store.

    Open it with :meth:`open` (a home directory) or build it on any Store. The store is
    opened lazily, on the first call that needs it, so invalid input fails before
    anything is created on disk.
    """

    # -- remembering -----------------------------------------------------------------------

    @overload
    def remember(self, memory: Memory, /) -> Memory: ...

    @overload
    def remember(
        self,
        trigger: str,
        content: str,
        /,
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
    ) -> Memory: ...

    def remember(
        self,
        trigger: str | Memory,
        content: str | None = None,
        /,
        *,
        intensity: int | None = None,
        category: str | None = None,
        **fields: Any,
    ) -> Memory:
        """Store a new memory and return it as stored.

        Either a fully specified :class:`Memory` (kept as given, owned by this scope; an
        empty id gets a fresh one), or trigger/content plus emotion fields, from which the
        spec's initial values are derived (see
        :func:`kioku.service.remember.drafts.build_memory`).
        """
        from kioku.service.remember import storing

        if isinstance(trigger, Memory):
            return storing.insert(self, trigger, generated_id=not trigger.id)
        if content is None or intensity is None or category is None:
            raise TypeError("remember(trigger, content, intensity=..., category=...) is required")
        return storing.remember(
            self, trigger, content, intensity=intensity, category=category, **fields
        )

    def analyze(self, user: str, assistant: str = "") -> Analysis:
        """What the analyzer understands of a turn, without storing anything."""
        from kioku.service.remember.analysis import analyze

        return analyze(self, user, assistant)

    def compress(self, trigger: str, content: str, level: int) -> Compressed:
        """The text a memory would have at ``level`` (2: summary, 3: keywords), not stored."""
        from kioku.service.remember.analysis import compress

        return compress(self, trigger, content, level)

    def remember_turn(
        self,
        user: str,
        assistant: str = "",
        *,
        at: datetime | None = None,
        session_id: str | None = None,
        source_ids: Iterable[str] = (),
        source_timestamps: Iterable[datetime] = (),
    ) -> RememberedTurn:
        """Analyze one turn (user input + assistant reply) and store it as one memory.

        Returns ``(memory, analysis)``; its ``known`` is True when the turn was already
        stored (an exact duplicate, see :mod:`kioku.service.remember.turns`), and the memory
        is then the one stored before. A turn with no text on either side, an ``at`` before
        1970 or more than a day ahead, or a blank session or source id raises ValidationError.

        The turn is never lost: a failing LLM provider falls back to the offline analyzer,
        and a turn that asks to be remembered while the protected-memory cap is reached is
        stored unprotected, with a warning.
        """
        from kioku.service.remember.storing import remember_turn

        return remember_turn(
            self,
            user,
            assistant,
            at=at,
            session_id=session_id,
            source_ids=source_ids,
            source_timestamps=source_timestamps,
        )

    def prepare_turn(
        self,
        user: str,
        assistant: str = "",
        *,
        at: datetime | None = None,
        session_id: str | None = None,
        source_ids: Iterable[str] = (),
        source_timestamps: Iterable[datetime] = (),
    ) -> PreparedTurn:
        """The half of :meth:`remember_turn` that takes no lock: the turn's checks, its
        analysis, its memory and vector. Store it with :meth:`store_turn`, for example many
        in one ``store.atomic()`` block, so the write lock is held only for the writes."""
        from kioku.service.remember.storing import prepare_turn

        return prepare_turn(
            self,
            user,
            assistant,
            at=at,
            session_id=session_id,
            source_ids=source_ids,
            source_timestamps=source_timestamps,
        )

    def store_turn(self, turn: PreparedTurn) -> RememberedTurn:
        """Store a turn made by :meth:`prepare_turn` (the other half of
        :meth:`remember_turn`), in the caller's transaction if there is one."""
        from kioku.service.remember.storing import store_turn

        return store_turn(self, turn)

    def store_turns(self, turns: Sequence[PreparedTurn]) -> list[RememberedTurn]:
        """Store turns made by :meth:`prepare_turn` in one transaction (the caller's if there
        is one): what :meth:`store_turn` on each in order stores, with the writes of the
        turns shared (one insert of their memories, one flush of the lexical index), as an
        import of history does. One result per turn, in order."""
        from kioku.service.remember.batch import store_turns

        return store_turns(self, turns)

    # -- reading ---------------------------------------------------------------------------

    def _scoped(self, **criteria: object) -> MemoryFilter:
        return scoped(self, **criteria)

    def get(self, memory_id: str) -> Memory:
        """The memory with this id in this scope; MemoryNotFoundError otherwise."""
        return get_owned(self, memory_id)

    def list(
        self,
        *,
        level: int | Iterable[int] | None = None,
        category: str | Iterable[str] | None = None,
        archived: bool | None = False,
        protected: bool | None = None,
        kind: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: Order = Order.CREATED_DESC,
    ) -> builtins.list[Memory]:
        """Memories of this scope, newest first. Archived ones only with ``archived=True``
        (or ``None`` for both)."""
        from kioku.service.inspection.reading import list_memories

        return list_memories(
            self,
            level=level,
            category=category,
            archived=archived,
            protected=protected,
            kind=kind,
            session_id=session_id,
            limit=limit,
            offset=offset,
            order=order,
        )

    def count(self, *, archived: bool | None = None, kind: str | None = "episode") -> int:
        """How many memories of ``kind`` this scope has (episodes unless told; None: every
        kind), only archived, only active, or all for ``archived=None``."""
        from kioku.service.inspection.reading import count_memories

        return count_memories(self, archived=archived, kind=kind)

    def explain(self, memory: Memory | str) -> RetentionExplanation:
        """Why the memory has its score and level, and when it will fade if never recalled."""
        from kioku.service.inspection.reading import explain

        return explain(self, memory)

    def stats(self) -> Stats:
        """Counts per level and category, protection and the store size, for this scope."""
        from kioku.service.inspection.reports import stats

        return stats(self)

    def cost(self, since: datetime | None = None) -> CostReport:
        """Token usage of paid providers and its cost at the configured prices."""
        from kioku.service.inspection.reports import cost

        return cost(self, since)

    def recall(
        self,
        query: str,
        *,
        top_k: int | None = None,
        session_id: str | None = None,
        mark: bool = True,
        at: datetime | None = None,
        mood_shift: bool | None = None,
    ) -> RecallResult:
        """The memories that matter for ``query``, ranked, with the ``<memories>`` block.

        Recalled memories are marked for reinforcement at the next batch and archived ones
        asked to be revived, unless ``mark=False``. With ``session_id`` the session's current
        emotion (the last memory remembered or recalled in it) adds emotional resonance.
        ``at`` recalls as of another moment (recency is measured from it). A ``session_id``
        that is not a storable id (blank, too long, control characters) raises ValidationError.
        ``mood_shift`` turns the mood shift on or off for this recall (None: ``mood.shift``).
        """
        return pipeline.recall(
            self,
            query,
            top_k=top_k,
            session_id=session_id,
            mark=mark,
            at=at,
            mood_shift=mood_shift,
        )

    def leave_traces(
        self, result: RecallResult, *, session_id: str | None = None, at: datetime | None = None
    ) -> None:
        """Mark a recall made with ``mark=False`` as if it had been made with ``mark=True``
        (a server answers first and writes the marks after)."""
        from kioku.service.recall.traces import leave_traces

        leave_traces(self, result, session_id=session_id, at=at)

    def known_source_ids(self) -> set[str]:
        """Every provenance source id of this scope's memories (for idempotent imports); ``in``
        is also True for the source ids of erased memories, which are never stored again."""
        from kioku.service.remember.known import known_source_ids

        return known_source_ids(self)

    def reembed(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Give every memory of this scope a vector of the current embedder (those with another
        model's vector or none); returns how many changed. Vectors are never mixed: recall
        only compares vectors of the current model."""
        from kioku.service.vectors import reembed

        return reembed(self, progress)

    # -- protection and erasure --------------------------------------------------------------

    def protect(self, memory_id: str) -> Memory:
        """Protect a memory from compression, archiving and deletion (保護記憶).

        At ``protection.max_protected_memories`` this refuses with a ProtectionLimitError
        that lists the oldest protected memories: unprotect one of them, then retry.
        """
        from kioku.service.remember.protection import protect

        return protect(self, memory_id)

    def unprotect(self, memory_id: str) -> Memory:
        """Remove a memory's protection; it fades like any other from the next batch."""
        from kioku.service.remember.protection import unprotect

        return unprotect(self, memory_id)

    def forget(self, memory_id: str, *, force: bool = False) -> Memory:
        """Erase a memory with every relation to or from it; see :meth:`erase`.

        A protected memory is erased only with ``force=True``. Returns the erased memory.
        """
        report = self.erase(memory_id, force=force)
        assert report.memory is not None
        return report.memory

    def erase(self, memory_id: str, *, force: bool = False) -> ErasureReport:
        """Erase a memory with every relation to or from it, keep a tombstone of its source
        ids (no import stores that turn again), audit it and scrub the store's files; the
        report names the backups that still hold it (:mod:`kioku.service.erasure.erasure`)."""
        from kioku.service.erasure.erasure import forget_memory

        return forget_memory(self, memory_id, force=force)

    def plan_erasure(self, user_id: str | None = None) -> ErasurePlan:
        """What :meth:`erase_user` would delete for ``user_id`` (default this scope's user,
        every agent): counts, never text, and the confirmation token it needs."""
        from kioku.service.erasure.erasure import plan_erasure

        return plan_erasure(self, self.user_id if user_id is None else user_id)

    def erase_user(self, user_id: str, token: str) -> ErasureReport:
        """Erase everything of ``user_id`` (spec 003 §9.1), given the token of
        :meth:`plan_erasure` for exactly the memories there are now."""
        from kioku.service.erasure.erasure import erase_user

        return erase_user(self, user_id, token)

    # -- the nightly batch -----------------------------------------------------------------

    def batch(
        self,
        *,
        now: datetime | None = None,
        dry_run: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
        auto: bool = False,
        wait_for_vectors: bool = False,
    ) -> BatchReport:
        """Apply every due daily batch up to ``now`` (see :mod:`kioku.service.lifecycle.batch`).

        A second batch started while one runs returns at once with status
        ``already_running``; ``dry_run`` plans the next due day and writes nothing. ``auto``
        (the scheduler's and the overdue fallback's batch) catches up at most
        ``batch.max_auto_catch_up_days`` days; a ``now`` before the last batch day does nothing.
        ``wait_for_vectors``: return only when the vector search structures the store builds
        in the background after the batch are ready (the SQLite store's HNSW graph, with the
        ``ann`` extra past ``retrieval.ann_min_vectors``); a process that exits right after
        the batch should wait, a long-running one need not.
        """
        from kioku.service.lifecycle.batch import batch

        return batch(
            self,
            now=now,
            dry_run=dry_run,
            progress=progress,
            auto=auto,
            wait_for_vectors=wait_for_vectors,
        )

    def warm_vector_cache(self) -> None:
        """Build the vector cache of the configured model now, after writes, so that the next
        process (a hook answering a prompt) finds its file ready rather than rebuilding it.
        Best-effort: trouble is a warning, the cache is rebuilt at the next search anyway."""
        from kioku.service.vectors import warm_vector_cache

        warm_vector_cache(self)

    def lifecycle_log(
        self,
        *,
        memory_id: str | None = None,
        since: datetime | None = None,
        events: Sequence[str] | None = None,
        limit: int | None = None,
        all_scopes: bool = False,
    ) -> builtins.list[LogEntry]:
        """Lifecycle log rows of this scope (or every scope), oldest first."""
        from kioku.service.lifecycle.history import lifecycle_log

        return lifecycle_log(
            self,
            memory_id=memory_id,
            since=since,
            events=events,
            limit=limit,
            all_scopes=all_scopes,
        )

    # -- maintenance -----------------------------------------------------------------------

    def check(self) -> IntegrityReport:
        """Integrity, schema version and file permissions of the store."""
        return self.store.check_integrity()

    def backup(self, target: Path, *, overwrite: bool = False) -> BackupRecord:
        """Write a consistent copy of the store to ``target``, safe while others write (see
        :func:`kioku.service.erasure.backups.resolve_target` for the checks on ``target`` the CLI
        makes)."""
        return self.store.backup(target, overwrite=overwrite)
