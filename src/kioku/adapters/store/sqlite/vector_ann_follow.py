"""How an HNSW graph (:mod:`.vector_ann`) follows its vector cache from version to version.

:func:`follow` ties a :class:`.vector_ann.Graph` to a later cache of the same model without
touching the graph itself (see :mod:`.vector_ann`'s docstring): rows appended to the same
matrix are not covered, dead rows lose their slot, a memory that died and came back with the
same vector keeps its slot, and a cache copied into a new matrix is matched to the old one by
id (a slot kept only for a bit-identical vector).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kioku.adapters.store.sqlite.vector_ann import Graph, Rows
from kioku.adapters.store.sqlite.vectors import ModelVectors

__all__ = ["follow"]

#: Rows compared at a time (bounds the gathered copies).
_CHUNK = 65_536


def _same_prefix(old: ModelVectors, new: ModelVectors) -> bool:
    """Whether ``new`` grew from ``old`` in place: its first ``old.size`` rows are old's."""
    return (
        old.spare is not None
        and new.spare is old.spare
        and new.size >= old.size
        and new.dim == old.dim
        and new.columns.__array_interface__["data"][0] == old.columns.__array_interface__["data"][0]
    )


def _ids_of(vectors: ModelVectors, rows: npt.NDArray[np.int64]) -> list[str]:
    """The ids of ``rows`` (all of them decoded at once when they are many)."""
    if rows.size > 4096:
        every = vectors.ids.tolist()
        return [every[row] for row in rows.tolist()]
    return [vectors.ids[row] for row in rows.tolist()]


def _shared_rows(old: ModelVectors, new: ModelVectors) -> int:
    """Leading rows ``old`` and ``new`` share because both grew from one cache file."""
    a = None if old.spare is None else old.spare.origin
    b = None if new.spare is None else new.spare.origin
    return 0 if a is None or a != b else min(a[1], old.size, new.size)


def _written_from(old: ModelVectors, new: ModelVectors) -> Rows | None:
    """The live rows of ``old`` in order when ``new`` holds exactly them (a cache file
    written from ``old``): the same version and the same ids in the same order (a version
    names one state of the store, so the same id there has the same vector); else None."""
    if old.version != new.version or new.dead is not None:
        return None
    live = (
        np.arange(old.size, dtype=np.int64)
        if old.dead is None
        else np.flatnonzero(~old.dead).astype(np.int64)
    )
    if live.size != new.size or _ids_of(old, live) != new.ids.tolist():
        return None
    return live


def _equal_columns(
    a: ModelVectors, a_rows: Rows, b: ModelVectors, b_rows: Rows
) -> npt.NDArray[np.bool_]:
    """Whether row ``a_rows[i]`` of ``a`` holds bit for bit the vector of ``b_rows[i]``."""
    out = np.zeros(a_rows.size, dtype=np.bool_)
    for start in range(0, a_rows.size, _CHUNK):
        x = a.columns[:, a_rows[start : start + _CHUNK]].view(np.uint32)
        y = b.columns[:, b_rows[start : start + _CHUNK]].view(np.uint32)
        out[start : start + x.shape[1]] = (x == y).all(axis=0)
    return out


def follow(graph: Graph, vectors: ModelVectors) -> Graph:
    """``graph`` tied to ``vectors``, a later cache of the same model (see the module's
    docstring): slots of rows that are alive in both with the same vector are kept."""
    old = graph.vectors
    if vectors is old:
        return graph
    if vectors.dim != old.dim:
        raise ValueError("another dimension")
    slot_of_row = np.full(vectors.size, -1, dtype=np.int64)
    if _same_prefix(old, vectors):
        slot_of_row[: old.size] = graph.slot_of_row
        if vectors.dead is not None:
            dead = vectors.dead[: old.size]
            was = old.dead
            freed = np.flatnonzero(dead & (slot_of_row[: old.size] >= 0))
            if was is not None:
                freed = freed[~was[freed]]
            slot_of_row[: old.size][dead] = -1
        else:
            freed = np.zeros(0, dtype=np.int64)
        new_rows = np.arange(old.size, vectors.size, dtype=np.int64)
        if vectors.dead is not None:
            new_rows = new_rows[~vectors.dead[new_rows]]
        if freed.size and new_rows.size:
            # A memory that died and came back (its archived flag changed) keeps its slot.
            back = {vectors.ids[int(row)]: int(row) for row in freed}
            pairs = [
                (int(row), back[key])
                for row in new_rows.tolist()
                if (key := vectors.ids[row]) in back
            ]
            if pairs:
                new, was_rows = (np.asarray(p, dtype=np.int64) for p in zip(*pairs, strict=True))
                same = _equal_columns(vectors, new, old, was_rows)
                slot_of_row[new[same]] = graph.slot_of_row[was_rows[same]]
    elif (live := _written_from(old, vectors)) is not None:
        slot_of_row[:] = graph.slot_of_row[live]
    else:
        # Another matrix: the rows of the cache file both grew from are the same; the others
        # are matched by id, keeping a slot only for the same vector.
        shared = _shared_rows(old, vectors)
        slot_of_row[:shared] = graph.slot_of_row[:shared]
        old_alive = graph.slot_of_row >= 0
        old_alive[:shared] = False
        if old.dead is not None:
            old_alive &= ~old.dead
        old_rows = np.flatnonzero(old_alive)
        where = dict(zip(_ids_of(old, old_rows), old_rows.tolist(), strict=True))
        alive = np.arange(shared, vectors.size, dtype=np.int64)
        if vectors.dead is not None:
            alive = alive[~vectors.dead[alive]]
        pairs = (
            [
                (row, where[key])
                for row, key in zip(alive.tolist(), _ids_of(vectors, alive), strict=True)
                if key in where
            ]
            if where
            else []
        )
        if pairs:
            new, was_rows = (np.asarray(p, dtype=np.int64) for p in zip(*pairs, strict=True))
            same = _equal_columns(vectors, new, old, was_rows)
            slot_of_row[new[same]] = graph.slot_of_row[was_rows[same]]
        if vectors.dead is not None:
            slot_of_row[vectors.dead] = -1
    row_of_slot = np.full(graph.slots, -1, dtype=np.int64)
    held = np.flatnonzero(slot_of_row >= 0)
    row_of_slot[slot_of_row[held]] = held
    return Graph(
        graph.index, vectors, row_of_slot, slot_of_row, graph.viewed, graph.checksum, graph.since
    )
