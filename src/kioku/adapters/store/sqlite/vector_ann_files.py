"""The files of an HNSW graph (:mod:`.vector_ann`) beside the vector cache file.

Two files: ``<hash>.ann``, the graph in usearch's own format (memory-mapped read-only by the
next process), and ``<hash>.annmap``, which ties its slots to the rows of exactly one cache
file. Layout of the map, format 1::

    b"KIOKUANN" | u64 header length | header (UTF-8 JSON)
    | slot of each row of the cache file: int64, n (-1: none)
    | slots of the rows after the file's (from its tail): int64, k
    | CRC-32 of each of those rows' vectors: uint32, k | their ids: UTF-8, joined by NUL
    | u32 CRC-32 of everything before it

The header names the model, the dimension, the byte order, the graph's parameters, the
cache file (its version and row count), the number of slots, and the size and CRC-32 of the
graph file.

Writing is in two steps, so that the caller can decide between them whether the result may
land at all (:mod:`.vector_ann_index` checks for an erasure there): :func:`prepare` writes
both files to temporary names and syncs them, :func:`Prepared.commit` renames them into place
(the graph first) and :func:`Prepared.discard` deletes them. A temporary file is never read;
a map that does not match its graph, its cache file or its checksum is ignored.

Reading is in two steps too: :func:`read_map` reads and checks the map (a few bytes per
row), :func:`open_graph` checks the whole graph file against the CRC-32 in the map and then
maps it; the store runs the second in the background, not in a search.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

import numpy as np

from kioku.adapters.store.sqlite.connection import OWNER_ONLY_DIR, OWNER_ONLY_FILE
from kioku.adapters.store.sqlite.vector_ann import (
    CONNECTIVITY,
    DTYPE,
    EXPANSION_ADD,
    GRAPH_SUFFIX,
    MAP_SUFFIX,
    Graph,
    Rows,
)
from kioku.adapters.store.sqlite.vector_ann_follow import follow
from kioku.adapters.store.sqlite.vector_file import temp_path, write_synced
from kioku.adapters.store.sqlite.vector_layout import (
    CRC_BYTES,
    LENGTH_BYTES,
    framed_header,
    header_size,
)
from kioku.adapters.store.sqlite.vector_version import changes_since
from kioku.adapters.store.sqlite.vectors import ModelVectors

__all__ = [
    "MapInfo",
    "Prepared",
    "SavedVectors",
    "erased_since",
    "open_graph",
    "prepare",
    "read_map",
    "remove_files",
]

_MAGIC: Final = b"KIOKUANN"
_FORMAT: Final = 1
_READ_CHUNK: Final = 1 << 23
#: Log entries read to see whether a deletion came between two versions (more: assume so).
_ERASE_CHECK: Final = 100_000


class SavedVectors(Protocol):
    """What the graph files ask of the cache files (:class:`.vector_file.VectorFiles`)."""

    def path(self, model: str) -> Path | None: ...

    def read(self, model: str, version: int | None) -> ModelVectors | None: ...


def erased_since(conn: sqlite3.Connection, since: int, version: int) -> bool:
    """Whether a memory may have been deleted between the two versions (read in ``conn``'s
    snapshot): one the change log names is gone, or the log cannot tell."""
    if since == version:
        return False
    changed = changes_since(conn, since, version, _ERASE_CHECK)
    if changed is None:
        return True
    present: set[str] = set()
    for start in range(0, len(changed), 500):
        chunk = changed[start : start + 500]
        marks = ", ".join("?" * len(chunk))  # a count of placeholders, never input
        present.update(
            str(row[0])
            for row in conn.execute(f"SELECT id FROM memories WHERE id IN ({marks})", chunk)
        )
    return len(present) < len(changed)


def remove_files(base: Path | None) -> None:
    """Delete the graph and map beside the cache file ``base`` (never raises)."""
    if base is None:
        return
    for suffix in (GRAPH_SUFFIX, MAP_SUFFIX):
        with contextlib.suppress(OSError):
            base.with_suffix(suffix).unlink()


def _crc_file(path: Path) -> tuple[int, int]:
    """CRC-32 and size of the file at ``path``."""
    crc = size = 0
    with open(path, "rb") as file:
        while chunk := file.read(_READ_CHUNK):
            crc = zlib.crc32(chunk, crc)
            size += len(chunk)
    return crc, size


def _vector_crc(vectors: ModelVectors, row: int) -> int:
    return zlib.crc32(np.ascontiguousarray(vectors.columns[:, row], dtype="<f4").tobytes())


@dataclass
class Prepared:
    """Graph files written and synced under temporary names, not yet in place."""

    base: Path
    #: The temporary graph file (None: the graph in place already is this one).
    graph_temp: Path | None
    map_temp: Path
    #: The graph, with the checksum of its file.
    graph: Graph

    def commit(self) -> None:
        """Rename both into place, the graph first (a map never names a graph not there)."""
        if self.graph_temp is not None:
            os.replace(self.graph_temp, self.base.with_suffix(GRAPH_SUFFIX))
            self.graph_temp = None
        os.replace(self.map_temp, self.base.with_suffix(MAP_SUFFIX))

    def discard(self) -> None:
        """Delete the temporary files (never raises)."""
        for temp in (self.graph_temp, self.map_temp):
            if temp is not None:
                with contextlib.suppress(OSError):
                    temp.unlink()


def prepare(base: Path, graph: Graph, files: SavedVectors, on_disk: bool) -> Prepared | None:
    """Write the graph (unless it is the one in the file already) and its map, tied to the
    cache file now at ``base`` (read again, so the slots follow its rows whichever process
    wrote it), to temporary files; None when there is no cache file to tie them to."""
    saved = files.read(graph.vectors.model, None)
    origin = None if saved is None or saved.spare is None else saved.spare.origin
    if saved is None or origin is None:
        return None
    tied = follow(graph, saved)
    file_n = origin[1]
    slots = tied.slot_of_row.copy()
    if saved.dead is not None:
        slots[saved.dead] = -1
    extra_rows: Rows = np.flatnonzero(slots[file_n:] >= 0) + file_n
    extra_ids = [str(saved.ids[int(row)]) for row in extra_rows]
    if any("\x00" in i for i in extra_ids):
        return None
    directory = base.parent
    if not directory.is_dir():
        directory.mkdir(mode=OWNER_ONLY_DIR, exist_ok=True)
    graph_temp = None
    try:
        if graph.checksum is None or not on_disk:
            graph_temp = temp_path(base.with_suffix(GRAPH_SUFFIX))
            graph.index.save(str(graph_temp))
            os.chmod(graph_temp, OWNER_ONLY_FILE)
            with open(graph_temp, "rb+") as file:
                os.fsync(file.fileno())
            crc, size = _crc_file(graph_temp)
        else:
            crc, size = graph.checksum
        map_temp = _write_map(base, graph, saved, origin, slots, extra_rows, extra_ids, crc, size)
    except BaseException:
        if graph_temp is not None:
            with contextlib.suppress(OSError):
                graph_temp.unlink()
        raise
    checked = Graph(
        graph.index,
        graph.vectors,
        graph.row_of_slot,
        graph.slot_of_row,
        graph.viewed,
        (crc, size),
        graph.since,
    )
    return Prepared(base, graph_temp, map_temp, checked)


def _write_map(
    base: Path,
    graph: Graph,
    saved: ModelVectors,
    origin: tuple[int, int],
    slots: Rows,
    extra_rows: Rows,
    extra_ids: list[str],
    crc: int,
    size: int,
) -> Path:
    id_bytes = "\x00".join(extra_ids).encode("utf-8")
    header = json.dumps(
        {
            "format": _FORMAT,
            "model": graph.vectors.model,
            "dim": graph.vectors.dim,
            "byteorder": sys.byteorder,
            "origin": list(origin),
            "slots": graph.slots,
            "extra": int(extra_rows.size),
            "ids": len(id_bytes),
            "graph_bytes": size,
            "graph_crc32": crc,
            "params": [CONNECTIVITY, EXPANSION_ADD, DTYPE],
        },
        sort_keys=True,
    ).encode("utf-8")
    extra_crcs = [_vector_crc(saved, int(row)) for row in extra_rows]
    parts = [
        _MAGIC,
        len(header).to_bytes(LENGTH_BYTES, "little"),
        header,
        np.ascontiguousarray(slots[: origin[1]], dtype="<i8").tobytes(),
        np.ascontiguousarray(slots[extra_rows], dtype="<i8").tobytes(),
        np.asarray(extra_crcs, dtype="<u4").tobytes(),
        id_bytes,
    ]
    check = 0
    for part in parts:
        check = zlib.crc32(part, check)
    parts.append(check.to_bytes(CRC_BYTES, "little"))
    return write_synced(base.with_suffix(MAP_SUFFIX), parts)


@dataclass(frozen=True)
class MapInfo:
    """A checked map, tied to a cache: the slot of each row, the graph file's checksum."""

    base: Path
    slots: int
    slot_of_row: Rows
    checksum: tuple[int, int]


