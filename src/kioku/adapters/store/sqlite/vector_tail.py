"""What changed since a vector cache file was written, saved beside it as a small tail file.

Rewriting the cache file of :mod:`.vector_file` after every batch costs as much as the
matrix is large (1.5 GB and about ten seconds at a million 384-dimensional vectors), although
a day changes a few hundred of them. So when a cache is the file's matrix with vectors
appended in place (a process maps the file privately, and its matrix has room for more
columns, see :mod:`.vector_layout`), what it adds is written to ``<hash of the model>.tail``
instead: the rows of the file that are dead now (their memories changed or went), and the
new rows, with their ids, scopes, archived flags and vectors (already normalised, so applying
them gives bit for bit the cache that was written). Layout, format 1::

    b"KIOKUTAL" | u64 header length | header (UTF-8 JSON) | zero padding to 8 bytes
    | dead rows of the file: uint32, dead      | scope codes: int32, n
    | id ends: uint32, n                       | archived: uint8, n | zero padding to 4 bytes
    | vectors: float32, (n, dim), C order      | ids: UTF-8, joined by NUL
    | u32 CRC-32 of everything before it

The header names the model, the dimension, the byte order, the version the tail brings the
file to and the version and row count of the file it extends: a tail is applied only to
exactly that file, and only when the new rows fit the file's spare columns. Anything else
(another file since, damage) means the tail is ignored: the file alone is read and the change
log (:mod:`.vector_log`) or SQLite supply the rest. A tail is written to a temporary name,
synced and renamed into place like the file, and is removed when the file is written anew.
It holds ids, scopes and vectors, never memory text.
"""

from __future__ import annotations

import json
import sys
import zlib
from dataclasses import replace
from pathlib import Path
from typing import Final

import numpy as np

from kioku.adapters.store.sqlite.vector_layout import (
    CRC_BYTES,
    LENGTH_BYTES,
    SEPARATOR,
    framed_header,
    header_size,
)
from kioku.adapters.store.sqlite.vectors import IdColumn, ModelVectors

__all__ = ["TAIL_SUFFIX", "TailPlan", "apply_tail", "check_tail", "encode_tail", "plan_tail"]

TAIL_SUFFIX: Final = ".tail"
_MAGIC: Final = b"KIOKUTAL"
_FORMAT: Final = 1


class TailPlan:
    """What a tail saves: the file's rows that are dead now and the rows after the file's."""

    __slots__ = ("base_n", "base_version", "dead", "rows", "vectors")

    def __init__(
        self,
        vectors: ModelVectors,
        base_version: int,
        base_n: int,
        dead: list[int],
        rows: list[int],
    ) -> None:
        self.vectors = vectors
        self.base_version = base_version
        self.base_n = base_n
        self.dead = dead
        self.rows = rows


def plan_tail(vectors: ModelVectors, limit: int) -> TailPlan | None:
    """The tail that brings the file ``vectors`` grew from up to it, or None when it did not
    grow from a file in place (then the whole file is written), or when the tail would hold
    more than ``limit`` rows, dead ones included."""
    spare = vectors.spare
    origin = None if spare is None else spare.origin
    if spare is None or origin is None:
        return None
    base_version, base_n = origin
    starts = vectors.columns.__array_interface__["data"][0]
    if starts != spare.array.__array_interface__["data"][0] or vectors.size < base_n:
        return None  # a copy, not the file's matrix grown in place
    dead = vectors.dead
    dead_rows = [] if dead is None else np.flatnonzero(dead[:base_n]).tolist()
    rows = list(range(base_n, vectors.size))
    if dead is not None:
        rows = [row for row in rows if not dead[row]]
    if len(dead_rows) + len(rows) > limit:
        return None
    return TailPlan(vectors, base_version, base_n, dead_rows, rows)


