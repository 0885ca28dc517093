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

Layout (the header length and the CRC little-endian; the arrays in the writer's byte order,
which the header names: a reader of the other order rebuilds)::

    b"KIOKUVEC" | u64 header length | header (UTF-8 JSON) | zero padding to 64 bytes
    | columns: float32, (dim, n), C order | scope codes: int32, n | archived: uint8, n
    | ids: UTF-8, joined by NUL | u32 CRC-32 of everything but the columns

Reading maps the file: the matrix is a read-only view of the mapping, not a copy, and a
search whose query has few non-zero components reads only those rows of it. So the hot path
checks the sizes and the trailing CRC, which covers the header, ids, scope codes and archived
flags (a few dozen bytes per vector), but not the matrix, which would mean reading all of it.
A crash cannot leave a torn matrix behind, because a file is complete and synced to disk
before it is renamed into place; damage to a whole file on disk is found by
:meth:`VectorFiles.verify`, which also checks the matrix against its CRC in the header (an
explicit check, like ``PRAGMA integrity_check`` for the database itself). Files are written to
a temporary name in the same directory (owner-only modes: 0o600 files in a 0o700 directory),
and writing is best-effort: a failure is logged at debug level and the search goes on.

The file holds ids, scopes and vectors, never memory text. Erasing a memory removes the
files (the next search writes them again without it).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import mmap
import os
import sys
import time
import zlib
from pathlib import Path
from typing import Any, Final

import numpy as np

from kioku.adapters.store.sqlite.connection import OWNER_ONLY_DIR, OWNER_ONLY_FILE
from kioku.adapters.store.sqlite.vectors import ModelVectors

__all__ = ["FORMAT_VERSION", "SUFFIX", "VectorFiles", "cache_dir"]

_log = logging.getLogger(__name__)

#: Bumped whenever the layout changes; files of another format are rebuilt.
FORMAT_VERSION: Final = 1
#: The name of a cache file is a hash of its model plus this suffix.
SUFFIX: Final = ".vec"
_MAGIC: Final = b"KIOKUVEC"
_ALIGN: Final = 64
_LENGTH_BYTES: Final = 8
_CRC_BYTES: Final = 4
#: A header is a few hundred bytes plus the scopes; anything larger is not ours.
_MAX_HEADER: Final = 1 << 24
#: Temporary files older than this were left by a writer that died: removed on the next write.
_STALE_TEMP_SECONDS: Final = 600.0
_SEPARATOR: Final = "\x00"


def cache_dir(db_path: Path) -> Path | None:
    """Where the cache files of the database at ``db_path`` go (None: an in-memory one)."""
    name = str(db_path)
    if name == ":memory:" or name.startswith("file:") or not db_path.name:
        return None
    return db_path.with_name(db_path.name + ".vectors")


