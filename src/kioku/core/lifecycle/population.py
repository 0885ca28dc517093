"""What a batch reads: every memory's numbers as parallel columns (pure data, numpy arrays)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["ArchivedPopulation", "Population", "Snapshot", "stack_ids"]

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


@dataclass(frozen=True, slots=True, eq=False)
class ArchivedPopulation:
    """Every archived memory: candidates for revival and for erasure."""

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

    def __len__(self) -> int:
        return int(self.ids.size)

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
