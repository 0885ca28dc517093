"""The memory record and its vocabulary (spec 000, 記憶フォーマット and テーブル定義).

Pure data: no I/O, no clock. A :class:`Memory` is immutable; changes are made with
:func:`dataclasses.replace` by the service and persisted through the Store port.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Final

from kioku.core.kinds import Details
from kioku.records import Record

__all__ = [
    "ALL_TAGS",
    "DEFAULT_AGENT_ID",
    "DEFAULT_USER_ID",
    "NEGATIVE_TAGS",
    "OTHER_TAGS",
    "POSITIVE_TAGS",
    "SPEC_CATEGORIES",
    "Embedding",
    "Kind",
    "Level",
    "Memory",
    "Relation",
    "RelationType",
    "Valence",
]

DEFAULT_USER_ID: Final = "default"
DEFAULT_AGENT_ID: Final = "default"

#: The four context categories of spec 000 (減衰係数). The configuration may add more.
SPEC_CATEGORIES: Final = ("casual", "work", "decision", "emotional")


class Valence(StrEnum):
    """Emotional valence (感情価)."""

    POSITIVE = "positive"
    NEGATIVE = "negative"
    NEUTRAL = "neutral"


class Kind(StrEnum):
    """What sort of memory a record is (spec 001): episodes come from conversation turns;
    knowledge, procedures and profiles are written on purpose or by consolidation (see
    :mod:`kioku.core.kinds`). The older names (episodic, semantic, procedural) still read."""

    EPISODE = "episode"
    KNOWLEDGE = "knowledge"
    PROCEDURE = "procedure"
    PROFILE = "profile"
    # Aliases of the names stores of schema version 7 and earlier used.
    EPISODIC = "episode"
    SEMANTIC = "knowledge"
    PROCEDURAL = "procedure"

    @classmethod
    def _missing_(cls, value: object) -> Kind | None:
        return _LEGACY_KINDS.get(str(value).strip().lower())


_LEGACY_KINDS: Final[dict[str, Kind]] = {
    "episodic": Kind.EPISODE,
    "episodes": Kind.EPISODE,
    "semantic": Kind.KNOWLEDGE,
    "procedural": Kind.PROCEDURE,
    "procedures": Kind.PROCEDURE,
    "profiles": Kind.PROFILE,
}


class RelationType(StrEnum):
    """Relation types of spec 000 (リレーションタイプ)."""

    CONTINUES = "continues"
    REFERENCES = "references"
    DERIVED_FROM = "derived_from"
    CONTRADICTS = "contradicts"
    SAME_TOPIC = "same_topic"


class Level:
    """The memory levels of the three-stage compression model (レベル定義)."""

    FULL: Final = 1
    SUMMARY: Final = 2
    TRACE: Final = 3
    ARCHIVED: Final = 4
    NAMES: Final = {1: "full", 2: "summary", 3: "trace", 4: "archived"}


POSITIVE_TAGS: Final = (
    "joy",
    "satisfaction",
    "relief",
    "excitement",
    "gratitude",
    "pride",
    "hope",
    "love",
    "curiosity",
)
NEGATIVE_TAGS: Final = (
    "sadness",
    "anger",
    "frustration",
    "anxiety",
    "fear",
    "disgust",
    "regret",
    "loneliness",
    "guilt",
    "resignation",
)
OTHER_TAGS: Final = ("nostalgia", "surprise", "confusion", "determination")
#: The emotional tag set of spec 000 (感情タグ); no other tag is accepted.
ALL_TAGS: Final = frozenset(POSITIVE_TAGS + NEGATIVE_TAGS + OTHER_TAGS)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Relation(Record):
    """A directed link from one memory to another (高スコア → 低スコア)."""

    id: str
    type: RelationType


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Embedding(Record):
    """A vector together with the model that produced it, so models are never mixed."""

    model: str
    vector: tuple[float, ...]

    @property
    def dim(self) -> int:
        return len(self.vector)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Memory(Record):
    """One long-term memory: every field of spec 000's memory format, plus scope and provenance.

    Times are timezone-aware datetimes; they serialise as ISO 8601 with the local offset.
    """

    id: str
    created: datetime
    trigger: str
    content: str
    emotional_intensity: int
    emotional_valence: Valence
    emotional_arousal: int
    category: str
    decay_coefficient: float
    memory_days: float = 0.0
    retention_score: float = 0.0
    current_level: int = Level.FULL
    emotional_tags: tuple[str, ...] = ()
    keywords: tuple[str, ...] = ()
    recalled_since_last_batch: bool = False
    recall_count: int = 0
    relations: tuple[Relation, ...] = ()
    archived_at: datetime | None = None
    protected: bool = False
    revival_requested: bool = False
    revival_requested_at: datetime | None = None
    embedding: Embedding | None = None
    # Scope: who the memory belongs to. Single-user installs use the defaults.
    user_id: str = DEFAULT_USER_ID
    agent_id: str = DEFAULT_AGENT_ID
    kind: Kind = Kind.EPISODE
    # Provenance: where the memory came from.
    session_id: str | None = None
    source_ids: tuple[str, ...] = ()
    source_timestamps: tuple[datetime, ...] = ()
    updated_at: datetime | None = field(default=None, compare=False)
    #: What only this memory's kind has (None for episodes): see :mod:`kioku.core.kinds`.
    details: Details | None = None
    #: When it was last recalled, primed or found, or its procedure's outcome reported (None:
    #: never). Bookkeeping of reads, so left out of equality as ``updated_at`` is.
    last_access: datetime | None = field(default=None, compare=False)
    #: Since when daily downscaling has found it of low activity (spec 001); None: it is not.
    low_activity_since: datetime | None = None

    @property
    def archived(self) -> bool:
        return self.archived_at is not None
