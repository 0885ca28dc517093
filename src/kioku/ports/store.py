"""The Store port: how the service keeps memories, whatever the database.

No adapter type (sqlite3, psycopg) appears here. Every adapter passes the same contract
suite (``tests/contract``).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kioku.core.kinds import Details
from kioku.core.model import Embedding, Memory, Relation, Valence
from kioku.ports.store_records import (
    ActivityFields,
    ActivityQuery,
    ActivityRow,
    ApiKey,
    ConsolidationDoneError,
    ConsolidationRun,
    MemoryVersion,
    MidTermEntry,
    Original,
    Resolution,
    StoredActivity,
    VectorIndexReport,
)
from kioku.records import Record

if TYPE_CHECKING:  # the batch's types and numpy: a recall in a hook's fresh process loads none
    import numpy as np
    import numpy.typing as npt

    from kioku.core.lifecycle.links import Link
    from kioku.core.lifecycle.log import LogEntry
    from kioku.core.lifecycle.plan import ArchiveSelect, Snapshot
    from kioku.core.usage import Usage, UsageTotal
    from kioku.ports.erasure import AuditEntry, BackupRecord, ScrubReport, Tombstones

__all__ = [
    "UNSET",
    "ActivityFields",
    "ActivityQuery",
    "ActivityRow",
    "ApiKey",
    "ConsolidationDoneError",
    "ConsolidationRun",
    "IntegrityReport",
    "MemoryFilter",
    "MemoryPatch",
    "MemoryVersion",
    "MidTermEntry",
    "Order",
    "Original",
    "Resolution",
    "ScoringFields",
    "Store",
    "StoreStats",
    "StoredActivity",
    "Unset",
    "VectorIndexReport",
]


class Unset(StrEnum):
    """Marker for "leave this field as it is" in a :class:`MemoryPatch`."""

    UNSET = "unset"


UNSET = Unset.UNSET


class Order(StrEnum):
    CREATED_DESC = "created_desc"
    CREATED_ASC = "created_asc"
    SCORE_DESC = "score_desc"
    SCORE_ASC = "score_asc"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MemoryFilter(Record):
    """Which memories to read. ``None`` means "any" for every criterion.

    ``user_id``/``agent_id`` scope the query; the service always sets them.
    """

    user_id: str | None = None
    agent_id: str | None = None
    levels: tuple[int, ...] | None = None
    categories: tuple[str, ...] | None = None
    archived: bool | None = None
    protected: bool | None = None
    recalled_since_last_batch: bool | None = None
    revival_requested: bool | None = None
    kind: str | None = None
    #: Any of these kinds (with ``kind``, both must hold).
    kinds: tuple[str, ...] | None = None
    session_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    limit: int | None = None
    offset: int = 0
    order: Order = Order.CREATED_DESC


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MemoryPatch(Record):
    """A change to some fields of one memory. Only these fields can ever be updated.

    Fields left :data:`UNSET` are not touched. ``id``, ``created``, scope and provenance are
    not updatable: a memory's identity and origin never change.
    """

    trigger: str | Unset = UNSET
    content: str | Unset = UNSET
    memory_days: float | Unset = UNSET
    recalled_since_last_batch: bool | Unset = UNSET
    recall_count: int | Unset = UNSET
    emotional_intensity: int | Unset = UNSET
    emotional_valence: str | Unset = UNSET
    emotional_arousal: int | Unset = UNSET
    emotional_tags: tuple[str, ...] | Unset = UNSET
    decay_coefficient: float | Unset = UNSET
    category: str | Unset = UNSET
    keywords: tuple[str, ...] | Unset = UNSET
    current_level: int | Unset = UNSET
    retention_score: float | Unset = UNSET
    archived_at: datetime | Unset | None = UNSET
    protected: bool | Unset = UNSET
    revival_requested: bool | Unset = UNSET
    revival_requested_at: datetime | Unset | None = UNSET
    embedding: Embedding | Unset | None = UNSET
    relations: tuple[Relation, ...] | Unset = UNSET
    details: Details | Unset | None = UNSET
    last_access: datetime | Unset | None = UNSET
    low_activity_since: datetime | Unset | None = UNSET

    def changed(self) -> dict[str, object]:
        """The fields this patch sets, by name."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) is not UNSET
        }


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ScoringFields(Record):
    """What recall needs to rank a candidate, without decoding the whole memory."""

    id: str
    created: datetime
    retention_score: float
    recall_count: int
    category: str
    valence: Valence
    arousal: int
    tags: tuple[str, ...]
    archived: bool
    kind: str = "episode"
    #: The emotional intensity (0-100), for the mood limiter.
    intensity: int = 0
    #: The conversation session the memory was recorded in (None: none), for the
    #: conversation context recall lends.
    session_id: str | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class StoreStats(Record):
    """Counts of one scope's episodes (levels, categories, protection, the archive), and of
    its memories of every kind in ``by_kind``."""

    total: int
    by_level: dict[int, int]
    by_category: dict[str, int]
    protected: int
    archived: int
    revival_requested: int
    size_bytes: int
    by_kind: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IntegrityReport(Record):
    """What a store's integrity check found."""

    ok: bool
    schema_version: int
    expected_schema_version: int
    problems: tuple[str, ...] = ()
    details: dict[str, object] = field(default_factory=dict)


