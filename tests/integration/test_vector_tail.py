"""Tail files: a large vector cache file brought up to date without writing its matrix again.

A process that maps a cache file (``<db>.vectors/<hash>.vec``) appends later vectors to the
mapping's spare columns, and when the file keeps no quantised copy (a large store) it saves
what changed as ``<hash>.tail`` beside it (adapters/store/sqlite/vector_tail.py). Here each
"day" is what a fresh process does: read the file and its tail, catch up from the change log,
and write a tail or, when the tail would be too large or the matrix had to be copied, the
whole file. After every day the file and tail must answer exactly as the rows do, and a tail
must leave the file's bytes as they were. Files below the quantised size are written whole
(``quantised_max_rows=0`` here makes every file a tail-keeping one).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.store.sqlite import vector_file, vector_tail
from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.adapters.store.sqlite.vector_file import VectorFiles
from kioku.adapters.store.sqlite.vector_log import refresh
from kioku.adapters.store.sqlite.vector_version import read_version
from kioku.adapters.store.sqlite.vectors import ModelVectors, load, top_matches
from tests.integration.test_vector_log import FILTERS, MODEL, _apply, _op

_QUERIES = ((1.0, 0.0, 0.0, 0.0), (0.0, 1.0, -1.0, 0.0), (1.0, 1.0, 1.0, 1.0))


def _answers(vectors: ModelVectors | None) -> list[Any]:
    if vectors is None:
        return []
    return [
        top_matches(vectors, query, flt.user_id, flt.agent_id, flt.archived, limit)
        for query in _QUERIES
        for flt in FILTERS
        for limit in (1, 50)
    ]


def _day(path: Path, files: VectorFiles) -> tuple[ModelVectors | None, Path | None, Any]:
    """A fresh process: its cache (from the file, its tail and the log, else the rows), the
    file it wrote (a tail or the whole file), and the rows' own answers in the same snapshot."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")
        version = read_version(conn)
        cache = refresh(conn, MODEL, version, None, files)
        expected = _answers(load(conn, MODEL, version))
        conn.execute("COMMIT")
    finally:
        conn.close()
    written = None
    if cache is not None and cache.loaded_from in ("sqlite", "log"):
        written = files.write(cache)
    return cache, written, expected


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _start(path: Path, rows: int = 24) -> tuple[SqliteStore, list[str], list[int]]:
    other = SqliteStore(path)
    ids: list[str] = []
    counter = [0]
    start = [((1.0, float(n % 5), 0.0, -1.0), ("ann", "a")) for n in range(rows)]
    _apply(other, "add", start, ids, counter)
    return other, ids, counter


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(days=st.lists(st.lists(_op, min_size=1, max_size=4), min_size=1, max_size=5))
def test_each_day_the_file_and_its_tail_answer_as_the_rows(
    tmp_path_factory: pytest.TempPathFactory, days: list[list[Any]]
) -> None:
    path = tmp_path_factory.mktemp("tail") / "m.db"
    files = VectorFiles(path, quantised_max_rows=0)
    other, ids, counter = _start(path)
    try:
        cache, written, expected = _day(path, files)
        assert cache is not None
        assert cache.loaded_from == "sqlite"
        assert written == files.path(MODEL)
        for ops in days:
            for op, arg in ops:
                if op not in ("warm_add", "warm_search_in_transaction"):
                    _apply(other, op, arg, ids, counter)
            base = files.path(MODEL)
            assert base is not None
            before = _digest(base) if base.exists() else None
            cache, written, expected = _day(path, files)
            assert _answers(cache) == expected, ops
            if written is not None and written.suffix == vector_tail.TAIL_SUFFIX:
                assert _digest(base) == before  # the matrix was not written again
            # The next process reads exactly this day's state from the files alone.
            if cache is not None and written is not None:
                saved = files.read(MODEL, cache.version)
                assert saved is not None
                assert saved.loaded_from == "file"
                assert _answers(saved) == expected, ops
    finally:
        other.close()


def _first_day(tmp_path: Path) -> tuple[Path, VectorFiles, SqliteStore, list[str], list[int]]:
    """A store of 40 memories whose file a first day wrote (tails allowed at any size)."""
    path = tmp_path / "m.db"
    files = VectorFiles(path, quantised_max_rows=0)
    other, ids, counter = _start(path, rows=40)
    _day(path, files)
    return path, files, other, ids, counter


def test_a_large_file_gets_a_tail_and_keeps_its_bytes(tmp_path: Path) -> None:
    path, files, other, ids, counter = _first_day(tmp_path)
    try:
        base = files.path(MODEL)
        tail = files.tail_path(MODEL)
        assert base is not None
        assert tail is not None
        before = _digest(base)
        _apply(other, "add", [((0.0, 0.0, 1.0, 0.0), ("ben", "a"))], ids, counter)
        _apply(other, "archive", 3, ids, counter)
        _apply(other, "no_vector", 5, ids, counter)  # (a deletion removes the files)
        cache, written, expected = _day(path, files)
        assert written == tail
        assert _digest(base) == before
        assert cache is not None
        assert cache.loaded_from == "log"
        # Caught up in place: the new vectors went into the mapping's spare columns.
        assert cache.spare is not None
        assert cache.spare.origin is not None
        assert np.shares_memory(cache.columns, cache.spare.array)
        assert tail.stat().st_size < base.stat().st_size // 4
        saved = files.read(MODEL, cache.version)
        assert saved is not None
        assert saved.dead is not None
        assert int(saved.dead.sum()) == 2
        assert _answers(saved) == expected
        # The next day builds on the file and the tail: still one tail, never the matrix.
        _apply(other, "add", [((0.0, 1.0, 1.0, 0.0), ("ann", "b"))], ids, counter)
        cache, written, expected = _day(path, files)
        assert written == tail
        assert _digest(base) == before
        assert _answers(files.read(MODEL, None)) == expected
    finally:
        other.close()


