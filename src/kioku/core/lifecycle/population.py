"""What a batch reads: every memory's numbers as parallel columns (pure data, numpy arrays)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["ArchiveSelect", "ArchivedPopulation", "Population", "Snapshot", "stack_ids"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]
Ids = npt.NDArray[np.object_]


@dataclass(frozen=True, slots=True, eq=False)
class Population:
    """Every active (not archived) memory the batch looks at, as parallel columns.

    ``scope`` is a small integer per (user, agent); ratios are kept per scope, so one
    tenant's memories never push another's. ``created`` is seconds since the epoch.
    """

    ids: Ids
    scope: npt.NDArray[np.int32]
    created: F64
    intensity: F64
    coefficient: F64
    memory_days: F64
    recall_count: I64
    recalled: B
    level: npt.NDArray[np.int8]
    protected: B
    score: F64

    def __len__(self) -> int:
        return int(self.ids.size)

    @staticmethod
    def empty() -> Population:
        return Population(
            ids=np.empty(0, dtype=object),
            scope=np.empty(0, dtype=np.int32),
            created=np.empty(0),
            intensity=np.empty(0),
            coefficient=np.empty(0),
            memory_days=np.empty(0),
            recall_count=np.empty(0, dtype=np.int64),
            recalled=np.empty(0, dtype=np.bool_),
            level=np.empty(0, dtype=np.int8),
            protected=np.empty(0, dtype=np.bool_),
            score=np.empty(0),
        )


@dataclass(frozen=True, slots=True)
class ArchiveSelect:
    """The archived memories a batch snapshot reads whole, beside every scope's counts: those
    whose revival was asked for, those in a relation and, when ``erasable_before`` is set
    (seconds since the epoch), those archived before it. No selection: the whole archive."""

    erasable_before: float | None = None


@dataclass(frozen=True, slots=True, eq=False)
class ArchivedPopulation:
    """The archived memories the day may act on (candidates for revival and for erasure), and
    how many archived memories each scope holds.

    The rows need not be the whole archive: a store reads only those asked back, those linked
    to another memory and those old enough to be erased (see :func:`erasable_before`), so the
    batch's reads grow with the active set. ``in_scope`` and ``free_in_scope`` then count every
    archived memory per scope code (all of them, and the non-protected ones); without them
    the rows are the whole archive and are counted.
    """

    ids: Ids
    scope: npt.NDArray[np.int32]
    created: F64
    intensity: F64
    coefficient: F64
    recall_count: I64
    archived_at: F64  # seconds since the epoch
    revival_requested: B
    revival_requested_at: F64  # NaN when not requested
    protected: B
    in_scope: I64 | None = None
    free_in_scope: I64 | None = None

    def __len__(self) -> int:
        return int(self.ids.size)

    def scope_counts(self) -> tuple[I64, I64]:
        """Archived memories per scope code: (all, non-protected)."""
        if self.in_scope is not None and self.free_in_scope is not None:
            return self.in_scope, self.free_in_scope
        every = np.bincount(self.scope, minlength=0).astype(np.int64)
        free = np.bincount(self.scope[~self.protected], minlength=every.size).astype(np.int64)
        return every, free

    @staticmethod
    def empty() -> ArchivedPopulation:
        return ArchivedPopulation(
            ids=np.empty(0, dtype=object),
            scope=np.empty(0, dtype=np.int32),
            created=np.empty(0),
            intensity=np.empty(0),
            coefficient=np.empty(0),
            recall_count=np.empty(0, dtype=np.int64),
            archived_at=np.empty(0),
            revival_requested=np.empty(0, dtype=np.bool_),
            revival_requested_at=np.empty(0),
            protected=np.empty(0, dtype=np.bool_),
        )


@dataclass(frozen=True, slots=True, eq=False)
class Snapshot:
    """What a batch reads from the store for one day."""

    population: Population
    archived: ArchivedPopulation
    scopes: tuple[tuple[str, str], ...]  # scope code -> (user_id, agent_id)
    links: tuple[tuple[str, str, str], ...]  # (source, target, type)


def stack_ids(ids: Sequence[str]) -> Ids:
    """An object array of ids (numpy would otherwise make fixed-width strings)."""
    out = np.empty(len(ids), dtype=object)
    out[:] = list(ids)
    return out
