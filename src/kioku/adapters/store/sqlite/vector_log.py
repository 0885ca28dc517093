"""Vector caches brought up to date from the store's change log instead of reloaded.

A cache (:class:`.vectors.ModelVectors`) holds every vector of one model as of one version of
the store. Every write that changes what vector search sees sets a new version and records it
in ``vector_log`` with the ids of the memories it changed (see :mod:`.vector_version`). So a
cache at version ``V`` that finds the store at a later version, whichever process wrote, reads
the entries after ``V``'s, reads those memories' current rows in the same snapshot, and makes
a new cache from the old one: the rows of changed or deleted memories become dead (no filter
keeps them), and the memories that now have a vector of the model are appended. What an old
cache reads is never written to (it may be a mapped file, or in use by a search on another
thread): new vectors go into spare columns after the longest cache made on a matrix
(:class:`.vectors.Spare`), and when there is no room, or dead rows are more than an eighth of
the rows, the live ones are copied into a new matrix with room to grow.

Vector search never depends on the order of the rows (equal scores are ordered by id, see
:mod:`.vector_scan`), so the result is exactly that of a fresh load. It falls back to a full
load (:func:`.vectors.load`) when the log cannot say what changed: ``V`` is not in it (pruned,
or written before the log existed), a reload marker follows it, the entries after it are more
than :data:`MAX_SHARE` of the cache's rows (and more than :data:`MIN_ROWS`), a changed vector
has another dimension than the cache's, or the cache left out vectors of another dimension.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from typing import Final, Literal

import numpy as np

from kioku.adapters.store.sqlite.vector_version import changes_since
from kioku.adapters.store.sqlite.vectors import (
    IdColumn,
    ModelVectors,
    SavedVectors,
    Spare,
    build,
    headroom,
    load,
    normalised,
)

__all__ = [
    "MAX_SHARE",
    "MIN_ROWS",
    "CaughtUp",
    "catch_up",
    "change_limit",
    "extended",
    "refresh",
]

#: Log entries applied to a cache at most, as a share of its rows; past it a full load wins.
MAX_SHARE: Final = 0.2
#: Entries applied whatever the cache's size (reloading a small cache is cheap either way).
MIN_ROWS: Final = 256
#: Ids read back per query (below SQLite's limit on bound parameters).
_CHUNK: Final = 500
#: Changed ids looked up one by one in a file's undecoded ids, rather than indexing them all.
_LOOKUPS: Final = 16


@dataclass(frozen=True, slots=True)
class CaughtUp:
    """A cache brought up to date: the vectors of the model (None: it has none now)."""

    vectors: ModelVectors | None


def change_limit(size: int) -> int:
    """How many log entries a cache of ``size`` rows catches up on before it reloads."""
    return max(MIN_ROWS, int(size * MAX_SHARE))


def refresh(
    conn: sqlite3.Connection,
    model: str,
    version: int,
    cached: tuple[int, ModelVectors | None] | None,
    files: SavedVectors | None,
) -> ModelVectors | None:
    """Every vector of ``model`` as of ``version`` (read in ``conn``'s snapshot): ``cached``
    brought up to date from the log (which copies only the changed rows, where a newly
    mapped file is read page by page at the next search), else the cache file at exactly
    that version, else the file at an older version brought up to date, else a full load."""
    if cached is not None:
        caught = catch_up(conn, model, cached[0], cached[1], version)
        if caught is not None:
            return caught.vectors
    saved = None if files is None or version <= 0 else files.read(model, None)
    if saved is not None:
        if saved.version == version:
            return saved
        if cached is None or saved.version != cached[0]:
            caught = catch_up(conn, model, saved.version, saved, version)
            if caught is not None:
                return caught.vectors
    return load(conn, model, version)


def catch_up(
    conn: sqlite3.Connection,
    model: str,
    since: int,
    base: ModelVectors | None,
    version: int,
) -> CaughtUp | None:
    """``base`` (the vectors of ``model`` as of version ``since``) brought to ``version``
    from the log, or None when the log cannot do it (see the module's docstring)."""
    if base is not None and base.mixed:
        return None
    changed = changes_since(conn, since, version, change_limit(0 if base is None else base.size))
    if changed is None:
        return None
    rows = _current_rows(conn, model, changed)
    dim = rows[0][3] if base is None and rows else (0 if base is None else base.dim)
    if any(row[3] != dim or len(row[4]) != dim * 4 for row in rows):
        return None  # another dimension (or a damaged row): a full load decides
    if base is None:
        if not rows:
            return CaughtUp(None)
        ids, users, agents, _, blobs, flags = (list(column) for column in zip(*rows, strict=True))
        fresh = build(model, version, dim, ids, users, agents, flags, blobs)
        return CaughtUp(replace(fresh, loaded_from="log"))
    return CaughtUp(_applied(base, version, set(changed), rows))


Row = tuple[str, str, str, int, bytes, bool]


def _current_rows(conn: sqlite3.Connection, model: str, ids: list[str]) -> list[Row]:
    """``(id, user, agent, dim, vector, archived)`` of those of ``ids`` that have a vector of
    ``model`` now."""
    cursor = conn.cursor()
    cursor.row_factory = None
    found: list[Row] = []
    try:
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            marks = ", ".join("?" * len(chunk))  # a count of placeholders, never input
            for memory_id, user, agent, dim, blob, archived in cursor.execute(
                "SELECT id, user_id, agent_id, embedding_dim, embedding, "
                "archived_at IS NOT NULL FROM memories WHERE embedding_model = ? "
                f"AND embedding IS NOT NULL AND id IN ({marks})",
                (model, *chunk),
            ):
                found.append(
                    (str(memory_id), str(user), str(agent), int(dim), bytes(blob), bool(archived))
                )
    finally:
        cursor.close()
    return found


def _applied(
    base: ModelVectors, version: int, changed: set[str], rows: list[Row]
) -> ModelVectors | None:
    """A new cache: ``base`` with the rows of ``changed`` memories dead, then ``rows``."""
    dead = base.dead
    spare = base.spare
    if spare is not None and spare.used == base.size:
        # The longest cache on its matrix: find the rows by id (the live row of a memory,
        # if any, is always its last; the others are dead). A few ids are looked up in a
        # mapped file's ids as they are; more make an index of them once.
        if spare.rows is None and base.ids.undecoded and len(changed) <= _LOOKUPS:
            found = (base.ids.last_row(memory_id) for memory_id in changed)
        else:
            if spare.rows is None:
                spare.rows = dict(zip(base.ids.tolist(), range(base.size), strict=True))
            found = (spare.rows.get(memory_id) for memory_id in changed)
        dropped = [row for row in found if row is not None and (dead is None or not dead[row])]
    else:
        dropped = [
            row
            for row, memory_id in enumerate(base.ids.tolist())
            if memory_id in changed and (dead is None or not dead[row])
        ]
    alive = base.size - len(dropped) - (0 if dead is None else int(np.count_nonzero(dead)))
    if alive + len(rows) == 0:
        return None
    if dropped:
        dead = np.zeros(base.size, dtype=np.bool_) if dead is None else dead.copy()
        dead[dropped] = True
    return extended(
        replace(base, dead=dead, _filters={}),
        version,
        [row[0] for row in rows],
        [(row[1], row[2]) for row in rows],
        [row[5] for row in rows],
        [row[4] for row in rows],
        "log",
    )


def extended(
    base: ModelVectors,
    version: int,
    ids: list[str],
    scopes: list[tuple[str, str]],
    archived: list[bool],
    blobs: list[bytes],
    loaded_from: Literal["delta", "log"],
) -> ModelVectors:
    """``base`` with new rows (vectors of ``base.dim``), as of ``version``.

    Appending copies no old vector when ``base`` ends its matrix's used part and there is
    room: the new columns go after it (see :class:`.vectors.Spare`). Otherwise the vectors
    are copied into a new matrix with room to grow, without the dead rows. Dead rows are
    also dropped once they are more than an eighth of the rows."""
    n, added = base.size, len(ids)
    dead = base.dead
    dead_rows = [] if dead is None else np.flatnonzero(dead).tolist()
    spare = base.spare
    in_place = (
        len(dead_rows) <= n // 8
        and (added == 0 or (spare is not None and spare.used == n))
        and (spare is None or spare.array.shape[1] >= n + added)
    )
    codes_of = dict(zip(base.scopes, range(len(base.scopes)), strict=True))
    codes = np.asarray([codes_of.setdefault(pair, len(codes_of)) for pair in scopes], np.int32)
    flags = np.asarray(archived, dtype=np.bool_)
    vectors = normalised(ids, blobs, base.dim)
    if in_place:
        columns = base.columns
        if added:
            assert spare is not None
            spare.array[:, n : n + added] = vectors
            spare.used = n + added
            if spare.rows is not None:
                spare.rows.update(zip(ids, range(n, n + added), strict=True))
            columns = spare.array[:, : n + added]
        return replace(
            base,
            version=version,
            ids=base.ids.plus(ids) if added else base.ids,
            columns=columns,
            scope_codes=np.concatenate([base.scope_codes, codes]),
            scopes=tuple(codes_of),
            archived=np.concatenate([base.archived, flags]),
            dead=None if dead is None else np.concatenate([dead, np.zeros(added, np.bool_)]),
            _filters={},
            loaded_from=loaded_from,
        )
    kept = n - len(dead_rows)
    total = kept + added
    room = Spare(np.empty((base.dim, total + headroom(total)), np.float32), total)
    at = 0
    for start, end in _runs(dead_rows, n):
        room.array[:, at : at + end - start] = base.columns[:, start:end]
        at += end - start
    room.array[:, kept:total] = vectors
    keep = np.ones(n, dtype=np.bool_) if dead is None else ~dead
    old_ids = base.ids.tolist()
    if dead is not None:
        old_ids = [i for i, k in zip(old_ids, keep.tolist(), strict=True) if k]
    return replace(
        base,
        version=version,
        ids=IdColumn([*old_ids, *ids]),
        columns=room.array[:, :total],
        scope_codes=np.concatenate([base.scope_codes[keep], codes]),
        scopes=tuple(codes_of),
        archived=np.concatenate([base.archived[keep], flags]),
        dead=None,
        spare=room,
        _filters={},
        loaded_from=loaded_from,
    )


def _runs(dropped: list[int], size: int) -> list[tuple[int, int]]:
    """The ``[start, end)`` runs of rows between the ``dropped`` ones (ascending)."""
    runs = []
    start = 0
    for row in [*dropped, size]:
        if row > start:
            runs.append((start, row))
        start = row + 1
    return runs