@runtime_checkable
class Store(Protocol):
    """Persistence for memories, relations and a small key/value state."""

    def close(self) -> None: ...

    def atomic(self, *, durable: bool = True) -> AbstractContextManager[None]:
        """A transaction: every store call inside it commits together or not at all.

        Writes inside take the write lock at the start, so a read-check-write sequence
        (such as the protected-memory cap) is safe against other processes.

        ``durable=False`` is for usage records (what a recall marks): the commit may return
        before it is flushed to disk, so a crash of the machine or the database server right
        after it may lose the whole transaction, never a part of it nor any other. Only the
        outermost level decides; inner levels join the transaction as it is.
        """
        ...

    def reading(self) -> AbstractContextManager[None]:
        """One consistent snapshot for every read inside: they all see the store as it was
        when the block began, and none of them opens a transaction of its own (a store with a
        read replica still sends its searches there). Re-entrant; inside ``atomic()`` the
        reads are that transaction's. No writes inside it."""
        ...

    @property
    def parallel_search(self) -> bool:
        """True when a search started now on another thread may run beside this thread's
        reads, on a connection of its own, and see what they see: never inside ``atomic()``
        or ``reading()`` (the other thread would not see this transaction or snapshot)."""
        ...

    def add(self, memory: Memory) -> None:
        """Insert a new memory (with its relations). Raises DuplicateIdError on a taken id."""
        ...

    def add_many(self, memories: Sequence[Memory]) -> None:
        """Insert many memories in one transaction."""
        ...

    def get(self, memory_id: str) -> Memory | None: ...

    def get_many(self, memory_ids: Sequence[str]) -> list[Memory]: ...

    def scoring_fields(self, memory_ids: Sequence[str]) -> builtins.list[ScoringFields]:
        """The ranking fields of the memories that exist among ``memory_ids`` (any order)."""
        ...

    def list(self, flt: MemoryFilter) -> list[Memory]: ...

    def iter(self, flt: MemoryFilter, batch_size: int = 1000) -> Iterator[Memory]:
        """Like :meth:`list`, in batches, for large scans."""
        ...

    def count(self, flt: MemoryFilter) -> int: ...

    def source_ids(self, flt: MemoryFilter) -> set[str]:
        """Every provenance source id of the memories selected by ``flt`` (read without
        decoding the memories)."""
        ...

    def same_text(self, trigger: str, content: str, flt: MemoryFilter) -> builtins.list[str]:
        """Ids of the memories selected by ``flt`` whose trigger and content are exactly
        ``trigger`` and ``content`` (what an exact-duplicate check needs, without reading
        every memory of the window)."""
        ...

    def update(self, memory_id: str, patch: MemoryPatch) -> bool:
        """Apply ``patch``; False when no memory has that id."""
        ...

    def delete(self, memory_id: str) -> bool:
        """Erase a memory and every relation to or from it; False when it did not exist."""
        ...

    def mark_recalled(self, memory_ids: Sequence[str], at: datetime | None = None) -> int:
        """Set ``recalled_since_last_batch`` on the active memories among ``memory_ids``, and
        their last access to ``at`` (default now) unless it is later already; how many."""
        ...

    def referencing(self, memory_id: str) -> builtins.list[str]:
        """Ids of memories whose relations point at ``memory_id`` (逆方向の参照)."""
        ...

    def referencing_many(self, memory_ids: Sequence[str]) -> dict[str, builtins.list[str]]:
        """:meth:`referencing` of each of ``memory_ids`` at once, in one read: each id that
        some memory points at, with those memories' ids in the order :meth:`referencing`
        gives; ids nothing points at are left out."""
        ...

    def get_state(self, key: str) -> str | None: ...

    def search_lexical(
        self, terms: Sequence[str], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """Memories matching any of ``terms`` (from :func:`kioku.adapters.text.lexical.
        index_terms`): ``(id, score)``, higher better (BM25), at most ``limit``. An adapter
        may leave out terms so common that scoring them would be slow and tell little.
        Only the scope (``user_id``, ``agent_id``) and ``archived`` of ``flt`` apply."""
        ...

    def term_documents(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """About how many memories the lexical index holds, and in how many of them each of
        ``terms`` occurs: the counts the IDF of :meth:`search_lexical`'s BM25 is made of
        (every scope, as BM25's own). A term it does not know counts 0."""
        ...

    def known_terms(
        self, terms: Sequence[str], flt: MemoryFilter, limit: int | None = None
    ) -> frozenset[str]:
        """Which of ``terms`` (lexical terms, as :func:`kioku.adapters.text.lexical.index_terms`
        makes them) at least one memory selected by ``flt`` (its scope and ``archived``) is
        indexed under. Other owners' memories never count. With ``limit``, the search stops
        once it has found that many (any of them): ``limit=1`` asks whether any is known."""
        ...

    def indexed_terms(self, memory_ids: Sequence[str]) -> dict[str, frozenset[str]]:
        """The lexical terms each of ``memory_ids`` is indexed under (those of
        :func:`kioku.adapters.text.lexical.index_terms`); a memory not indexed is left out."""
        ...

    def vector_search(
        self, model: str, query: Sequence[float], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """Nearest memories by cosine similarity among vectors of ``model`` only: ``(id,
        similarity)`` best first, at most ``limit``. Only the scope and ``archived`` of ``flt``
        apply. Memories without a vector, or with one of another model, are never returned."""
        ...

    def save_vector_cache(self, model: str, *, wait: bool = False) -> None:
        """Build the search cache of ``model``'s vectors now and keep it where the next
        process finds it (a store without such a cache does nothing). Work the store does
        in the background for it (the SQLite store's HNSW graph) goes on after the call
        returns, unless ``wait``: then the call returns when it is done. Never with ``wait``
        inside ``atomic()``."""
        ...

    def embedding_models(self, flt: MemoryFilter) -> dict[str | None, int]:
        """How many memories (in the scope and ``archived`` of ``flt``) have vectors of each
        model; ``None`` counts memories without a vector."""
        ...

    def record_usage(self, usage: Usage) -> None:
        """Keep one provider call's token usage."""
        ...

    def usage_totals(self, since: datetime | None = None) -> builtins.list[UsageTotal]:
        """Usage summed per provider, model and purpose, since ``since`` (all time if None)."""
        ...

    def set_state(self, key: str, value: str) -> None: ...

    # The nightly batch (kioku.service.lifecycle.batch); the log rows are spec 004's lifecycle log.

    def batch_snapshot(self, until: datetime, select: ArchiveSelect | None = None) -> Snapshot:
        """Every active memory made at or before ``until``, as columns, with every relation;
        of the archive, the memories ``select`` names and every scope's counts (without
        ``select``: every archived memory)."""
        ...

    def write_scores(
        self,
        ids: Sequence[str],
        memory_days: Sequence[float],
        coefficient: Sequence[float],
        recall_count: Sequence[int],
        score: Sequence[float],
    ) -> None:
        """Set the day's numbers of many memories and clear their recall flags."""
        ...

    def add_links(self, links: Sequence[Link], at: datetime) -> None:
        """Add relations (an existing source→target pair is left as it is)."""
        ...

    def remove_links(self, pairs: Sequence[tuple[str, str]]) -> None:
        """Remove the relations ``source → target`` named."""
        ...

    def link_vectors(
        self, model: str, user_id: str, agent_id: str, ids: Sequence[str] | None
    ) -> tuple[builtins.list[str], npt.NDArray[np.float32]]:
        """Unit vectors of ``model`` of the active memories of one scope (all, or ``ids``)."""
        ...

    def append_log(self, entries: Sequence[LogEntry]) -> None:
        """Append lifecycle log rows."""
        ...

    def read_log(
        self,
        *,
        memory_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        since: datetime | None = None,
        events: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> builtins.list[LogEntry]:
        """Lifecycle log rows, oldest first (the newest ``limit`` when given)."""
        ...

    def stats(self, user_id: str | None, agent_id: str | None) -> StoreStats: ...

    def check_integrity(self) -> IntegrityReport: ...

    def backup(self, target: Path, *, overwrite: bool = False) -> BackupRecord:
        """Write a consistent copy of the whole store to ``target``, safe while others write,
        and record in the backups manifest what the copy holds. The copy is complete before
        it takes ``target``'s name; an existing ``target`` is replaced only with ``overwrite``."""
        ...

    # Erasure (kioku.service.erasure.erasure): tombstones, the audit log, the backups manifest.

    def delete_many(self, memory_ids: Sequence[str]) -> int:
        """Erase these memories (with their relations, their kept originals, and their text
        in every activity event that quoted them) in one transaction; how many existed."""
        ...

    def tombstones(self) -> Tombstones:
        """The source ids of erased memories, as keyed digests."""
        ...

    def add_tombstones(self, source_ids: Sequence[str], at: datetime) -> int:
        """Remember that these source ids were erased; a memory carrying one of them is
        refused by :meth:`add` with ErasedSourceError from then on. How many were new."""
        ...

    def secret_digest(self, text: str) -> str:
        """A keyed digest of ``text`` with the store's own secret (stable for this store)."""
        ...

    def append_audit(
        self, at: datetime, action: str, subject: str, items: int, details: dict[str, object]
    ) -> int:
        """Append one row to the append-only erasure audit log; its sequence number."""
        ...

    def read_audit(self, limit: int | None = None) -> builtins.list[AuditEntry]:
        """Audit rows, oldest first (the newest ``limit`` when given)."""
        ...

    def backups(self) -> builtins.list[BackupRecord]:
        """Every backup recorded in the manifest, oldest first."""
        ...

    def backups_containing(self, memory_ids: Sequence[str]) -> builtins.list[BackupRecord]:
        """The recorded backups that hold at least one of ``memory_ids``."""
        ...

    def delete_log(self, user_id: str) -> int:
        """Delete every lifecycle log row of ``user_id``, and what consolidation keeps of the
        user (as :meth:`delete_consolidation`); how many lifecycle log rows."""
        ...

    def delete_state(self, prefix: str) -> int:
        """Delete the state rows whose key starts with ``prefix``; how many."""
        ...

    def delete_activity(self, user_id: str) -> int:
        """Delete every activity event of ``user_id``; how many."""
        ...

    # Cold storage (spec 003 §8.1 policy B): originals only deliberate search reads.

    def put_originals(self, items: Sequence[Original], at: datetime) -> int:
        """Keep the original text of these memories, unless one is kept already; how many
        were new. Deleting a memory deletes its original."""
        ...

    def originals(self, memory_ids: Sequence[str]) -> dict[str, Original]:
        """The kept originals of these memories, by id."""
        ...

    def search_originals(
        self, terms: Sequence[str], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        """``(memory id, score)`` of the best lexical matches among originals whose memory
        meets the scope, kind and ``archived`` criteria of ``flt``; higher is better."""
        ...

    # The unified activity log (spec 001).

    def append_activity(self, rows: Sequence[ActivityRow]) -> builtins.list[int]:
        """Append events in one transaction; their sequence numbers."""
        ...

    def read_activity(self, query: ActivityQuery) -> builtins.list[StoredActivity]:
        """Events of the query, oldest first (the newest ``limit`` of them when given)."""
        ...

    # Consolidation, active forgetting, resolution propagation and the mid-term tier (schema 9).

    def consolidation_done(self, kind: str, period: str, user_id: str, agent_id: str) -> bool:
        """Whether the ``kind`` consolidation of ``period`` is recorded for this scope."""
        ...

    def record_consolidation(self, run: ConsolidationRun) -> None:
        """Record a finished consolidation. A second record of the same kind, period and
        scope raises :class:`ConsolidationDoneError`, and inside :meth:`atomic` the whole
        transaction (the run's writes with it) is then rolled back."""
        ...

    def consolidation_runs(
        self, user_id: str, agent_id: str, kind: str | None = None, limit: int = 100
    ) -> builtins.list[ConsolidationRun]:
        """The scope's recorded consolidations (of ``kind``, or all), newest first."""
        ...

    def save_version(self, memory: Memory, at: datetime) -> int:
        """Keep ``memory``'s text and details as they are now, with their version number
        (the details' ``version``, 1 when they have none); the row's id. The memory must be
        in the store: deleting it deletes its versions."""
        ...

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        """The kept versions of a memory, oldest first."""
        ...

    def delete_versions(self, memory_id: str, versions: Sequence[int]) -> int:
        """Delete the kept versions of a memory whose numbers are in ``versions``; how many."""
        ...

    def add_resolutions(self, items: Sequence[Resolution]) -> builtins.list[int]:
        """Record items reported resolved, in one transaction; their sequence numbers."""
        ...

    def resolutions(
        self, user_id: str, since: datetime | None = None, limit: int | None = None
    ) -> builtins.list[Resolution]:
        """The user's resolved items of every agent at or after ``since``, oldest first (the
        newest ``limit`` of them when given)."""
        ...

    def put_midterm(self, entry: MidTermEntry) -> None:
        """Keep a thread in the mid-term tier, replacing the scope's entry of that thread."""
        ...

    def midterm(
        self, user_id: str, agent_id: str, now: datetime, thread_id: str | None = None
    ) -> builtins.list[MidTermEntry]:
        """The scope's entries (of ``thread_id``, or all) not expired at ``now``, newest first.
        An entry expires at its ``expires`` exactly."""
        ...

    def expire_midterm(self, now: datetime) -> int:
        """Delete every mid-term entry expired at ``now`` (any scope); how many."""
        ...

    def delete_consolidation(self, user_id: str) -> int:
        """Delete the consolidation runs, resolutions and mid-term entries of ``user_id``
        (every agent); how many rows."""
        ...

    def forget_traces(
        self, memory_id: str, user_id: str, agent_id: str, session_id: str | None
    ) -> int:
        """Delete what quotes a memory being erased outside its row: the resolutions reported
        from it and the mid-term entries of its session; how many rows."""
        ...

    def activity_fields(self, flt: MemoryFilter) -> builtins.list[ActivityFields]:
        """What forgetting reads of the memories ``flt`` selects (its order and page too)."""
        ...

    def session_windows(
        self, flt: MemoryFilter, windows: Sequence[tuple[str, datetime, datetime]]
    ) -> builtins.list[builtins.list[tuple[str, datetime]]]:
        """For each ``(session id, after, before)`` of ``windows``, in order, the id and
        creation time of the memories of that session created at or after ``after`` and
        before ``before`` (instants, timezone aware) that the rest of ``flt`` selects: the
        ids and times :meth:`activity_fields` reads with ``flt`` narrowed to the window and
        ordered oldest first (ties: by id), ``flt``'s limit and offset applying to each
        window. ``flt``'s own session, time bounds and order do not apply. One read, however
        many windows; none: ``[]``."""
        ...

    def touch_accessed(self, ids: Sequence[str], at: datetime) -> int:
        """Count the accesses flagged since the last batch of the memories among ``ids`` that
        are not episodes: one more recall each, last access at ``at`` unless later already,
        flag cleared (the nightly batch does this for episodes); how many."""
        ...

    def set_low_activity(self, ids: Sequence[str], since: datetime | None) -> int:
        """Mark these memories of low activity since ``since`` (None: clear it); how many."""
        ...

    # API keys of the server (schema 10).

    def add_key(self, key: ApiKey) -> None:
        """Keep a new API key; StoreError when one with its id exists."""
        ...

    def keys(self, include_revoked: bool = False) -> builtins.list[ApiKey]:
        """The API keys (the revoked ones too when asked), oldest first."""
        ...

    def key_by_id(self, key_id: str) -> ApiKey | None:
        """The API key with this id, revoked or not; None when there is none."""
        ...

    def revoke_key(self, key_id: str, at: datetime) -> bool:
        """Revoke a key at ``at``; False when there is no such key or it was revoked."""
        ...

    def touch_key(self, key_id: str, at: datetime) -> None:
        """Note that the key was used at ``at``."""
        ...

    def delete_keys(self, user_id: str) -> int:
        """Delete every API key of ``user_id``, revoked or not; how many."""
        ...

    def scrub(self) -> ScrubReport:
        """After erasures have committed: take the erased bytes off the store's files."""
        ...

    def vacuum(self) -> tuple[int, int, ScrubReport]:
        """Compact the store; its size in bytes before and after."""
        ...

    def reindex(
        self,
        model: str | None = None,
        *,
        force: bool = False,
        dry_run: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> builtins.list[VectorIndexReport]:
        """Build each embedding model's vector index again (``model``: only that one) where
        the store's current settings ask for another than the one it has (``force``: every
        one), while searches and writes go on; ``dry_run``: only say what would be built.
        ``progress(label, done, total)`` hears how each build goes. A store whose vector
        search has no settings to apply rebuilds nothing. Refused inside ``atomic()``; a
        ``model`` without vectors is a ValidationError."""
        ...
