"""Records the Store port exchanges for cold storage and the activity log (schema 8), and
for consolidation, forgetting, resolution propagation and the mid-term tier (schema 9), and
the server's API keys (schema 10)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from kioku.core.kinds import Details
from kioku.errors import KiokuError
from kioku.records import Record

__all__ = [
    "ActivityFields",
    "ActivityQuery",
    "ActivityRow",
    "ApiKey",
    "ConsolidationDoneError",
    "ConsolidationRun",
    "MemoryVersion",
    "MidTermEntry",
    "Original",
    "Resolution",
    "StoredActivity",
    "VectorIndexReport",
]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Original(Record):
    """The text an episode had before compression first rewrote it."""

    memory_id: str
    trigger: str
    content: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ActivityRow(Record):
    """One activity event to append: its JSON line and the columns readers filter on."""

    at: datetime
    type: str
    user_id: str
    agent_id: str
    line: str
    session_id: str | None = None
    memory_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ActivityQuery(Record):
    """Which events to read: ``None`` means any. ``since`` inclusive, ``until`` exclusive."""

    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    types: tuple[str, ...] = ()
    limit: int | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class StoredActivity(Record):
    """An event as stored: its sequence number, local day (YYYY-MM-DD) and JSON line."""

    seq: int
    day: str
    line: str


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ConsolidationRun(Record):
    """One consolidation of one owner's period, recorded once it is done.

    ``kind`` is ``daily``, ``weekly`` or ``monthly``; ``period`` names the day, ISO week or
    month (``2026-11-26``, ``2026-W48``, ``2026-11``). ``report`` holds counts and memory
    ids only, never memory text: it is kept as JSON.
    """

    kind: str
    period: str
    user_id: str
    agent_id: str
    done_at: datetime
    report: Mapping[str, object] = field(default_factory=dict)


class ConsolidationDoneError(KiokuError):
    """A consolidation of this kind and period was already recorded for this owner."""

    def __init__(self, kind: str, period: str, user_id: str, agent_id: str) -> None:
        self.kind = kind
        self.period = period
        self.user_id = user_id
        self.agent_id = agent_id
        super().__init__(
            f"the {kind} consolidation of {period} is already done for this scope",
            hint="each period is consolidated once; nothing of this run was saved",
        )


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MemoryVersion(Record):
    """A memory as it was before a change (spec 001 archive/versions): its text and details
    then, and the version number its details carried (1 when they carry none)."""

    memory_id: str
    version: int
    saved_at: datetime
    trigger: str
    content: str
    details: Details | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Resolution(Record):
    """An item reported resolved (spec 001 解決伝播, layer 2): shared by every agent of one
    owner. ``seq`` is given by the store."""

    item: str
    at: datetime
    user_id: str
    agent_id: str
    session_id: str | None = None
    source: str = ""
    seq: int | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MidTermEntry(Record):
    """One thread of a session in the mid-term tier (spec 003 §2/§4): hot until
    ``hot_until``, kept until ``expires`` for resuming it. ``turns`` are the turn texts, kept
    only here; ``turn_count`` is how many turns the thread had."""

    thread_id: str
    user_id: str
    agent_id: str
    created: datetime
    hot_until: datetime
    expires: datetime
    summary: str
    keywords: tuple[str, ...]
    turns: tuple[str, ...]
    turn_count: int
    session_id: str | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ActivityFields(Record):
    """What active forgetting reads of a memory, without decoding all of it. Times in UTC;
    ``last_access`` and ``low_since`` are None when never accessed or not of low activity."""

    id: str
    kind: str
    created: datetime
    last_access: datetime | None
    recall_count: int
    recalled_since_last_batch: bool
    protected: bool
    archived: bool
    low_since: datetime | None
    details: Details | None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ApiKey(Record):
    """An API key of the server, as kept: never the key itself, only its SHA-256.

    ``id`` is the key's public prefix (``kk_3f9a1c2b``); the key grants ``rights``
    (``read`` or ``read-write``) on the one scope ``user_id``/``agent_id``.
    """

    id: str
    name: str
    secret_hash: str
    user_id: str
    agent_id: str
    rights: str
    created_at: datetime
    revoked_at: datetime | None = None
    last_used_at: datetime | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class VectorIndexReport(Record):
    """How one embedding model's vectors are searched, before and after ``Store.reindex``:
    ``before`` and ``after`` describe the index (``"hnsw vector m=32 ef_construction=200"``)
    or say ``"exact"`` where the vectors are compared one by one; ``rebuilt`` says whether
    this call built it again, in ``seconds`` (with ``dry_run``: whether it would)."""

    model: str
    dim: int
    vectors: int
    before: str
    after: str
    rebuilt: bool
    seconds: float = 0.0
