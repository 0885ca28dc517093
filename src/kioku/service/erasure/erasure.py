"""Erasure: forgetting one memory, and erasing everything of one person (spec 003 §9.1).

Both run in one transaction that deletes the memories (their relations cascade, their rows in
the lexical index and the vector-cache counter go with them), keeps a **tombstone** of each
erased memory's provenance source ids so that no importer, ingest or hook stores the same turn
again, and appends a row to the append-only **audit log**. After the commit the store
**scrubs** its files (see :meth:`kioku.ports.store.Store.scrub`): for SQLite, the lexical index
is merged so no segment keeps the erased terms, and the write-ahead log is truncated.

Erasing a person is two steps: :func:`plan_erasure` says what would be deleted (counts, never
text) and gives a confirmation token, a keyed digest of the user id and the exact ids to delete;
:func:`erase_user` deletes only when given that token, so a token printed before a new memory
of that person arrived is refused.

The audit log keeps a keyed digest of the user id (with the store's own secret), not the id:
the log outlives the data and must not name the person it erased, yet whoever knows the id can
find its rows (:func:`audit_subject`). Backups made with ``kioku backup`` are recorded in a
manifest; an erasure names the existing backups that still hold what it erased, because kioku
cannot scrub copies it does not control.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from kioku.core.model import Memory
from kioku.errors import KiokuError, MemoryNotFoundError, ProtectedMemoryError
from kioku.ports.erasure import BackupRecord, ScrubReport
from kioku.ports.store import MemoryFilter, Store
from kioku.records import Record

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = [
    "BackupStatus",
    "ErasurePlan",
    "ErasureReport",
    "ErasureTokenError",
    "audit_subject",
    "erase_user",
    "forget_memory",
    "plan_erasure",
]

_TOKEN_CHARS: Final = 20
#: State rows of one user's working memory (see kioku.service.context.working_memory).
_WORKING_MEMORY_PREFIX: Final = "working_memory:{user}:"


class ErasureTokenError(KiokuError):
    """The confirmation token does not match what would be erased now."""

    exit_code = 2

    def __init__(self, user_id: str) -> None:
        super().__init__(
            f"the confirmation token does not match what would be erased for user {user_id!r} "
            "now (a wrong token, or the memories changed since it was printed)",
            hint=f"run `kioku erase --user {user_id}` again to see the plan and its token",
        )


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BackupStatus(Record):
    """A recorded backup that holds erased data, and whether its file is still there."""

    path: str
    made_at: datetime
    exists: bool

    @staticmethod
    def of(records: Iterable[BackupRecord]) -> tuple[BackupStatus, ...]:
        return tuple(BackupStatus(r.path, r.made_at, Path(r.path).exists()) for r in records)

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "made_at": self.made_at.isoformat(), "exists": self.exists}


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ErasurePlan(Record):
    """What erasing one user would delete: counts only, never text."""

    user_id: str
    token: str
    memories: int
    by_level: dict[int, int]
    by_kind: dict[str, int]
    by_agent: dict[str, int]
    protected: int
    sessions: int
    relations: int
    source_ids: int
    log_rows: int
    first: datetime | None
    last: datetime | None
    backups: tuple[BackupStatus, ...]
    memory_ids: tuple[str, ...] = field(repr=False, default=())

    def to_dict(self) -> dict[str, object]:
        return {
            "user_id": self.user_id,
            "memories": self.memories,
            "by_level": {str(k): v for k, v in sorted(self.by_level.items())},
            "by_kind": dict(sorted(self.by_kind.items())),
            "by_agent": dict(sorted(self.by_agent.items())),
            "protected": self.protected,
            "sessions": self.sessions,
            "relations": self.relations,
            "source_ids": self.source_ids,
            "log_rows": self.log_rows,
            "first": None if self.first is None else self.first.isoformat(),
            "last": None if self.last is None else self.last.isoformat(),
            "backups_containing": [b.to_dict() for b in self.backups],
            "token": self.token,
        }


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ErasureReport(Record):
    """What an erasure did."""

    action: str  # "forget" or "erase_user"
    user_id: str
    erased: int
    memory_ids: tuple[str, ...]
    tombstoned: int
    log_rows_deleted: int
    state_rows_deleted: int
    audit_seq: int
    backups: tuple[BackupStatus, ...]
    scrub: ScrubReport
    #: The erased memory, for ``forget``.
    memory: Memory | None = field(default=None, repr=False, compare=False)
    #: The API keys of the user deleted with it, for ``erase_user``.
    api_keys_deleted: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "action": self.action,
            "user_id": self.user_id,
            "erased": self.erased,
            "memory_ids": list(self.memory_ids),
            "tombstoned_source_ids": self.tombstoned,
            "log_rows_deleted": self.log_rows_deleted,
            "state_rows_deleted": self.state_rows_deleted,
            "audit_seq": self.audit_seq,
            "api_keys_deleted": self.api_keys_deleted,
            "backups_containing": [b.to_dict() for b in self.backups],
            "scrub": {
                "index_merged": self.scrub.index_merged,
                "wal_truncated": self.scrub.wal_truncated,
                "wal_detail": self.scrub.wal_detail,
                "vector_files_removed": self.scrub.vector_files_removed,
            },
        }


def audit_subject(store: Store, user_id: str) -> str:
    """The audit log's name for ``user_id``: a keyed digest with the store's secret."""
    return store.secret_digest("user\0" + user_id)


def _user_memories(store: Store, user_id: str) -> list[Memory]:
    return list(store.iter(MemoryFilter(user_id=user_id, archived=None)))


def _token(store: Store, user_id: str, ids: Iterable[str]) -> str:
    material = "erase-user\0" + user_id + "\0" + "\n".join(sorted(ids))
    return store.secret_digest(material)[:_TOKEN_CHARS]


def plan_erasure(engine: Engine, user_id: str) -> ErasurePlan:
    """What :func:`erase_user` would delete for ``user_id`` (every agent), and its token."""
    store = engine.store
    memories = _user_memories(store, user_id)
    ids = tuple(m.id for m in memories)
    by_level: dict[int, int] = {}
    by_kind: dict[str, int] = {}
    by_agent: dict[str, int] = {}
    for m in memories:
        by_level[m.current_level] = by_level.get(m.current_level, 0) + 1
        by_kind[str(m.kind)] = by_kind.get(str(m.kind), 0) + 1
        by_agent[m.agent_id] = by_agent.get(m.agent_id, 0) + 1
    created = sorted(m.created for m in memories)
    return ErasurePlan(
        user_id=user_id,
        token=_token(store, user_id, ids),
        memories=len(memories),
        by_level=by_level,
        by_kind=by_kind,
        by_agent=by_agent,
        protected=sum(m.protected for m in memories),
        sessions=len({m.session_id for m in memories if m.session_id}),
        relations=sum(len(m.relations) for m in memories),
        source_ids=len({s for m in memories for s in m.source_ids}),
        log_rows=len(store.read_log(user_id=user_id)),
        first=created[0] if created else None,
        last=created[-1] if created else None,
        backups=BackupStatus.of(store.backups_containing(ids)),
        memory_ids=ids,
    )


def erase_user(engine: Engine, user_id: str, token: str) -> ErasureReport:
    """Erase every memory of ``user_id`` (all agents), its relations, vectors, lifecycle log
    rows, activity events and working-memory state, leaving tombstones of its source ids and
    an audit row. Refuses (ErasureTokenError, nothing changed) unless ``token`` is the one
    :func:`plan_erasure` gives for exactly the memories there are now."""
    store = engine.store
    with store.atomic():
        memories = _user_memories(store, user_id)
        ids = tuple(m.id for m in memories)
        if token.strip() != _token(store, user_id, ids):
            raise ErasureTokenError(user_id)
        backups = BackupStatus.of(store.backups_containing(ids))
        sources = sorted({s for m in memories for s in m.source_ids})
        erased = store.delete_many(ids)
        tombstoned = store.add_tombstones(sources, engine.clock.now())
        log_rows = store.delete_log(user_id)
        activity_rows = store.delete_activity(user_id)
        keys_deleted = store.delete_keys(user_id)
        state_rows = store.delete_state(_WORKING_MEMORY_PREFIX.format(user=user_id))
        # Session-boundary encoding's points (memory ids and times, keyed by the user).
        user_json = json.dumps(user_id)
        for prefix in ("encoding:[", "encoding-sweep:["):
            state_rows += store.delete_state(f"{prefix}{user_json},")
        seq = store.append_audit(
            engine.clock.now(),
            "erase_user",
            audit_subject(store, user_id),
            erased,
            {
                "agents": len({m.agent_id for m in memories}),
                "tombstoned_source_ids": tombstoned,
                "log_rows_deleted": log_rows,
                "activity_events_deleted": activity_rows,
                "api_keys_deleted": keys_deleted,
                "state_rows_deleted": state_rows,
                "backups_still_containing": [b.path for b in backups if b.exists],
            },
        )
    return ErasureReport(
        action="erase_user",
        user_id=user_id,
        erased=erased,
        memory_ids=ids,
        tombstoned=tombstoned,
        log_rows_deleted=log_rows,
        state_rows_deleted=state_rows,
        audit_seq=seq,
        backups=backups,
        scrub=_scrub_if_outside(engine),
        api_keys_deleted=keys_deleted,
    )


def forget_memory(engine: Engine, memory_id: str, *, force: bool = False) -> ErasureReport:
    """Erase one memory of ``engine``'s scope with every relation to or from it, keep a
    tombstone of its source ids, log and audit it, then scrub the store's files."""
    from kioku.core.lifecycle.log import Event, LogEntry

    store = engine.store
    with store.atomic():
        memory = store.get(memory_id)
        if memory is None or (memory.user_id, memory.agent_id) != (engine.user_id, engine.agent_id):
            raise MemoryNotFoundError(memory_id)
        if memory.protected and not force:
            raise ProtectedMemoryError(memory_id)
        from kioku.service.consolidation.erasure import derived_to_erase

        derived = derived_to_erase(engine, memory)
        backups = BackupStatus.of(store.backups_containing([memory_id, *derived]))
        store.delete(memory_id)
        if derived:
            store.delete_many(derived)
        tombstoned = store.add_tombstones(list(memory.source_ids), engine.clock.now())
        store.append_log(
            [
                LogEntry(
                    event=Event.DELETE,
                    memory_id=mid,
                    at=engine.clock.now(),
                    user_id=memory.user_id,
                    agent_id=memory.agent_id,
                    level_before=memory.current_level if mid == memory_id else None,
                    score_before=memory.retention_score if mid == memory_id else None,
                    details={"why": "forget", "forced": bool(force and memory.protected)}
                    if mid == memory_id
                    else {"why": "derived from a forgotten memory", "from": memory_id},
                )
                for mid in (memory_id, *derived)
            ]
        )
        seq = store.append_audit(
            engine.clock.now(),
            "forget",
            audit_subject(store, memory.user_id),
            1,
            {
                "memory_id": memory_id,
                "derived_erased": derived,
                "tombstoned_source_ids": tombstoned,
                "backups_still_containing": [b.path for b in backups if b.exists],
            },
        )
    # Inside a caller's transaction the files are scrubbed by the next erasure or vacuum.
    scrub = _scrub_if_outside(engine)
    return ErasureReport(
        action="forget",
        user_id=memory.user_id,
        erased=1 + len(derived),
        memory_ids=(memory_id, *derived),
        tombstoned=tombstoned,
        log_rows_deleted=0,
        state_rows_deleted=0,
        audit_seq=seq,
        backups=backups,
        scrub=scrub,
        memory=memory,
    )


def _scrub_if_outside(engine: Engine) -> ScrubReport:
    try:
        return engine.store.scrub()
    except KiokuError as exc:
        return ScrubReport(index_merged=False, wal_truncated=False, wal_detail=exc.message)