class VectorFiles:
    """The cache files of one database: :meth:`read` one back, :meth:`write` one, or
    :meth:`remove` them all. Never raises: trouble means "no file" and a debug log line."""

    def __init__(self, db_path: Path) -> None:
        self._db = db_path
        self._dir = cache_dir(db_path)

    @property
    def directory(self) -> Path | None:
        return self._dir

    def path(self, model: str) -> Path | None:
        """The file of ``model`` (None: this database keeps no files)."""
        if self._dir is None:
            return None
        digest = hashlib.sha256(model.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self._dir / f"{digest}{SUFFIX}"

    # -- reading -------------------------------------------------------------------------

    def read(self, model: str, version: int) -> ModelVectors | None:
        """The vectors of ``model`` as of ``version`` from its file, or None when there is no
        file or it does not describe exactly that (stale, foreign, damaged)."""
        path = self.path(model)
        if path is None or version <= 0:
            return None
        started = time.perf_counter()
        try:
            loaded = _read(path, model, version)
        except FileNotFoundError:
            return None
        except Exception as exc:  # any damage means "rebuild": never fail a search
            _log.debug("vector cache: ignoring %s (%s: %s)", path, type(exc).__name__, exc)
            return None
        if loaded is not None:
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
        started = time.perf_counter()
        try:
            parts = _encode(vectors)
            if parts is None:
                return None
            _make_dir(path.parent)
            _remove_stale_temps(path.parent)
            _write_atomically(path, parts)
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

    def verify(self, model: str) -> bool:
        """Whether the file of ``model`` is whole, the matrix's CRC included (reads all of
        it; searches skip that part, see the module's docstring)."""
        path = self.path(model)
        if path is None:
            return False
        try:
            with open(path, "rb") as file:
                _Layout.of(memoryview(file.read()), deep=True)
        except Exception:
            return False
        return True

    def remove(self) -> None:
        """Delete every cache file of this database (after an erasure); never raises."""
        if self._dir is None:
            return
        try:
            entries = list(self._dir.iterdir())
        except OSError:
            return
        for entry in entries:
            if entry.name.endswith(SUFFIX):
                with contextlib.suppress(OSError):
                    entry.unlink()


class _Layout:
    """Where the sections of a file are, once its structure and checksums hold up."""

    __slots__ = ("header", "ids", "offset", "size")

    def __init__(self, header: dict[str, Any], offset: int, ids: int, size: int) -> None:
        self.header = header
        self.offset = offset  # of the columns
        self.ids = ids  # bytes of the ids
        self.size = size

    @property
    def dim(self) -> int:
        return _positive(self.header, "dim")

    @property
    def n(self) -> int:
        return _positive(self.header, "n")

    @classmethod
    def of(cls, view: memoryview, *, deep: bool = False) -> _Layout:
        """The layout of a whole file; ValueError (or another error) when it is not one.
        ``deep`` also checks the matrix against its CRC."""
        size = len(view)
        head_end = len(_MAGIC) + _LENGTH_BYTES
        if size < head_end + _CRC_BYTES or bytes(view[: len(_MAGIC)]) != _MAGIC:
            raise ValueError("not a kioku vector cache file")
        length = int.from_bytes(view[len(_MAGIC) : head_end], "little")
        if length > min(_MAX_HEADER, size - head_end - _CRC_BYTES):
            raise ValueError(f"a header of {length} bytes does not fit")
        header = json.loads(bytes(view[head_end : head_end + length]))
        if not isinstance(header, dict) or header.get("format") != FORMAT_VERSION:
            raise ValueError("another format version")
        offset = head_end + length
        offset += -offset % _ALIGN
        layout = cls(header, offset, 0, size)
        dim, n = layout.dim, layout.n
        sections = header.get("sections")
        if not isinstance(sections, dict) or not isinstance(sections.get("ids"), int):
            raise ValueError("no section sizes")
        layout.ids = sections["ids"]
        if sections != {
            "columns": 4 * dim * n,
            "scope_codes": 4 * n,
            "archived": n,
            "ids": layout.ids,
        }:
            raise ValueError("section sizes do not match dim and n")
        body = offset + 4 * dim * n + 5 * n + layout.ids
        if body + _CRC_BYTES != size:
            raise ValueError(f"{size} bytes where the header describes {body + _CRC_BYTES}")
        matrix_end = offset + 4 * dim * n
        crc = zlib.crc32(view[matrix_end:body], zlib.crc32(view[:offset]))
        if crc != int.from_bytes(view[body:size], "little"):
            raise ValueError("checksum mismatch")
        if deep and zlib.crc32(view[offset:matrix_end]) != header.get("columns_crc32"):
            raise ValueError("the matrix does not match its checksum")
        return layout


def _encode(vectors: ModelVectors) -> list[bytes | memoryview] | None:
    """The file's parts, or None when the vectors cannot round-trip exactly through the
    format (an id or scope that is not text, an id that holds a NUL)."""
    ids = vectors.ids.tolist()
    if not all(isinstance(i, str) and _SEPARATOR not in i for i in ids):
        _log.debug("vector cache: an id cannot be stored in the file; not written")
        return None
    if not all(isinstance(part, str) for scope in vectors.scopes for part in scope):
        return None
    n = vectors.size
    columns = np.ascontiguousarray(vectors.columns, dtype=np.float32).data.cast("B")
    codes = np.ascontiguousarray(vectors.scope_codes, dtype=np.int32).data.cast("B")
    archived = np.ascontiguousarray(vectors.archived, dtype=np.bool_).data.cast("B")
    id_bytes = _SEPARATOR.join(ids).encode("utf-8")
    header = json.dumps(
        {
            "format": FORMAT_VERSION,
            "model": vectors.model,
            "version": vectors.version,
            "dim": vectors.dim,
            "n": n,
            "byteorder": sys.byteorder,
            "scopes": [list(scope) for scope in vectors.scopes],
            "sections": {
                "columns": len(columns),
                "scope_codes": len(codes),
                "archived": len(archived),
                "ids": len(id_bytes),
            },
            "columns_crc32": zlib.crc32(columns),
        },
        sort_keys=True,
    ).encode("utf-8")
    start = len(_MAGIC) + _LENGTH_BYTES + len(header)
    head: list[bytes] = [
        _MAGIC,
        len(header).to_bytes(_LENGTH_BYTES, "little"),
        header,
        b"\x00" * (-start % _ALIGN),
    ]
    checked: list[bytes | memoryview] = [*head, codes, archived, id_bytes]
    crc = 0
    for part in checked:
        crc = zlib.crc32(part, crc)
    return [*head, columns, codes, archived, id_bytes, crc.to_bytes(_CRC_BYTES, "little")]


def _read(path: Path, model: str, version: int) -> ModelVectors | None:
    with open(path, "rb") as file:
        if os.fstat(file.fileno()).st_size == 0:
            raise ValueError("an empty file")
        mapped = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mapped)
    try:
        layout = _Layout.of(view)
        header = layout.header
        if header.get("version") != version:
            return None  # stale: a write since, or another database: rebuild, quietly
        if header.get("model") != model or header.get("byteorder") != sys.byteorder:
            raise ValueError("another model or byte order")
        dim, n, offset = layout.dim, layout.n, layout.offset
        scopes = tuple((user, agent) for user, agent in header["scopes"])
        if not all(isinstance(part, str) for scope in scopes for part in scope):
            raise ValueError("a scope that is not two strings")
        columns = np.frombuffer(mapped, dtype=np.float32, count=dim * n, offset=offset)
        offset += 4 * dim * n
        codes = np.frombuffer(mapped, dtype=np.int32, count=n, offset=offset)
        offset += 4 * n
        archived = np.frombuffer(mapped, dtype=np.bool_, count=n, offset=offset)
        offset += n
        id_list = bytes(view[offset : offset + layout.ids]).decode("utf-8").split(_SEPARATOR)
        if len(id_list) != n or not 0 <= int(codes.min()) <= int(codes.max()) < len(scopes):
            raise ValueError("ids or scope codes out of range")
    finally:
        view.release()  # the arrays keep the mapping alive on their own
    ids = np.empty(n, dtype=object)
    ids[:] = id_list
    return ModelVectors(
        model=model,
        version=version,
        dim=dim,
        ids=ids,
        columns=columns.reshape(dim, n),
        scope_codes=codes,
        scopes=scopes,
        archived=archived,
        loaded_from="file",
    )


