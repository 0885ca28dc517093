"""The vector cache of a SQLite store, persisted beside the database file.

Building the ``(dim, n)`` float32 matrix of one model from SQLite blobs takes most of a fresh
process's first vector search (about 0.3 s at 36,500 384-dimensional vectors), and Claude
Code's hook is such a process on every prompt. So once a process has built the matrix it
writes it to ``<db>.vectors/<hash of the model>.vec``, and the next process maps that file
instead of reading the blobs.

A file is used only when it describes exactly what the database holds now: its header names
the model, the dimension, the row count, the byte order and the store's ``vectors_version``
(see :mod:`.vectors`), which the reader compares with the version it read in the same
snapshot as it would read the rows. Every write that changes what vector search sees sets
that version to a fresh random number, so a file from before any such write (in this
process, another one, or a database restored from a backup) never matches. A file whose
header, sizes or checksum do not hold up is ignored; the store rebuilds from SQLite and
writes the file again. Deleting the files is always safe: they hold nothing SQLite does not.

The layout is described in :mod:`.vector_layout` (format 3): the transposed float32 matrix
with room for more vectors, scope codes, archived flags and ids, plus a quantised copy of the
matrix (one byte per component, with a step per row) and where each id ends, which let
:mod:`.vector_lite` search the file without numpy.

Reading maps the file privately (copy on write): the matrix is a view of the mapping, not a
copy, and a search whose query has few non-zero components reads only those rows of it. Later
writes append their vectors to the mapping's spare columns, which copies only the pages they
touch and never changes the file. A file without a quantised copy (past ``QUANTISED_MAX_ROWS``
rows) is then brought up to date by a small tail file beside it (:mod:`.vector_tail`) rather
than written again, until its spare columns run out or an eighth of its rows are dead.

The hot path checks the sizes and the trailing CRC, which covers the header, ids, scope codes
and archived flags (a few dozen bytes per vector), but not the matrix, which would mean reading
all of it.
A crash cannot leave a torn matrix behind, because a file is complete and synced to disk
before it is renamed into place; damage to a whole file on disk is found by
:meth:`VectorFiles.verify`, which also checks the matrix against its CRC in the header (an
explicit check, like ``PRAGMA integrity_check`` for the database itself). Files are written to
a temporary name in the same directory (owner-only modes: 0o600 files in a 0o700 directory),
and writing is best-effort: a failure is logged at debug level and the search goes on.

The file holds ids, scopes and vectors, never memory text. Erasing a memory removes the
files and tails (the next search writes them again without it).
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import sys
import time
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from kioku.adapters.store.sqlite.connection import OWNER_ONLY_DIR, OWNER_ONLY_FILE
from kioku.adapters.store.sqlite.vector_ann import ANN_SUFFIXES, GRAPH_SUFFIX
from kioku.adapters.store.sqlite.vector_layout import (
    ALIGN,
    CRC_BYTES,
    FORMAT_VERSION,
    LENGTH_BYTES,
    LEVEL_SPAN,
    LEVEL_ZERO,
    MAGIC,
    QUANTISED_MAX_ROWS,
    SEPARATOR,
    SUFFIX,
    Layout,
    cache_dir,
    file_name,
    file_version,
    sections,
)
from kioku.adapters.store.sqlite.vector_tail import (
    TAIL_SUFFIX,
    TailPlan,
    apply_tail,
    check_tail,
    encode_tail,
    plan_tail,
)
from kioku.adapters.store.sqlite.vectors import IdColumn, ModelVectors, Spare, headroom
from kioku.logs import LazyLogger

__all__ = ["FORMAT_VERSION", "SUFFIX", "VectorFiles", "cache_dir", "damaged_files"]

_log = LazyLogger(__name__)

#: Temporary files older than this were left by a writer that died: removed on the next write.
_STALE_TEMP_SECONDS: Final = 600.0
#: A tail may hold this many rows (dead ones included) whatever the file's size; past it and
#: past an eighth of the file's rows, the whole file is written again.
MIN_TAIL_ROWS: Final = 256


def graph_bytes(db_path: Path) -> int:
    """The size of the HNSW graph files (:mod:`.vector_ann`) beside the database's vector
    cache, for ``kioku doctor``: 0 when there is none."""
    directory = cache_dir(db_path)
    if directory is None or not directory.is_dir():
        return 0
    return sum(
        entry.stat().st_size for entry in directory.glob(f"*{GRAPH_SUFFIX}") if entry.is_file()
    )


def damaged_files(db_path: Path) -> list[str]:
    """Problems with the cache files of the database at ``db_path``, for ``kioku check``: a
    file of the current format whose matrices do not match their checksums (searches check
    only the rest, so damage there would go unnoticed), each with the fix."""
    directory = cache_dir(db_path)
    if directory is None or not directory.is_dir():
        return []
    problems: list[str] = []
    for entry in sorted(directory.iterdir()):
        if entry.name.endswith(TAIL_SUFFIX):
            try:
                check_tail(entry)
            except Exception as exc:
                problems.append(
                    f"the vector cache tail file {entry} is damaged ({exc}); fix: delete it "
                    f"(rm {entry}): searches then catch up from the database"
                )
            continue
        if not entry.name.endswith(SUFFIX):
            continue
        try:
            if file_version(entry) is None:
                continue  # another format: pruned at the next write, never read
            with open(entry, "rb") as file:
                Layout.of(memoryview(file.read()), deep=True)
        except Exception as exc:
            problems.append(
                f"the vector cache file {entry} is damaged ({exc}); fix: delete it "
                f"(rm {entry}): the next search writes it again from the database"
            )
    return problems


class VectorFiles:
    """The cache files of one database: :meth:`read` one back, :meth:`write` one, or
    :meth:`remove` them all. Never raises: trouble means "no file" and a debug log line.

    ``quantised_max_rows``: files of more rows keep no quantised copy, and are brought up to
    date by tail files (see the module's docstring)."""

    def __init__(self, db_path: Path, *, quantised_max_rows: int = QUANTISED_MAX_ROWS) -> None:
        self._db = db_path
        self._dir = cache_dir(db_path)
        self._quantised_max = quantised_max_rows

    @property
    def directory(self) -> Path | None:
        return self._dir

    def path(self, model: str) -> Path | None:
        """The file of ``model`` (None: this database keeps no files)."""
        if self._dir is None:
            return None
        return self._dir / file_name(model)

    def tail_path(self, model: str) -> Path | None:
        """The tail file of ``model`` (see :mod:`.vector_tail`)."""
        path = self.path(model)
        return None if path is None else path.with_suffix(TAIL_SUFFIX)

    # -- reading -------------------------------------------------------------------------

    def read(self, model: str, version: int | None) -> ModelVectors | None:
        """The vectors of ``model`` as of ``version`` from its file, or None when there is no
        file or it does not describe exactly that (stale, foreign, damaged). With ``version``
        None, the file as of the version it was written at (which :mod:`.vector_log` may
        bring up to date)."""
        path = self.path(model)
        if path is None or (version is not None and version <= 0):
            return None
        started = time.perf_counter()
        try:
            loaded = _read(path, model)
        except FileNotFoundError:
            return None
        except Exception as exc:  # any damage means "rebuild": never fail a search
            _log.debug("vector cache: ignoring %s (%s: %s)", path, type(exc).__name__, exc)
            return None
        if version != loaded.version:
            tail = path.with_suffix(TAIL_SUFFIX)
            try:
                extended = apply_tail(tail, loaded)
            except Exception as exc:  # the file alone is still right for its version
                _log.debug("vector cache: ignoring %s (%s: %s)", tail, type(exc).__name__, exc)
                extended = None
            if extended is not None:
                loaded = extended
            if version is not None and loaded.version != version:
                return None  # stale: a write since, or another database: rebuild, quietly
        _log.debug(
            "vector cache: mapped %d vectors of %r from %s in %.1f ms",
            loaded.size,
            model,
            path,
            (time.perf_counter() - started) * 1000,
        )
        return loaded

    # -- writing -------------------------------------------------------------------------

    def write(self, vectors: ModelVectors) -> Path | None:
        """Persist ``vectors`` (best-effort); the file written, or None when it was not."""
        path = self.path(vectors.model)
        if path is None or vectors.version <= 0 or not os.access(self._db, os.W_OK):
            return None  # in memory, no version to tie it to, or a read-only store
        if vectors.mixed:
            return None  # leaves out vectors of another dimension: never carried forward
        started = time.perf_counter()
        tail = path.with_suffix(TAIL_SUFFIX)
        try:
            plan = self._tail_plan(vectors, path)
            if plan is not None:
                tail_parts = encode_tail(plan)
                if tail_parts is not None:
                    _write_atomically(tail, tail_parts)
                    _log.debug(
                        "vector cache: wrote a tail of %d rows (%d dead) of %r to %s in %.1f ms",
                        len(plan.rows),
                        len(plan.dead),
                        vectors.model,
                        tail,
                        (time.perf_counter() - started) * 1000,
                    )
                    return tail
            parts = _encode(vectors, self._quantised_max)
            if parts is None:
                return None
            _make_dir(path.parent)
            _remove_stale_temps(path.parent)
            _write_atomically(path, parts)
            with contextlib.suppress(FileNotFoundError):
                tail.unlink()  # it extends the file just replaced
            _prune(path.parent, keep=path, version=vectors.version)
        except Exception as exc:  # best-effort: the search has its answer already
            _log.debug("vector cache: not written to %s (%s: %s)", path, type(exc).__name__, exc)
            return None
        _log.debug(
            "vector cache: wrote %d vectors of %r to %s in %.1f ms",
            vectors.size,
            vectors.model,
            path,
            (time.perf_counter() - started) * 1000,
        )
        return path

    def _tail_plan(self, vectors: ModelVectors, path: Path) -> TailPlan | None:
        """The tail to write for ``vectors`` instead of a whole file, when it grew in place
        from the file now at ``path`` and that file has no quantised copy to keep current."""
        spare = vectors.spare
        if spare is None or spare.origin is None or spare.origin[1] <= self._quantised_max:
            return None
        plan = plan_tail(vectors, max(MIN_TAIL_ROWS, spare.origin[1] // 8))
        if plan is None or file_version(path) != plan.base_version:
            return None
        return plan

    def verify(self, model: str) -> bool:
        """Whether the file of ``model`` is whole, the matrix's CRC included (reads all of
        it; searches skip that part, see the module's docstring)."""
        path = self.path(model)
        if path is None:
            return False
        try:
            with open(path, "rb") as file:
                Layout.of(memoryview(file.read()), deep=True)
        except Exception:
            return False
        return True

    def remove(self) -> None:
        """Delete every cache file of this database (after an erasure), and the temporary
        ones being written (their writer's rename then fails); never raises."""
        if self._dir is None:
            return
        try:
            entries = list(self._dir.iterdir())
        except OSError:
            return
        for entry in entries:
            if entry.name.endswith((SUFFIX, TAIL_SUFFIX, *ANN_SUFFIXES)) or is_temp(entry):
                with contextlib.suppress(OSError):
                    entry.unlink()


class _Rows:
    """The matrix section: each row of the ``(dim, n)`` matrix without the dead columns, made
    contiguous one at a time, so writing never copies the whole matrix (a cache that grew in
    place is a strided view of a larger array; one with dead rows would need a copy without
    them). Each row is followed by ``pad`` zeros in the file (its spare columns)."""

    def __init__(
        self, columns: npt.NDArray[np.float32], keep: npt.NDArray[np.bool_] | None, pad: int
    ):
        self.columns = columns
        self.keep = keep
        self.zeros = bytes(4 * pad)

    def __iter__(self) -> Iterator[npt.NDArray[np.float32]]:
        for row in self.columns:
            picked = row if self.keep is None else row[self.keep]
            yield np.ascontiguousarray(picked, dtype=np.float32)


def _encode(vectors: ModelVectors, quantised_max: int) -> list[bytes | memoryview | _Rows] | None:
    """The file's parts (the dead rows left out), or None when the vectors cannot round-trip
    exactly through the format (an id or scope that is not text, an id that holds a NUL)."""
    dead = vectors.dead
    keep = None if dead is None or not dead.any() else ~dead
    ids = vectors.ids.tolist()
    if keep is not None:
        ids = [i for i, k in zip(ids, keep.tolist(), strict=True) if k]
    if not all(isinstance(i, str) and SEPARATOR not in i for i in ids):
        _log.debug("vector cache: an id cannot be stored in the file; not written")
        return None
    if not all(isinstance(part, str) for scope in vectors.scopes for part in scope):
        return None
    n, dim = len(ids), vectors.dim
    capacity = n + headroom(n)
    rows = _Rows(vectors.columns, keep, capacity - n)
    quantised = n <= quantised_max
    columns_crc, scales, levels = _checksum_and_quantise(rows, dim, n, quantised)
    scope_codes = vectors.scope_codes if keep is None else vectors.scope_codes[keep]
    flags = vectors.archived if keep is None else vectors.archived[keep]
    codes = np.ascontiguousarray(scope_codes, dtype=np.int32).data.cast("B")
    encoded = [i.encode("utf-8") for i in ids]
    ends = np.cumsum([len(i) for i in encoded], dtype=np.int64) + np.arange(n, dtype=np.int64)
    id_bytes = SEPARATOR.encode("ascii").join(encoded)
    if n and int(ends[-1]) >= 1 << 32:
        return None  # ids of more than 4 GB: not in this format
    id_ends = ends.astype(np.uint32).data.cast("B")
    archived = np.ascontiguousarray(flags, dtype=np.bool_).data.cast("B")
    header = json.dumps(
        {
            "format": FORMAT_VERSION,
            "model": vectors.model,
            "version": vectors.version,
            "dim": dim,
            "n": n,
            "capacity": capacity,
            "byteorder": sys.byteorder,
            "scopes": [list(scope) for scope in vectors.scopes],
            "sections": sections(dim, n, len(id_bytes), quantised, capacity),
            "quantised": quantised,
            "columns_crc32": columns_crc,
            "levels_crc32": zlib.crc32(levels),
        },
        sort_keys=True,
    ).encode("utf-8")
    start = len(MAGIC) + LENGTH_BYTES + len(header)
    head: list[bytes] = [
        MAGIC,
        len(header).to_bytes(LENGTH_BYTES, "little"),
        header,
        b"\x00" * (-start % ALIGN),
    ]
    checked: list[bytes | memoryview] = [*head, scales, codes, id_ends, archived, id_bytes]
    crc = 0
    for part in checked:
        crc = zlib.crc32(part, crc)
    return [
        *head,
        rows,
        scales,
        codes,
        id_ends,
        archived,
        levels,
        id_bytes,
        crc.to_bytes(CRC_BYTES, "little"),
    ]


def _checksum_and_quantise(
    rows: _Rows, dim: int, n: int, quantised: bool
) -> tuple[int, bytes, bytes]:
    """One pass over the rows: the matrix section's CRC (spare columns included) and, when
    ``quantised``, its ``(scales, levels)``: per row a step ``max |x| / 127`` (float32) and each
    component as ``128 + round(x / step)`` (uint8), so that ``|x - step * (level - 128)| <=
    step / 2``. A row of zeros has step 0 and level 128."""
    crc = 0
    scales = np.zeros(dim if quantised else 0, dtype=np.float32)
    levels = np.full((dim, n) if quantised else (0, 0), LEVEL_ZERO, dtype=np.uint8)
    for j, row in enumerate(rows):
        crc = zlib.crc32(rows.zeros, zlib.crc32(row.data.cast("B"), crc))
        if not quantised:
            continue
        step = np.float32(float(np.abs(row).max(initial=0.0)) / LEVEL_SPAN)
        if step > 0:
            scaled = np.rint(row.astype(np.float64) / float(step))
            np.clip(scaled, -LEVEL_SPAN, LEVEL_SPAN, out=scaled)
            levels[j] = (scaled + LEVEL_ZERO).astype(np.uint8)
            scales[j] = step
    if not quantised:
        return crc, b"", b""
    return crc, scales.tobytes(), levels.tobytes()


def _read(path: Path, model: str) -> ModelVectors:
    with open(path, "rb") as file:
        if os.fstat(file.fileno()).st_size == 0:
            raise ValueError("an empty file")
        # Private: appending to the spare columns copies those pages, the file never changes.
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_COPY)
    view = memoryview(mapped)
    try:
        layout = Layout.of(view)
        header = layout.header
        saved = header.get("version")
        if not isinstance(saved, int) or saved <= 0:
            raise ValueError("no version")
        if header.get("model") != model or header.get("byteorder") != sys.byteorder:
            raise ValueError("another model or byte order")
        dim, n, capacity, at = layout.dim, layout.n, layout.capacity, layout.at
        scopes = tuple((user, agent) for user, agent in header["scopes"])
        if not all(isinstance(part, str) for scope in scopes for part in scope):
            raise ValueError("a scope that is not two strings")
        matrix = np.frombuffer(mapped, np.float32, dim * capacity, at["columns"])
        codes = np.frombuffer(mapped, dtype=np.int32, count=n, offset=at["scope_codes"])
        ends = np.frombuffer(mapped, dtype=np.uint32, count=n, offset=at["id_ends"])
        archived = np.frombuffer(mapped, dtype=np.bool_, count=n, offset=at["archived"])
        ids = IdColumn.joined(bytes(view[at["ids"] : at["end"]]), ends)
        if not 0 <= int(codes.min()) <= int(codes.max()) < len(scopes):
            raise ValueError("scope codes out of range")
    finally:
        view.release()  # the arrays keep the mapping alive on their own
    return ModelVectors(
        model=model,
        version=saved,
        dim=dim,
        ids=ids,
        columns=matrix.reshape(dim, capacity)[:, :n],
        scope_codes=codes,
        scopes=scopes,
        archived=archived,
        loaded_from="file",
        spare=Spare(matrix.reshape(dim, capacity), n, origin=(saved, n)),
    )


def _make_dir(directory: Path) -> None:
    if not directory.is_dir():
        directory.mkdir(mode=OWNER_ONLY_DIR, exist_ok=True)


def temp_path(path: Path) -> Path:
    """A fresh temporary name beside ``path`` (hidden, ``.tmp``: never read as a cache file,
    removed with the cache files and, once stale, by the next write)."""
    import secrets

    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")


def is_temp(entry: Path) -> bool:
    """Whether ``entry`` is named as :func:`temp_path` names files."""
    return entry.name.startswith(".") and entry.name.endswith(".tmp")


def write_synced(path: Path, parts: Sequence[bytes | memoryview | _Rows]) -> Path:
    """Write ``parts`` to a new owner-only temporary file beside ``path`` and sync it; its
    name is returned for the caller to rename (on failure the file is gone)."""
    temp = temp_path(path)
    fd = os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, OWNER_ONLY_FILE)
    try:
        with os.fdopen(fd, "wb") as file:
            for part in parts:
                if isinstance(part, _Rows):
                    for row in part:
                        file.write(row.data.cast("B"))
                        file.write(part.zeros)
                else:
                    file.write(part)
            file.flush()
            os.fsync(file.fileno())
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    return temp


def _write_atomically(path: Path, parts: Sequence[bytes | memoryview | _Rows]) -> None:
    """Write ``parts`` to a temporary file, sync it, and rename it to ``path``."""
    temp = write_synced(path, parts)
    try:
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _remove_stale_temps(directory: Path) -> None:
    """Temporary files a writer left when it was killed (they can be large)."""
    cutoff = time.time() - _STALE_TEMP_SECONDS
    for entry in directory.iterdir():
        if is_temp(entry):
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < cutoff:
                    entry.unlink()


def _prune(directory: Path, keep: Path, version: int) -> None:
    """Remove the files of other models that are stale at ``version`` (a model no longer
    written, after ``kioku reembed``) or of another format (an older kioku's); files that are
    current stay."""
    for entry in directory.iterdir():
        if entry == keep or not entry.name.endswith(SUFFIX):
            continue
        with contextlib.suppress(Exception):
            if file_version(entry) != version:
                entry.unlink()