def encode_tail(plan: TailPlan) -> list[bytes] | None:
    """The tail file's bytes, in parts (None: an id that cannot be stored)."""
    vectors = plan.vectors
    ids = [vectors.ids[row] for row in plan.rows]
    if not all(isinstance(i, str) and SEPARATOR not in i for i in ids):
        return None
    if not all(isinstance(part, str) for scope in vectors.scopes for part in scope):
        return None
    picked = np.asarray(plan.rows, dtype=np.intp)
    encoded = [i.encode("utf-8") for i in ids]
    id_bytes = SEPARATOR.encode("ascii").join(encoded)
    n = len(ids)
    ends = np.cumsum([len(i) for i in encoded], dtype=np.int64) + np.arange(n, dtype=np.int64)
    if n and int(ends[-1]) >= 1 << 32:
        return None
    header = json.dumps(
        {
            "format": _FORMAT,
            "model": vectors.model,
            "version": vectors.version,
            "base_version": plan.base_version,
            "base_n": plan.base_n,
            "dim": vectors.dim,
            "n": n,
            "dead": len(plan.dead),
            "ids": len(id_bytes),
            "byteorder": sys.byteorder,
            "scopes": [list(scope) for scope in vectors.scopes],
        },
        sort_keys=True,
    ).encode("utf-8")
    start = len(_MAGIC) + LENGTH_BYTES + len(header)
    parts = [
        _MAGIC,
        len(header).to_bytes(LENGTH_BYTES, "little"),
        header,
        b"\x00" * (-start % 8),
        np.asarray(plan.dead, dtype=np.uint32).tobytes(),
        np.ascontiguousarray(vectors.scope_codes[picked], dtype=np.int32).tobytes(),
        ends.astype(np.uint32).tobytes(),
        np.ascontiguousarray(vectors.archived[picked], dtype=np.bool_).tobytes(),
    ]
    parts.append(b"\x00" * (-sum(len(part) for part in parts) % 4))
    parts.append(np.ascontiguousarray(vectors.columns[:, picked].T, dtype=np.float32).tobytes())
    parts.append(id_bytes)
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    parts.append(crc.to_bytes(CRC_BYTES, "little"))
    return parts


class _Tail:
    __slots__ = ("archived", "codes", "dead", "header", "ids", "vectors")

    def __init__(self, data: bytes) -> None:
        header, at = framed_header(data, _MAGIC, "vector tail file")
        if not isinstance(header, dict) or header.get("format") != _FORMAT:
            raise ValueError("another tail format")
        n, dead, id_bytes, dim, _ = (
            header_size(header, key) for key in ("n", "dead", "ids", "dim", "base_n")
        )
        at += -at % 8
        self.dead = np.frombuffer(data, np.uint32, dead, at)
        at += 4 * dead
        self.codes = np.frombuffer(data, np.int32, n, at)
        at += 4 * n
        ends = np.frombuffer(data, np.uint32, n, at)
        at += 4 * n
        self.archived = np.frombuffer(data, np.bool_, n, at)
        at += n
        at += -at % 4
        self.vectors = np.frombuffer(data, np.float32, n * dim, at).reshape(n, dim)
        at += 4 * n * dim
        if at + id_bytes + CRC_BYTES != len(data):
            raise ValueError("sizes that do not match the file")
        self.ids = IdColumn.joined(data[at : at + id_bytes], ends) if n else IdColumn(())
        scopes = header.get("scopes")
        if not isinstance(scopes, list) or not all(
            isinstance(s, list) and len(s) == 2 and all(isinstance(p, str) for p in s)
            for s in scopes
        ):
            raise ValueError("scopes that are not pairs of strings")
        if n and not 0 <= int(self.codes.min()) <= int(self.codes.max()) < len(scopes):
            raise ValueError("scope codes out of range")
        self.header = header


def check_tail(path: Path) -> None:
    """Raise when the tail file at ``path`` is not whole (for ``kioku check``)."""
    _Tail(path.read_bytes())


def apply_tail(path: Path, base: ModelVectors) -> ModelVectors | None:
    """``base`` (a file just mapped, with its spare columns) brought up to the version of the
    tail at ``path``; None when there is no tail for exactly that file, or it is damaged
    (ValueError) or does not fit."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    tail = _Tail(data)
    header = tail.header
    spare = base.spare
    if (
        spare is None
        or spare.origin != (base.version, base.size)
        or header.get("model") != base.model
        or header.get("byteorder") != sys.byteorder
        or header.get("base_version") != base.version
        or header.get("base_n") != base.size
        or header.get("dim") != base.dim
        or not isinstance(header.get("version"), int)
    ):
        return None  # a tail of another file, or a file already carried forward
    n, added = base.size, len(tail.ids)
    if spare.used != n or spare.array.shape[1] < n + added:
        raise ValueError("more rows than the file has room for")
    if tail.dead.size and int(tail.dead.max()) >= n:
        raise ValueError("a dead row past the file's rows")
    codes_of = dict(zip(base.scopes, range(len(base.scopes)), strict=True))
    remap = np.asarray(
        [codes_of.setdefault((user, agent), len(codes_of)) for user, agent in header["scopes"]],
        dtype=np.int32,
    )
    dead = np.zeros(n + added, dtype=np.bool_)
    dead[tail.dead] = True
    spare.array[:, n : n + added] = tail.vectors.T
    spare.used = n + added
    return replace(
        base,
        version=header["version"],
        ids=base.ids.plus(tail.ids.tolist()) if added else base.ids,
        columns=spare.array[:, : n + added],
        scope_codes=np.concatenate([base.scope_codes, remap[tail.codes]]),
        scopes=tuple(codes_of),
        archived=np.concatenate([base.archived, tail.archived]),
        dead=dead if tail.dead.size else None,
        _filters={},
    )
