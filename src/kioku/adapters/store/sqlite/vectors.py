"""Vector search for the SQLite store: exact cosine over an in-process float32 cache.

For each embedding model the store keeps, in process, every vector of that model normalised
and transposed into one ``(dim, n)`` matrix, with parallel arrays of ids, scope codes and an
archived mask. A search screens every row and decides the best exactly
(:mod:`.vector_scan`); the masks of the filters in use are cached with the matrix.

The cache is invalidated by a version, ``vectors_version`` in the ``state`` table, which every
write that changes what vector search can see (an insert or delete of a memory with a vector,
an update of ``embedding`` or ``archived_at``) sets to a fresh random 62-bit number in its own
transaction. Reading it is one small query per search, and it also reveals other processes'
writes. Versions are only ever compared for equality: a random one, unlike a counter, does not
come back after a rolled-back write or when a backup is restored, so a cache (in process or
in the file of :mod:`.vector_file`) built at one version is never taken for another state.

Each such write also logs the ids it changed with the version it set, so a cache at an older
version is usually brought up to date from the log (:mod:`.vector_log`) rather than reloaded.

:func:`load` reads the version's rows in the caller's snapshot, so the cache it returns is
exactly the state that version names, whatever other processes write meanwhile. It first
asks the persisted file, when the caller passes one, and builds from the blobs otherwise;
:attr:`ModelVectors.loaded_from` says which.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Literal, Protocol

import numpy as np
import numpy.typing as npt

from kioku.adapters.store.sqlite.vector_lite import clip_similarity, unit_query
from kioku.adapters.store.sqlite.vector_scan import top_rows
from kioku.adapters.store.sqlite.vector_version import (
    VECTORS_VERSION,
    bump_version,
    embedding_models,
    read_version,
)
from kioku.errors import StoreError, ValidationError
from kioku.logs import LazyLogger

__all__ = [
    "VECTORS_VERSION",
    "IdColumn",
    "ModelVectors",
    "SavedVectors",
    "Spare",
    "build",
    "bump_version",
    "embedding_models",
    "headroom",
    "load",
    "normalised",
    "read_version",
    "top_matches",
]

_log = LazyLogger(__name__)

_LITTLE_F32: Final = np.dtype("<f4")
#: Rows converted and transposed at a time while loading (bounds the extra memory).
_LOAD_CHUNK: Final = 1024
#: Filter masks kept per cache; a store with more scopes recomputes the rest.
_MAX_FILTERS: Final = 32

FloatMatrix = npt.NDArray[np.float32]
#: (user_id, agent_id, archived) of a search filter.
FilterKey = tuple[str | None, str | None, bool | None]


class IdColumn:
    """The ids of a cache's rows, by row: a list, or (from the cache file) the ids' UTF-8 joined
    by NUL with where each ends, decoded one at a time, and any ids appended after them. A
    search needs the ids of a few hundred rows at most; decoding all of them up front would
    cost a hook's fresh process several milliseconds (a second at a million rows)."""

    __slots__ = ("_ends", "_joined", "_list", "_more")

    def __init__(self, ids: Sequence[str]) -> None:
        self._list: list[str] | None = list(ids)
        self._joined = b""
        self._ends: npt.NDArray[np.uint32] = np.zeros(0, dtype=np.uint32)
        self._more: list[str] = []

    @classmethod
    def joined(cls, joined: bytes, ends: npt.NDArray[np.uint32]) -> IdColumn:
        """The ids of ``joined`` (UTF-8 joined by NUL), id ``r`` ending at ``ends[r]``;
        ValueError when the two do not agree."""
        column = cls(())
        column._list = None
        if ends.size == 0 or int(ends[-1]) != len(joined):
            raise ValueError("the id ends do not match the ids")
        cuts = ends[:-1].astype(np.int64)
        if cuts.size and (
            int(np.diff(ends.astype(np.int64)).min(initial=1)) < 1
            or not bool((np.frombuffer(joined, dtype=np.uint8)[cuts] == 0).all())
        ):
            raise ValueError("the id ends do not fall on separators")
        column._joined = joined
        column._ends = ends
        return column

    def __len__(self) -> int:
        if self._list is not None:
            return len(self._list)
        return int(self._ends.size) + len(self._more)

    def __getitem__(self, row: int) -> str:
        if self._list is not None:
            return self._list[row]
        size = int(self._ends.size)
        if row >= size:
            return self._more[row - size]
        start = int(self._ends[row - 1]) + 1 if row else 0
        return self._joined[start : int(self._ends[row])].decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def tolist(self) -> list[str]:
        if self._list is None:
            self._list = self._joined.decode("utf-8").split("\x00") + self._more
        return list(self._list)

    @property
    def undecoded(self) -> bool:
        """Whether the ids are still the joined UTF-8 of a file (see :meth:`last_row`)."""
        return self._list is None

    def last_row(self, memory_id: str) -> int | None:
        """The last row holding ``memory_id`` (None: none), found in the joined ids without
        decoding them (about 10 ms at a million ids, against a second to decode them all and
        index them); on a decoded column, a scan from the end."""
        if self._list is not None:
            for row in range(len(self._list) - 1, -1, -1):
                if self._list[row] == memory_id:
                    return row
            return None
        size = int(self._ends.size)
        for row in range(len(self._more) - 1, -1, -1):
            if self._more[row] == memory_id:
                return size + row
        wanted = memory_id.encode("utf-8")
        joined = self._joined
        if joined.endswith(b"\x00" + wanted) or joined == wanted:
            return size - 1
        at = joined.rfind(b"\x00" + wanted + b"\x00")
        if at >= 0:
            end = at + 1 + len(wanted)
            row = int(np.searchsorted(self._ends, end))
            return row if row < size and int(self._ends[row]) == end else None
        return 0 if joined.startswith(wanted + b"\x00") else None

    def plus(self, ids: Sequence[str]) -> IdColumn:
        """These ids, then ``ids`` (a new column; the joined ones stay undecoded)."""
        column = IdColumn(())
        if self._list is None:
            column._list = None
            column._joined, column._ends = self._joined, self._ends
            column._more = self._more + list(ids)
        else:
            column._list = self._list + list(ids)
        return column


