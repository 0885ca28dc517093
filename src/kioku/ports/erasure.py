"""Values of erasure, shared by the service and every store adapter.

* **Tombstones** keep the provenance source ids of erased memories (``SESSION:TURN``, an
  import's ``source_id``), so that an importer or a hook never stores an erased turn again.
  They are kept as keyed digests (BLAKE2b keyed with a random secret of the store), not as
  the ids themselves: a tombstone can answer "was this id erased?" but cannot be read back.
* **Audit entries** record each erasure (when, whose, how many, which backups still hold the
  data), never any erased text.
* **Backup records** say what each backup made with ``kioku backup`` holds, so that an erasure
  can name the copies that still contain what it erased.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from kioku.digests import blake2b
from kioku.errors import KiokuError
from kioku.records import Record

__all__ = [
    "AuditEntry",
    "BackupRecord",
    "ErasedSourceError",
    "ScrubReport",
    "Tombstones",
    "keyed_digest",
]


def keyed_digest(key: bytes, text: str) -> str:
    """A 128-bit keyed BLAKE2b of ``text`` in hex: equal texts, equal digests, for one key."""
    return blake2b(text.encode("utf-8"), key=key, digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Tombstones(Record):
    """The erased source ids of a store, as keyed digests; ``source_id in tombstones``."""

    key: bytes = field(repr=False)
    digests: frozenset[str]

    def __contains__(self, source_id: object) -> bool:
        return isinstance(source_id, str) and keyed_digest(self.key, source_id) in self.digests

    def __len__(self) -> int:
        return len(self.digests)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class AuditEntry(Record):
    """One row of the append-only erasure audit log."""

    seq: int
    at: datetime
    action: str  # "forget" or "erase_user"
    subject: str  # the keyed digest of the user id
    items: int
    details: dict[str, object]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BackupRecord(Record):
    """What one backup held when it was made: where, when, how many memories, per user."""

    seq: int
    path: str
    made_at: datetime
    memories: int
    #: Memories per user, keyed by the keyed digest of the user id.
    users: dict[str, int]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ScrubReport(Record):
    """What an adapter did after an erasure to take the erased bytes off its files."""

    #: The lexical index was merged, so no segment keeps a deleted memory's terms.
    index_merged: bool
    #: The write-ahead log was checkpointed and truncated to zero bytes.
    wal_truncated: bool
    #: Why the log could not be truncated (another process reading), if it was not.
    wal_detail: str = ""
    #: The persisted vector cache files removed.
    vector_files_removed: bool = False


class ErasedSourceError(KiokuError):
    """A new memory carries a source id of an erased memory: it is not stored again."""

    def __init__(self, source_id: str) -> None:
        self.source_id = source_id
        super().__init__(
            f"source id {source_id!r} belongs to an erased memory; it is not stored again",
            hint="this turn was forgotten on purpose (kioku forget / kioku erase)",
        )