def _positive(header: dict[str, Any], key: str) -> int:
    value = header.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{key} is {value!r}")
    return value


def _make_dir(directory: Path) -> None:
    if not directory.is_dir():
        directory.mkdir(mode=OWNER_ONLY_DIR, exist_ok=True)


def _write_atomically(path: Path, parts: list[bytes | memoryview]) -> None:
    """Write ``parts`` to a temporary file, sync it, and rename it to ``path``."""
    import secrets

    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, OWNER_ONLY_FILE)
    try:
        with os.fdopen(fd, "wb") as file:
            for part in parts:
                file.write(part)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise


def _remove_stale_temps(directory: Path) -> None:
    """Temporary files a writer left when it was killed (they can be large)."""
    cutoff = time.time() - _STALE_TEMP_SECONDS
    for entry in directory.iterdir():
        if entry.name.startswith(".") and entry.name.endswith(".tmp"):
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime < cutoff:
                    entry.unlink()


def _prune(directory: Path, keep: Path, version: int) -> None:
    """Remove the files of other models that are stale at ``version`` (a model no longer
    written, after ``kioku reembed``); files that are current stay."""
    for entry in directory.iterdir():
        if entry == keep or not entry.name.endswith(SUFFIX):
            continue
        with contextlib.suppress(Exception):
            if _file_version(entry) != version:
                entry.unlink()


def _file_version(path: Path) -> int | None:
    with open(path, "rb") as file:
        start = file.read(len(_MAGIC) + _LENGTH_BYTES)
        if start[: len(_MAGIC)] != _MAGIC:
            return None
        length = int.from_bytes(start[len(_MAGIC) :], "little")
        if length > _MAX_HEADER:
            return None
        header = json.loads(file.read(length))
    value = header.get("version") if isinstance(header, dict) else None
    return value if isinstance(value, int) else None