class Spare:
    """A matrix with room for more columns than its caches use: ``array[:, :used]`` is the
    longest cache made on it, and only a cache of that length may write the next columns
    (which no cache made on it reads), so none of them ever sees a change."""

    __slots__ = ("array", "origin", "rows", "used")

    def __init__(
        self, array: FloatMatrix, used: int, origin: tuple[int, int] | None = None
    ) -> None:
        self.array = array
        self.used = used
        #: id -> its last row in ``array[:, :used]`` (made when first needed)
        self.rows: dict[str, int] | None = None
        #: ``(version, rows)`` of the cache file ``array`` is a private mapping of (None: an
        #: array in memory); see :mod:`.vector_tail`
        self.origin = origin


@dataclass(frozen=True, slots=True, eq=False)
class ModelVectors:
    """Every vector of one model as of ``version``; never changed once built."""

    model: str
    version: int
    dim: int
    ids: IdColumn
    columns: FloatMatrix  # (dim, n), C order; vectors normalised (zero ones stay zero)
    scope_codes: npt.NDArray[np.int32]
    scopes: tuple[tuple[str, str], ...]  # code -> (user_id, agent_id)
    archived: npt.NDArray[np.bool_]
    #: filter -> (rows it leaves out, or None for none; how many it keeps)
    _filters: dict[FilterKey, tuple[npt.NDArray[np.bool_] | None, int]] = field(
        default_factory=dict, repr=False
    )
    #: Where it came from: built from the database's rows, mapped from the cache file,
    #: extended by this process's own inserts (:mod:`.vector_delta`), or brought up to date
    #: from the change log (:mod:`.vector_log`); the last two are written to a file only
    #: when asked.
    loaded_from: Literal["sqlite", "file", "delta", "log"] = "sqlite"
    #: The model also has vectors of other dimensions, which this cache leaves out: it is
    #: never carried forward nor written to a file (the majority may change).
    mixed: bool = False
    #: Rows of memories deleted or changed since (their new state is a later row), which no
    #: filter keeps (None: none); see :mod:`.vector_log`.
    dead: npt.NDArray[np.bool_] | None = None
    #: The matrix ``columns`` is the start of, when it has room to grow in place.
    spare: Spare | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return int(self.columns.shape[1])

    def live(self) -> ModelVectors:
        """The same vectors without the ``dead`` rows (itself when it has none)."""
        if self.dead is None or not self.dead.any():
            return self
        keep = ~self.dead
        return replace(
            self,
            ids=IdColumn([i for i, k in zip(self.ids.tolist(), keep.tolist(), strict=True) if k]),
            columns=np.ascontiguousarray(self.columns[:, keep]),
            scope_codes=self.scope_codes[keep],
            archived=self.archived[keep],
            dead=None,
            spare=None,
            _filters={},
        )

    def check_query(self, query: Sequence[float]) -> npt.NDArray[np.float32] | None:
        """The normalised query, or None for a zero vector; StoreError on a wrong dimension."""
        if len(query) != self.dim:
            raise StoreError(
                f"the query vector has dimension {len(query)} but the stored vectors of "
                f"model {self.model!r} have dimension {self.dim}",
                hint=(
                    "the embedding model changed its output size: run `kioku reembed` to "
                    "recompute the stored vectors with the configured model"
                ),
            )
        try:
            vector = np.asarray(query, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValidationError("query", self.model, "a sequence of numbers") from exc
        if not np.all(np.isfinite(vector)):
            raise ValidationError("query", self.model, "a vector of finite numbers")
        unit = unit_query(vector.tolist(), self.dim)  # as vector_lite does it
        if unit is None or not any(unit):
            return None
        result: npt.NDArray[np.float32] = np.frombuffer(unit, dtype=np.float32)
        return result

    def excluded(
        self, user_id: str | None, agent_id: str | None, archived: bool | None
    ) -> tuple[npt.NDArray[np.bool_] | None, int]:
        """The rows the scope and archived filter leave out (None: none) and how many rows it
        keeps; remembered, since the vectors never change and recall repeats one filter."""
        key = (user_id, agent_id, archived)
        known = self._filters.get(key)
        if known is None:
            mask = self.mask(user_id, agent_id, archived)
            if mask is None or bool(mask.all()):
                known = (None, self.size)
            else:
                known = (~mask, int(np.count_nonzero(mask)))
            if len(self._filters) >= _MAX_FILTERS:
                self._filters.clear()
            self._filters[key] = known
        return known

    def mask(
        self, user_id: str | None, agent_id: str | None, archived: bool | None
    ) -> npt.NDArray[np.bool_] | None:
        """A boolean row mask for the scope and archived filter (None: every row); rows of
        ``dead`` are never in it."""
        mask: npt.NDArray[np.bool_] | None = None if self.dead is None else ~self.dead
        if user_id is not None or agent_id is not None:
            codes = [
                code
                for code, (user, agent) in enumerate(self.scopes)
                if (user_id is None or user == user_id) and (agent_id is None or agent == agent_id)
            ]
            if len(codes) == 1:
                scoped = self.scope_codes == codes[0]
            else:
                scoped = np.isin(self.scope_codes, np.asarray(codes, dtype=np.int32))
            mask = scoped if mask is None else mask & scoped
        if archived is not None:
            wanted = self.archived if archived else ~self.archived
            mask = wanted if mask is None else mask & wanted
        return mask


class SavedVectors(Protocol):
    """Where caches are kept between processes (:class:`.vector_file.VectorFiles`, which
    builds on this module, so it is named here by what :func:`load` asks of it)."""

    def read(self, model: str, version: int | None) -> ModelVectors | None:
        """The cache of ``model`` saved exactly as of ``version`` (None: as of whatever
        version it was saved at), or None."""
        ...


def load(
    conn: sqlite3.Connection, model: str, version: int, files: SavedVectors | None = None
) -> ModelVectors | None:
    """Every vector of ``model`` as of ``version``, which the caller read in the snapshot
    ``conn`` is in; None when the store holds none. From the cache file in ``files`` when it
    holds exactly that version, else from the rows (the caller may then write the file)."""
    if files is not None:
        saved = files.read(model, version)
        if saved is not None:
            return saved
    started = time.perf_counter()
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples: much faster than sqlite3.Row for 10^5 rows
    rows = cursor.execute(
        "SELECT id, user_id, agent_id, archived_at IS NOT NULL, embedding_dim, embedding "
        "FROM memories WHERE embedding_model = ? AND embedding IS NOT NULL",
        (model,),
    ).fetchall()
    cursor.close()
    if not rows:
        return None
    ids, users, agents, flags, dims, blobs = zip(*rows, strict=True)
    counts = Counter(dims)
    dim = int(counts.most_common(1)[0][0])
    if len(counts) > 1:
        _log.warning(
            "model %r has vectors of several dimensions %s; using the %d-dimensional ones "
            "(run `kioku reembed`)",
            model,
            sorted(counts),
            dim,
        )
        keep = [i for i, d in enumerate(dims) if d == dim]
        ids, users, agents, flags, blobs = (
            tuple(column[i] for i in keep) for column in (ids, users, agents, flags, blobs)
        )
    width = dim * 4
    bad = next((i for i, blob in zip(ids, blobs, strict=True) if len(blob) != width), None)
    if bad is not None:
        raise StoreError(
            f"memory {bad!r} has an embedding whose size does not match its dimension {dim}",
            hint="run `kioku doctor`; fix the row with the sqlite3 shell or restore a backup",
        )
    loaded = build(model, version, dim, ids, users, agents, flags, blobs)
    if len(counts) > 1:
        loaded = replace(loaded, mixed=True)
    _log.debug(
        "vector cache: loaded %d vectors of %r (dim %d) in %.1f ms",
        len(ids),
        model,
        dim,
        (time.perf_counter() - started) * 1000,
    )
    return loaded


def build(
    model: str,
    version: int,
    dim: int,
    ids: Sequence[str],
    users: Sequence[str],
    agents: Sequence[str],
    archived: Sequence[bool],
    blobs: Sequence[bytes],
) -> ModelVectors:
    """The cache of one model from its rows (blobs: little-endian float32, ``dim`` each)."""
    scopes: dict[tuple[str, str], int] = {}
    codes = [scopes.setdefault(pair, len(scopes)) for pair in zip(users, agents, strict=True)]
    n = len(blobs)
    # Room for the vectors later writes add (see .vector_log), at a sixteenth more memory.
    room = Spare(np.empty((dim, n + headroom(n)), dtype=np.float32), n)
    return ModelVectors(
        model=model,
        version=version,
        dim=dim,
        ids=IdColumn(ids),
        columns=normalised(ids, blobs, dim, room.array),
        scope_codes=np.asarray(codes, dtype=np.int32),
        scopes=tuple(scopes),
        archived=np.asarray(archived, dtype=np.bool_),
        spare=room,
    )


def headroom(n: int) -> int:
    """Spare columns given to a matrix of ``n`` vectors."""
    return max(256, n // 16)


def normalised(
    ids: Sequence[object], blobs: Sequence[bytes], dim: int, into: FloatMatrix | None = None
) -> FloatMatrix:
    """The blobs as normalised vectors, transposed into a ``(dim, n)`` matrix a chunk at a
    time: small chunks keep the transposing copy in the CPU cache (four times faster than
    large ones) and loading never holds a second full copy. A vector with a NaN or infinite
    component cannot be compared: it becomes a zero vector, found by no query. With ``into``
    (at least ``n`` columns), its first ``n`` columns are filled and returned."""
    if into is None:
        into = np.empty((dim, len(blobs)), dtype=np.float32)
    columns = into[:, : len(blobs)]
    broken = 0
    for start in range(0, len(blobs), _LOAD_CHUNK):
        chunk = np.frombuffer(b"".join(blobs[start : start + _LOAD_CHUNK]), dtype=_LITTLE_F32)
        rows = chunk.reshape(-1, dim).astype(np.float32)  # native byte order, writable
        finite = np.isfinite(rows).all(axis=1)
        if not finite.all():
            if not broken:
                first = ids[start + int(np.flatnonzero(~finite)[0])]
                _log.warning("memory %r has a vector with non-finite components", first)
            broken += int((~finite).sum())
            rows[~finite] = 0.0
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows, dtype=np.float64)).astype(np.float32)
        np.divide(rows, norms[:, None], out=rows, where=norms[:, None] > 0)
        columns[:, start : start + rows.shape[0]] = rows.T
    if broken:
        _log.warning(
            "vector search ignores %d vectors with non-finite components (run `kioku reembed`)",
            broken,
        )
    return columns


def top_matches(
    vectors: ModelVectors,
    query: Sequence[float],
    user_id: str | None,
    agent_id: str | None,
    archived: bool | None,
    limit: int,
) -> list[tuple[str, float]]:
    """``(id, cosine similarity)`` of the ``limit`` nearest rows in the filter, best first."""
    unit = vectors.check_query(query)
    if unit is None or limit <= 0:
        return []
    excluded, kept = vectors.excluded(user_id, agent_id, archived)
    best = top_rows(vectors.columns, vectors.ids, unit, excluded, kept, limit)
    return [(vectors.ids[row], clip_similarity(score)) for row, score in best]