def test_too_many_changes_write_the_whole_file_and_drop_the_tail(tmp_path: Path) -> None:
    path, files, other, ids, counter = _first_day(tmp_path)
    try:
        _apply(other, "add", [((0.0, 0.0, 1.0, 0.0), ("ben", "a"))], ids, counter)
        _, written, _ = _day(path, files)
        tail = files.tail_path(MODEL)
        assert written == tail
        assert tail is not None
        assert tail.exists()
        # More dead rows than an eighth of the file: the cache is compacted, the file rewritten.
        for pick in range(10):
            _apply(other, "no_vector", pick, ids, counter)
        cache, written, expected = _day(path, files)
        assert written == files.path(MODEL)
        assert not tail.exists()
        assert cache is not None
        saved = files.read(MODEL, cache.version)
        assert saved is not None
        assert saved.dead is None
        assert _answers(saved) == expected
    finally:
        other.close()


def test_a_file_with_a_quantised_copy_is_written_whole(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    files = VectorFiles(path)  # 40 rows keep a quantised copy for the numpy-free search
    other, ids, counter = _start(path, rows=40)
    try:
        _day(path, files)
        _apply(other, "add", [((0.0, 0.0, 1.0, 0.0), ("ben", "a"))], ids, counter)
        cache, written, expected = _day(path, files)
        assert written == files.path(MODEL)
        tail = files.tail_path(MODEL)
        assert tail is not None
        assert not tail.exists()
        assert cache is not None
        assert _answers(files.read(MODEL, cache.version)) == expected
    finally:
        other.close()


def _with_tail(tmp_path: Path) -> tuple[Path, VectorFiles, SqliteStore, list[str], list[int]]:
    path, files, other, ids, counter = _first_day(tmp_path)
    _apply(other, "add", [((0.0, 0.0, 1.0, 0.0), ("ben", "a"))], ids, counter)
    _, written, _ = _day(path, files)
    assert written == files.tail_path(MODEL)
    return path, files, other, ids, counter


@pytest.mark.parametrize("offset", [0, 9, 40, -30, -3])
def test_a_damaged_tail_is_ignored_reported_and_replaced(tmp_path: Path, offset: int) -> None:
    path, files, other, _, _ = _with_tail(tmp_path)
    try:
        tail = files.tail_path(MODEL)
        base = files.path(MODEL)
        assert tail is not None
        assert base is not None
        data = bytearray(tail.read_bytes())
        data[offset] ^= 0x20
        tail.write_bytes(bytes(data))
        problems = vector_file.damaged_files(path)
        assert len(problems) == 1
        assert str(tail) in problems[0]
        assert "fix: delete it" in problems[0]
        # The file alone answers for its own version; the log brings it up to date.
        alone = files.read(MODEL, None)
        assert alone is not None
        assert alone.version == vector_file.file_version(base)
        cache, written, expected = _day(path, files)
        assert cache is not None
        assert cache.loaded_from == "log"
        assert _answers(cache) == expected
        assert written == tail
        assert vector_file.damaged_files(path) == []
    finally:
        other.close()


def test_a_tail_of_an_earlier_file_is_never_applied(tmp_path: Path) -> None:
    path, files, other, ids, counter = _with_tail(tmp_path)
    try:
        tail = files.tail_path(MODEL)
        assert tail is not None
        old_tail = tail.read_bytes()
        for pick in range(10):
            _apply(other, "no_vector", pick, ids, counter)
        _, written, _ = _day(path, files)
        assert written == files.path(MODEL)
        assert not tail.exists()
        tail.write_bytes(old_tail)  # as if a crash had left it before its removal
        cache, _, expected = _day(path, files)
        assert cache is not None
        assert cache.loaded_from == "file"
        assert _answers(cache) == expected
    finally:
        other.close()


def test_removing_the_files_removes_the_tails(tmp_path: Path) -> None:
    _, files, other, _, _ = _with_tail(tmp_path)
    other.close()
    tail = files.tail_path(MODEL)
    assert tail is not None
    assert tail.exists()
    files.remove()
    assert not tail.exists()
    assert files.path(MODEL) is not None
    assert not files.path(MODEL).exists()


def test_the_tail_layout_is_documented(tmp_path: Path) -> None:
    """Read a tail by the layout in vector_tail's docstring, section by section."""
    _, files, other, _, _ = _with_tail(tmp_path)
    other.close()
    tail = files.tail_path(MODEL)
    assert tail is not None
    data = tail.read_bytes()
    assert data[:8] == b"KIOKUTAL"
    length = int.from_bytes(data[8:16], "little")
    header = json.loads(data[16 : 16 + length])
    assert header["format"] == 1
    assert header["n"] == 1
    assert header["dead"] == 0
    at = 16 + length
    at += -at % 8
    n, dim = header["n"], header["dim"]
    at += 4 * header["dead"] + 4 * n + 4 * n + n
    at += -at % 4
    vector = np.frombuffer(data[at : at + 4 * n * dim], dtype="<f4")
    assert np.allclose(vector, [0.0, 0.0, 1.0, 0.0])
    at += 4 * n * dim + header["ids"]
    assert at + 4 == len(data)
    assert zlib.crc32(data[:at]) == int.from_bytes(data[at:], "little")