def read_map(base: Path, vectors: ModelVectors, origin: tuple[int, int]) -> MapInfo | None:
    """The map saved beside the cache file ``vectors`` grew from (``origin`` names it), tied
    to ``vectors``, or None when it was saved for another file; ValueError when damaged."""
    data = base.with_suffix(MAP_SUFFIX).read_bytes()
    header, at = framed_header(data, _MAGIC, "graph map")
    if (
        not isinstance(header, dict)
        or header.get("format") != _FORMAT
        or header.get("model") != vectors.model
        or header.get("dim") != vectors.dim
        or header.get("byteorder") != sys.byteorder
        or header.get("params") != [CONNECTIVITY, EXPANSION_ADD, DTYPE]
    ):
        raise ValueError("another model, dimension or format")
    if header.get("origin") != list(origin):
        return None  # saved for another cache file
    slots, extra, id_len, crc, size = (
        header_size(header, key) for key in ("slots", "extra", "ids", "graph_crc32", "graph_bytes")
    )
    file_n = origin[1]
    if vectors.size < file_n:
        return None
    base_slots = np.frombuffer(data, "<i8", file_n, at).astype(np.int64)
    at += 8 * file_n
    extra_slots = np.frombuffer(data, "<i8", extra, at).astype(np.int64)
    at += 8 * extra
    extra_crcs = np.frombuffer(data, "<u4", extra, at)
    at += 4 * extra
    if at + id_len + CRC_BYTES != len(data):
        raise ValueError("sizes that do not match the file")
    ids = data[at : at + id_len].decode("utf-8").split("\x00") if extra else []
    if len(ids) != extra:
        raise ValueError("ids that do not match their count")
    if int(base_slots.max(initial=-1)) >= slots or int(extra_slots.max(initial=-1)) >= slots:
        raise ValueError("a slot past the graph")
    slot_of_row = np.full(vectors.size, -1, dtype=np.int64)
    slot_of_row[:file_n] = base_slots
    if extra:
        wanted = dict(
            zip(ids, zip(extra_slots.tolist(), extra_crcs.tolist(), strict=True), strict=True)
        )
        for row in range(file_n, vectors.size):
            found = wanted.get(str(vectors.ids[row]))
            if found is not None and _vector_crc(vectors, row) == found[1]:
                slot_of_row[row] = found[0]
    if vectors.dead is not None:
        slot_of_row[vectors.dead] = -1
    return MapInfo(base, slots, slot_of_row, (crc, size))


def open_graph(info: MapInfo, vectors: ModelVectors, since: int) -> Graph:
    """The graph file of a checked map, checked whole against its CRC-32 (it reads all of
    it) and mapped read-only; ValueError when it does not match."""
    graph_path = info.base.with_suffix(GRAPH_SUFFIX)
    before = _identity(graph_path)
    if _crc_file(graph_path) != info.checksum:
        raise ValueError("the graph file does not match its checksum")
    from usearch.index import Index

    index = Index.restore(str(graph_path), view=True)
    if _identity(graph_path) != before:
        raise ValueError("the graph file was replaced while it was checked")
    if index is None or index.ndim != vectors.dim or index.size != info.slots:
        raise ValueError("a graph of another size")
    slot_of_row = info.slot_of_row
    held = np.flatnonzero(slot_of_row >= 0)
    row_of_slot = np.full(info.slots, -1, dtype=np.int64)
    row_of_slot[slot_of_row[held]] = held
    if not np.array_equal(row_of_slot[slot_of_row[held]], held):
        raise ValueError("a slot held by two rows")
    return Graph(index, vectors, row_of_slot, slot_of_row, True, info.checksum, since)


def _identity(path: Path) -> tuple[int, int, int, int]:
    stat = path.stat()
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns
