"""The layout of a vector cache file (see :mod:`.vector_file`), readable without numpy.

Both readers use it: :mod:`.vector_file` maps the arrays into numpy, and :mod:`.vector_lite`
searches the file with the standard library alone (a hook's fresh process, which should not
pay for importing numpy). Format 3::

    b"KIOKUVEC" | u64 header length | header (UTF-8 JSON) | zero padding to 64 bytes
    | columns: float32, (dim, capacity), C order  -- the normalised vectors, transposed: the
                                                 first n columns; the rest zeros
    | scales: float32, dim                     -- the step of each row of ``levels``
    | scope codes: int32, n
    | id ends: uint32, n                       -- where each id ends in ``ids``
    | archived: uint8, n
    | levels: uint8, (dim, n)                  -- the columns quantised: 128 + round(x / step)
    | ids: UTF-8, joined by NUL
    | u32 CRC-32 of the header, scales, codes, id ends, archived flags and ids

The columns have room for ``capacity - n`` more vectors (the header's ``capacity``), so a
process that maps the file privately can append the vectors of later writes in place without
copying the matrix, and a later change is saved as a small tail file beside it
(:mod:`.vector_tail`) instead of a new matrix.

The header length and the CRC are little-endian; the arrays are in the writer's byte order,
which the header names (a reader of the other order rebuilds). Every 4-byte array starts at a
multiple of 4. ``scales`` and ``levels`` are empty (the header's ``quantised`` is false) past
``QUANTISED_MAX_ROWS`` rows, where the numpy-free search would be slower than numpy anyway.
The two matrices are not under the trailing CRC, which a search checks every time: their own
CRCs are in the header, for :meth:`VectorFiles.verify`.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any, Final

from kioku.digests import blake2b

__all__ = [
    "FORMAT_VERSION",
    "QUANTISED_MAX_ROWS",
    "SUFFIX",
    "Layout",
    "cache_dir",
    "file_name",
    "framed_header",
    "header_size",
]

#: Bumped whenever the layout changes; files of another format are rebuilt.
FORMAT_VERSION: Final = 3
#: The name of a cache file is a hash of its model plus this suffix.
SUFFIX: Final = ".vec"
MAGIC: Final = b"KIOKUVEC"
ALIGN: Final = 64
LENGTH_BYTES: Final = 8
CRC_BYTES: Final = 4
#: A header is a few hundred bytes plus the scopes; anything larger is not ours.
MAX_HEADER: Final = 1 << 24
SEPARATOR: Final = "\x00"
#: Files of more rows keep no quantised copy: vector_lite declines a typical query over that
#: many rows (its MAX_WORK), and quantising a million vectors adds seconds to each rewrite.
QUANTISED_MAX_ROWS: Final = 500_000
#: The levels of a quantised component: 128 + round(x / step), within 1 .. 255.
LEVEL_ZERO: Final = 128
LEVEL_SPAN: Final = 127


def cache_dir(db_path: Path) -> Path | None:
    """Where the cache files of the database at ``db_path`` go (None: an in-memory one)."""
    name = str(db_path)
    if name == ":memory:" or name.startswith("file:") or not db_path.name:
        return None
    return db_path.with_name(db_path.name + ".vectors")


def file_name(model: str) -> str:
    """The file name of ``model``'s cache in :func:`cache_dir`."""
    digest = blake2b(model.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return f"{digest}{SUFFIX}"


def sections(dim: int, n: int, ids: int, quantised: bool, capacity: int) -> dict[str, int]:
    """The size in bytes of every section, in file order."""
    return {
        "columns": 4 * dim * capacity,
        "scales": 4 * dim if quantised else 0,
        "scope_codes": 4 * n,
        "id_ends": 4 * n,
        "archived": n,
        "levels": dim * n if quantised else 0,
        "ids": ids,
    }


class Layout:
    """Where the sections of a file are, once its structure and checksum hold up."""

    __slots__ = ("at", "header", "size")

    def __init__(self, header: dict[str, Any], at: dict[str, int], size: int) -> None:
        self.header = header
        self.at = at  # section name -> offset; "end" -> where the CRC starts
        self.size = size

    @property
    def dim(self) -> int:
        return positive(self.header, "dim")

    @property
    def n(self) -> int:
        return positive(self.header, "n")

    @property
    def capacity(self) -> int:
        """Columns in each row of the matrix (at least ``n``)."""
        return positive(self.header, "capacity")

    def span(self, section: str) -> tuple[int, int]:
        """``(start, end)`` of a section."""
        names = list(self.at)
        return self.at[section], self.at[names[names.index(section) + 1]]

    @classmethod
    def of(cls, view: memoryview, *, deep: bool = False) -> Layout:
        """The layout of a whole file; ValueError (or another error) when it is not one.
        ``deep`` also checks both matrices against their CRCs."""
        size = len(view)
        head_end = len(MAGIC) + LENGTH_BYTES
        if size < head_end + CRC_BYTES or bytes(view[: len(MAGIC)]) != MAGIC:
            raise ValueError("not a kioku vector cache file")
        length = int.from_bytes(view[len(MAGIC) : head_end], "little")
        if length > min(MAX_HEADER, size - head_end - CRC_BYTES):
            raise ValueError(f"a header of {length} bytes does not fit")
        header = json.loads(bytes(view[head_end : head_end + length]))
        if not isinstance(header, dict) or header.get("format") != FORMAT_VERSION:
            raise ValueError("another format version")
        offset = head_end + length
        offset += -offset % ALIGN
        dim, n = positive(header, "dim"), positive(header, "n")
        capacity = positive(header, "capacity")
        if capacity < n:
            raise ValueError(f"a capacity of {capacity} below {n} vectors")
        found = header.get("sections")
        quantised = header.get("quantised")
        if not isinstance(found, dict) or not isinstance(found.get("ids"), int):
            raise ValueError("no section sizes")
        if not isinstance(quantised, bool):
            raise ValueError("no quantised flag")
        expected = sections(dim, n, found["ids"], quantised, capacity)
        if found != expected or found["ids"] < 0:
            raise ValueError("section sizes do not match dim and n")
        at: dict[str, int] = {}
        for name, length in expected.items():
            at[name] = offset
            offset += length
        at["end"] = offset
        if offset + CRC_BYTES != size:
            raise ValueError(f"{size} bytes where the header describes {offset + CRC_BYTES}")
        layout = cls(header, at, size)
        crc = zlib.crc32(view[: at["columns"]])
        crc = zlib.crc32(view[at["scales"] : at["levels"]], crc)
        crc = zlib.crc32(view[at["ids"] : at["end"]], crc)
        if crc != int.from_bytes(view[at["end"] : size], "little"):
            raise ValueError("checksum mismatch")
        if deep:
            for name in ("columns", "levels") if quantised else ("columns",):
                start, end = layout.span(name)
                if zlib.crc32(view[start:end]) != header.get(f"{name}_crc32"):
                    raise ValueError(f"the {name} do not match their checksum")
        return layout


def positive(header: dict[str, Any], key: str) -> int:
    value = header.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{key} is {value!r}")
    return value


def file_version(path: Path) -> int | None:
    """The store version a file of this format was written at (None: not a readable cache
    file of this format)."""
    with open(path, "rb") as file:
        start = file.read(len(MAGIC) + LENGTH_BYTES)
        if start[: len(MAGIC)] != MAGIC:
            return None
        length = int.from_bytes(start[len(MAGIC) :], "little")
        if length > MAX_HEADER:
            return None
        header = json.loads(file.read(length))
    if not isinstance(header, dict) or header.get("format") != FORMAT_VERSION:
        return None
    value = header.get("version")
    return value if isinstance(value, int) else None


def framed_header(data: bytes, magic: bytes, what: str) -> tuple[Any, int]:
    """The decoded JSON header of a file framed as ``magic``, the header's length, the header,
    the body and a CRC-32 of all before it (the tail and graph-map files), and where the body
    starts; ValueError when the frame is not whole (``what`` names the file kind)."""
    if len(data) < len(magic) + LENGTH_BYTES + CRC_BYTES or not data.startswith(magic):
        raise ValueError(f"not a kioku {what}")
    if zlib.crc32(data[:-CRC_BYTES]) != int.from_bytes(data[-CRC_BYTES:], "little"):
        raise ValueError("checksum mismatch")
    at = len(magic) + LENGTH_BYTES
    length = int.from_bytes(data[len(magic) : at], "little")
    if length > MAX_HEADER:
        raise ValueError("a header that does not fit")
    return json.loads(data[at : at + length]), at + length


def header_size(header: dict[str, Any], key: str) -> int:
    """A count or size the header gives under ``key``: a non-negative int, else ValueError."""
    value = header.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{key} is {value!r}")
    return value
