"""The persisted vector cache of the SQLite store (``<db>.vectors/``) on real files.

The first vector search of a process builds the cache from the database's rows and writes
it beside the database; a fresh store on the same file maps it instead of reading the blobs.
Any write that changes what vector search sees makes the file stale; a damaged or foreign
file is ignored and replaced; and the answers never depend on where the cache came from.
"""

from __future__ import annotations

import itertools
import json
import mmap
import os
import shutil
import stat
import sys
import zlib
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from kioku import Kioku
from kioku.adapters.store.sqlite import (
    SqliteStore,
    open_sqlite_store,
    vector_file,
    vector_layout,
    vectors,
)
from kioku.core.model import Embedding, Memory
from kioku.ports.store import MemoryFilter, MemoryPatch
from tests.contract.conftest import BASE_TIME, build_memory

MODEL = "test:model"
OTHER_MODEL = "test:other"
DIM = 16
USERS = ("alice", "bob")
AGENTS = ("a1", "a2")

posix_only = pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")


def _vector(rng: np.random.Generator, sparse: bool = False) -> tuple[float, ...]:
    vector = rng.standard_normal(DIM).astype(np.float32)
    if sparse:
        vector[rng.random(DIM) < 0.8] = 0.0
    return tuple(float(x) for x in vector)


def _memory(
    n: int, rng: np.random.Generator, model: str = MODEL, archived: bool | None = None
) -> Memory:
    """Memory ``n`` with a random vector of ``model``, in one of four scopes; a fifth of
    them archived unless ``archived`` says."""
    if archived is None:
        archived = bool(rng.random() < 0.2)
    fields: dict[str, object] = {}
    if archived:
        created = BASE_TIME + timedelta(minutes=n)
        fields = {"current_level": 4, "archived_at": created + timedelta(days=1)}
    return build_memory(
        n,
        user_id=USERS[n % len(USERS)],
        agent_id=AGENTS[(n // 2) % len(AGENTS)],
        embedding=Embedding(model, _vector(rng)),
        **fields,
    )


def _refuse_blobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, building the vectors from the database's rows fails: only the file can
    answer."""

    def refuse(*args: object, **kwargs: object) -> vectors.ModelVectors:
        raise AssertionError("the vectors were rebuilt from the database's blobs")

    monkeypatch.setattr(vectors, "build", refuse)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "home" / "memories.db"


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


@pytest.fixture
def filled(db: Path, rng: np.random.Generator) -> Path:
    """A database with 300 memories of MODEL in two users, two agents, some archived."""
    with open_sqlite_store(db) as store:
        store.add_many([_memory(n, rng) for n in range(300)])
    return db


def _cache_file(db: Path, model: str = MODEL) -> Path:
    path = vector_file.VectorFiles(db).path(model)
    assert path is not None
    return path


def _search(
    store: SqliteStore,
    query: Sequence[float],
    flt: MemoryFilter | None = None,
    limit: int = 10,
    model: str = MODEL,
) -> list[tuple[str, float]]:
    return store.vector_search(model, query, flt or MemoryFilter(), limit)


def _cached(store: SqliteStore, model: str = MODEL) -> vectors.ModelVectors:
    entry = store._vectors.get(model)
    assert entry is not None
    assert entry[1] is not None
    return entry[1]


def _fresh_search(
    db: Path, query: Sequence[float], flt: MemoryFilter | None = None, limit: int = 10
) -> tuple[list[tuple[str, float]], str]:
    """What a new process's first search answers, and where its cache came from."""
    with open_sqlite_store(db) as store:
        found = _search(store, query, flt, limit)
        return found, _cached(store).loaded_from


# -- written once, then used ------------------------------------------------------------------


def test_the_first_search_writes_the_file_and_a_fresh_store_maps_it(
    filled: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = _vector(rng)
    assert not _cache_file(filled).exists()
    with open_sqlite_store(filled) as first:
        expected = _search(first, query)
        assert _cached(first).loaded_from == "sqlite"
    assert _cache_file(filled).is_file()
    _refuse_blobs(monkeypatch)
    with open_sqlite_store(filled) as second:
        assert _search(second, query) == expected
        cached = _cached(second)
        assert cached.loaded_from == "file"
        # A view of the file's private mapping, with the file's spare columns after it.
        assert cached.spare is not None
        assert cached.spare.origin == (cached.version, 300)
        mapping = cached.spare.array.base.base  # (dim, capacity) <- flat <- the mapping
        assert isinstance(mapping, memoryview)
        assert isinstance(mapping.obj, mmap.mmap)
        assert np.shares_memory(cached.columns, cached.spare.array)


def test_the_file_round_trips_every_array_exactly(filled: Path, rng: np.random.Generator) -> None:
    with open_sqlite_store(filled) as store:
        _search(store, _vector(rng))
        built = _cached(store)
    with open_sqlite_store(filled) as store:
        _search(store, _vector(rng))
        mapped = _cached(store)
    assert mapped.loaded_from == "file"
    assert (mapped.model, mapped.version, mapped.dim) == (built.model, built.version, built.dim)
    assert len(mapped.ids) == len(built.ids) == 300
    assert mapped.ids.tolist() == built.ids.tolist()
    assert [mapped.ids[row] for row in range(300)] == built.ids.tolist()  # decoded one by one
    assert all(type(i) is str for i in mapped.ids)
    assert np.array_equal(mapped.columns, built.columns)
    assert mapped.columns.dtype == np.float32
    assert mapped.columns.shape == (DIM, 300)
    assert np.array_equal(mapped.scope_codes, built.scope_codes)
    assert mapped.scope_codes.dtype == np.int32
    assert np.array_equal(mapped.archived, built.archived)
    assert mapped.archived.dtype == np.bool_
    assert mapped.scopes == built.scopes
    assert vector_file.VectorFiles(filled).verify(MODEL)


def test_answers_are_identical_with_and_without_the_file(
    filled: Path, rng: np.random.Generator
) -> None:
    filters = [
        MemoryFilter(),
        MemoryFilter(archived=False),
        MemoryFilter(archived=True),
        MemoryFilter(user_id="alice"),
        MemoryFilter(user_id="bob", agent_id="a2", archived=False),
        MemoryFilter(agent_id="a1"),
        MemoryFilter(user_id="nobody"),
    ]
    queries = [_vector(rng, sparse=i % 2 == 0) for i in range(24)]
    with open_sqlite_store(filled) as built:
        expected = [
            _search(built, q, f, limit) for q in queries for f in filters for limit in (1, 7)
        ]
        assert _cached(built).loaded_from == "sqlite"
    with open_sqlite_store(filled) as mapped:
        found = [_search(mapped, q, f, limit) for q in queries for f in filters for limit in (1, 7)]
        assert _cached(mapped).loaded_from == "file"
    assert found == expected  # the same ids and the very same scores


def test_a_kioku_opened_again_recalls_from_the_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}) as kioku:
        for i in range(20):
            kioku.remember(f"trigger {i} gardens", f"content {i}", intensity=50, category="work")
        first = kioku.recall("gardens", mark=False)
    with Kioku.open(home, env={}) as kioku:
        again = kioku.recall("gardens", mark=False)
        assert isinstance(kioku.store, SqliteStore)
        assert _cached(kioku.store, kioku.embedder.model_id).loaded_from == "file"
    assert [i.memory.id for i in again.items] == [i.memory.id for i in first.items]
    assert [i.relevance for i in again.items] == [i.relevance for i in first.items]


def test_warming_after_writes_leaves_a_current_file_for_the_next_process(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}) as kioku:
        for i in range(20):
            kioku.remember(f"trigger {i} gardens", f"content {i}", intensity=50, category="work")
        model = kioku.embedder.model_id
        files = vector_file.VectorFiles(home / "memories.db")
        version = int(kioku.store.get_state(vectors.VECTORS_VERSION) or 0)
        assert files.read(model, version) is None  # written memories: no current file yet
        kioku.warm_vector_cache()
        assert files.read(model, version) is not None
    with Kioku.open(home, env={}) as kioku:
        kioku.recall("gardens", mark=False)
        assert isinstance(kioku.store, SqliteStore)
        assert _cached(kioku.store, model).loaded_from == "file"


# -- every write makes it stale ---------------------------------------------------------------


def _written(db: Path, rng: np.random.Generator) -> tuple[float, ...]:
    """Search once so the file exists, and return the query used."""
    query = _vector(rng)
    with open_sqlite_store(db) as store:
        _search(store, query)
    assert _fresh_search(db, query)[1] == "file"
    return query


def _insert(store: SqliteStore, rng: np.random.Generator) -> None:
    store.add(_memory(1000, rng, archived=False))


def _delete(store: SqliteStore, rng: np.random.Generator) -> None:
    assert store.delete(build_memory(3).id)


def _archive(store: SqliteStore, rng: np.random.Generator) -> None:
    memory = store.list(MemoryFilter(archived=False, limit=1))[0]
    patch = MemoryPatch(current_level=4, archived_at=memory.created + timedelta(days=2))
    assert store.update(memory.id, patch)


def _unarchive(store: SqliteStore, rng: np.random.Generator) -> None:
    memory = store.list(MemoryFilter(archived=True, limit=1))[0]
    assert store.update(memory.id, MemoryPatch(current_level=1, archived_at=None))


def _reembed(store: SqliteStore, rng: np.random.Generator) -> None:
    assert store.update(build_memory(5).id, MemoryPatch(embedding=Embedding(MODEL, _vector(rng))))


@pytest.mark.parametrize("write", [_insert, _delete, _archive, _unarchive, _reembed])
def test_a_write_that_vector_search_sees_makes_the_file_stale(
    filled: Path, rng: np.random.Generator, write: object
) -> None:
    query = _written(filled, rng)
    with open_sqlite_store(filled) as store:
        write(store, rng)  # type: ignore[operator]
    answer, source = _fresh_search(filled, query, limit=300)
    # Never the stale file as it is: brought up to date from the change log (a deletion
    # removes the files, so that one is a full load).
    assert source == ("sqlite" if write is _delete else "log")
    shutil.rmtree(_cache_file(filled).parent)
    assert _fresh_search(filled, query, limit=300) == (answer, "sqlite")
    assert _fresh_search(filled, query, limit=300) == (answer, "file")


def test_writes_that_vector_search_does_not_see_keep_the_file(
    filled: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = _written(filled, rng)
    _refuse_blobs(monkeypatch)
    with open_sqlite_store(filled) as store:
        store.mark_recalled([build_memory(1).id])
        store.update(build_memory(2).id, MemoryPatch(retention_score=0.5))
        store.set_state("something", "else")
    assert _fresh_search(filled, query)[1] == "file"


def test_a_store_holding_the_cache_sees_another_stores_write(
    filled: Path, rng: np.random.Generator
) -> None:
    query = _written(filled, rng)
    target = tuple(-x for x in query)
    with open_sqlite_store(filled) as reader, open_sqlite_store(filled) as writer:
        assert _search(reader, query)
        writer.add(_memory(2000, rng, archived=False))
        writer.update(build_memory(2000).id, MemoryPatch(embedding=Embedding(MODEL, target)))
        assert _search(reader, target, limit=1)[0][0] == build_memory(2000).id


def test_erasing_a_memory_removes_the_files(filled: Path, rng: np.random.Generator) -> None:
    _written(filled, rng)
    with open_sqlite_store(filled) as store:
        assert store.delete(build_memory(7).id)
        assert not _cache_file(filled).exists()
        assert not store.delete(build_memory(7).id)


def test_an_erasure_while_the_file_is_written_leaves_no_file_behind(
    filled: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process erases a memory after this one read its snapshot but before its file
    is renamed into place: the erasure's own removal finds nothing, so the search that wrote
    the file must see the new version and take the file away."""
    erased = build_memory(7).id
    write = vector_file.VectorFiles.write

    def erase_then_write(
        files: vector_file.VectorFiles, cached: vectors.ModelVectors
    ) -> Path | None:
        with open_sqlite_store(filled) as other:
            assert other.delete(erased)
        return write(files, cached)

    monkeypatch.setattr(vector_file.VectorFiles, "write", erase_then_write)
    with open_sqlite_store(filled) as store:
        _search(store, _vector(rng))
    assert not _cache_file(filled).exists()  # no file holds the erased memory's vector
    monkeypatch.undo()
    found, source = _fresh_search(filled, _vector(rng), limit=300)
    assert source == "sqlite"
    assert erased not in {memory_id for memory_id, _ in found}


def test_a_search_inside_a_transaction_writes_no_file(
    filled: Path, rng: np.random.Generator
) -> None:
    with open_sqlite_store(filled) as store, store.atomic():
        store.add(_memory(3000, rng))
        assert _search(store, _vector(rng))
    assert not _cache_file(filled).exists()


def test_the_version_is_random_and_never_a_counter(filled: Path, rng: np.random.Generator) -> None:
    with open_sqlite_store(filled) as store:
        seen = []
        for n in range(4000, 4005):
            _insert_n(store, n, rng)
            version = store.get_state(vectors.VECTORS_VERSION)
            assert version is not None
            seen.append(int(version))
    assert len(set(seen)) == len(seen)
    assert all(0 < v < 2**62 for v in seen)
    assert any(b != a + 1 for a, b in itertools.pairwise(seen))


def _insert_n(store: SqliteStore, n: int, rng: np.random.Generator) -> None:
    store.add(_memory(n, rng))


def test_a_restored_backup_is_not_answered_from_a_later_file(
    filled: Path, rng: np.random.Generator, tmp_path: Path
) -> None:
    backup = tmp_path / "backup.db"
    with open_sqlite_store(filled) as store:
        store.backup(backup)
        for n in range(5000, 5010):
            _insert_n(store, n, rng)
    query = _written(filled, rng)
    later, _ = _fresh_search(filled, query, limit=400)
    for suffix in ("-wal", "-shm"):
        filled.with_name(filled.name + suffix).unlink(missing_ok=True)
    shutil.copyfile(backup, filled)
    restored, source = _fresh_search(filled, query, limit=400)
    assert source == "sqlite"
    assert len(restored) == len(later) - 10


# -- damaged, foreign and missing files --------------------------------------------------------


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _flip(offset: int) -> object:
    def damage(path: Path) -> None:
        data = bytearray(path.read_bytes())
        data[offset] ^= 0x55
        path.write_bytes(bytes(data))

    return damage


def _flip_near_end(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-10] ^= 0x55  # inside the ids
    path.write_bytes(bytes(data))


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _foreign(path: Path) -> None:
    path.write_bytes(os.urandom(4096))


def _numpy_file(path: Path) -> None:
    with open(path, "wb") as file:
        np.save(file, np.zeros((DIM, 300), dtype=np.float32))


@pytest.mark.parametrize(
    "damage",
    [_truncate, _flip(3), _flip(20), _flip_near_end, _empty, _foreign, _numpy_file],
    ids=["truncated", "magic", "header", "ids", "empty", "foreign", "npy"],
)
def test_a_damaged_file_is_ignored_and_replaced(
    filled: Path, rng: np.random.Generator, damage: object
) -> None:
    query = _written(filled, rng)
    expected, _ = _fresh_search(filled, query, limit=50)
    damage(_cache_file(filled))  # type: ignore[operator]
    assert _fresh_search(filled, query, limit=50) == (expected, "sqlite")
    assert _fresh_search(filled, query, limit=50) == (expected, "file")


def test_a_file_of_another_model_is_ignored(filled: Path, rng: np.random.Generator) -> None:
    query = _written(filled, rng)
    path = _cache_file(filled)
    other = _cache_file(filled, OTHER_MODEL)
    shutil.copyfile(path, other)
    with open_sqlite_store(filled) as store:
        assert _search(store, query, model=OTHER_MODEL) == []


def test_a_damaged_matrix_fails_the_deep_check(filled: Path, rng: np.random.Generator) -> None:
    _written(filled, rng)
    files = vector_file.VectorFiles(filled)
    assert files.verify(MODEL)
    path = _cache_file(filled)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x01  # inside the matrix
    path.write_bytes(bytes(data))
    assert not files.verify(MODEL)


def test_deleting_the_files_is_always_safe(filled: Path, rng: np.random.Generator) -> None:
    query = _written(filled, rng)
    expected, _ = _fresh_search(filled, query)
    with open_sqlite_store(filled) as store:
        assert _search(store, query) == expected
        shutil.rmtree(_cache_file(filled).parent)
        assert _search(store, query) == expected  # the in-process cache is not the file
    assert _fresh_search(filled, query) == (expected, "sqlite")


def test_a_stale_file_of_a_model_no_longer_written_is_removed(
    filled: Path, rng: np.random.Generator
) -> None:
    _written(filled, rng)
    with open_sqlite_store(filled) as store:
        store.add(_memory(6000, rng, model=OTHER_MODEL))
        assert _search(store, _vector(rng), model=OTHER_MODEL)
    assert _cache_file(filled, OTHER_MODEL).is_file()
    assert not _cache_file(filled).exists()  # stale since the insert: pruned


def test_a_temporary_file_left_by_a_killed_writer_is_removed(
    filled: Path, rng: np.random.Generator
) -> None:
    _written(filled, rng)
    directory = _cache_file(filled).parent
    leftover = directory / ".abc.vec.dead.tmp"
    leftover.write_bytes(b"x" * 100)
    os.utime(leftover, (1, 1))
    with open_sqlite_store(filled) as store:
        _insert(store, rng)
        _search(store, _vector(rng))
    assert not leftover.exists()
    assert [p.name for p in directory.iterdir()] == [_cache_file(filled).name]


# -- where files are written -------------------------------------------------------------------


@posix_only
def test_the_files_are_owner_only(filled: Path, rng: np.random.Generator) -> None:
    _written(filled, rng)
    path = _cache_file(filled)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_in_memory_databases_get_no_files(tmp_path: Path, rng: np.random.Generator) -> None:
    with open_sqlite_store(tmp_path / "memories.db") as store:
        store.add(_memory(1, rng))
        _search(store, _vector(rng))
        cached = _cached(store)
    before = sorted(p.name for p in tmp_path.iterdir())
    for name in (":memory:", ""):
        files = vector_file.VectorFiles(Path(name))
        assert files.directory is None
        assert files.path(MODEL) is None
        assert files.write(cached) is None
        assert files.read(MODEL, cached.version) is None
    assert vector_file.cache_dir(Path("file:x?mode=memory")) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@posix_only
@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anyway")
def test_a_read_only_store_writes_no_file(filled: Path, rng: np.random.Generator) -> None:
    with open_sqlite_store(filled) as store:
        _search(store, _vector(rng))  # settles the WAL files while writable
    shutil.rmtree(_cache_file(filled).parent)
    filled.chmod(0o400)
    try:
        with open_sqlite_store(filled) as store:
            assert _search(store, _vector(rng))
    finally:
        filled.chmod(0o600)
    assert not _cache_file(filled).parent.exists()


def test_a_cache_directory_that_cannot_be_written_fails_no_search(
    filled: Path, rng: np.random.Generator
) -> None:
    blocker = _cache_file(filled).parent
    blocker.write_text("not a directory")
    query = _vector(rng)
    with open_sqlite_store(filled) as store:
        assert _search(store, query)
    assert blocker.read_text() == "not a directory"


@pytest.mark.skipif(sys.byteorder != "little", reason="files record the byte order")
def test_the_file_layout_is_documented(filled: Path, rng: np.random.Generator) -> None:
    """Read a file by the layout in vector_layout's docstring, section by section."""
    with open_sqlite_store(filled) as store:
        _search(store, _vector(rng))
        built = _cached(store)
    data = _cache_file(filled).read_bytes()
    assert data[:8] == b"KIOKUVEC"
    length = int.from_bytes(data[8:16], "little")
    header = json.loads(data[16 : 16 + length])
    assert header["format"] == 3
    dim, n, capacity = header["dim"], header["n"], header["capacity"]
    assert capacity == n + vectors.headroom(n)
    at = 16 + length
    at += -at % 64

    def take(size: int) -> bytes:
        nonlocal at
        at += size
        return data[at - size : at]

    matrix = np.frombuffer(take(4 * dim * capacity), dtype="<f4").reshape(dim, capacity)
    columns = matrix[:, :n]
    assert not matrix[:, n:].any()  # room for later vectors, zeros
    scales = np.frombuffer(take(4 * dim), dtype="<f4")
    codes = np.frombuffer(take(4 * n), dtype="<i4")
    ends = np.frombuffer(take(4 * n), dtype="<u4")
    archived = np.frombuffer(take(n), dtype=np.uint8)
    levels = np.frombuffer(take(dim * n), dtype=np.uint8).reshape(dim, n)
    ids = take(int(ends[-1])).decode("utf-8").split("\x00")
    crc = int.from_bytes(take(4), "little")
    assert at == len(data)
    assert np.array_equal(columns, built.columns)
    assert np.array_equal(codes, built.scope_codes)
    assert np.array_equal(archived.astype(bool), built.archived)
    assert ids == built.ids.tolist()
    starts = np.concatenate(([0], ends[:-1].astype(np.int64) + 1))
    assert [len(i.encode()) for i in ids] == (ends.astype(np.int64) - starts).tolist()
    # Each component is within half a step of its level, and the steps are max |x| / 127.
    steps = scales.astype(np.float64)[:, None]
    error = np.abs(columns.astype(np.float64) - steps * (levels.astype(np.float64) - 128))
    assert bool((error <= steps * (0.5 + 1e-9)).all())
    assert np.allclose(scales, np.abs(columns).max(axis=1) / 127, rtol=1e-6)
    checked = data[: 16 + length + (-(16 + length) % 64)]
    body = 16 + length + (-(16 + length) % 64) + 4 * dim * capacity
    checked += data[body : body + 4 * dim + 9 * n]
    checked += data[len(data) - 4 - int(ends[-1]) : len(data) - 4]
    assert zlib.crc32(checked) == crc
    assert header["columns_crc32"] == zlib.crc32(matrix.tobytes())
    assert header["levels_crc32"] == zlib.crc32(levels.tobytes())


def test_a_store_its_user_cannot_write_gets_no_file(
    filled: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_file.os, "access", lambda path, mode: False)
    with open_sqlite_store(filled) as store:
        assert _search(store, _vector(rng))
        assert _cached(store).loaded_from == "sqlite"
    assert not _cache_file(filled).parent.exists()


def test_files_of_an_older_format_are_removed_when_one_is_written(
    filled: Path, rng: np.random.Generator
) -> None:
    directory = _cache_file(filled).parent
    directory.mkdir(mode=0o700, exist_ok=True)
    old = directory / ("0" * 32 + ".vec")
    header = json.dumps({"format": 1, "version": 1}).encode()
    old.write_bytes(b"KIOKUVEC" + len(header).to_bytes(8, "little") + header)
    _written(filled, rng)
    assert not old.exists()
    assert _cache_file(filled).exists()


def test_the_integrity_check_finds_a_damaged_quantised_copy(
    filled: Path, rng: np.random.Generator
) -> None:
    """Searches check only the small sections; `kioku doctor` checks both matrices too."""
    _written(filled, rng)
    path = _cache_file(filled)
    with open_sqlite_store(filled) as store:
        assert store.check_integrity().ok
    data = bytearray(path.read_bytes())
    layout = vector_layout.Layout.of(memoryview(bytes(data)))
    start, end = layout.span("levels")
    data[(start + end) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    assert not vector_file.VectorFiles(filled).verify(MODEL)
    with open_sqlite_store(filled) as store:
        report = store.check_integrity()
    assert not report.ok
    [problem] = report.problems
    assert str(path) in problem
    assert "levels do not match their checksum" in problem
    assert "fix: delete it" in problem


@pytest.mark.skipif(os.name == "nt", reason="POSIX modes")
def test_the_integrity_check_reports_a_cache_others_can_read(
    filled: Path, rng: np.random.Generator
) -> None:
    _written(filled, rng)
    path = _cache_file(filled)
    path.chmod(0o644)
    with open_sqlite_store(filled) as store:
        report = store.check_integrity()
    assert not report.ok
    assert any(str(path) in p and "chmod 600" in p for p in report.problems)
    assert report.details["file_modes"][str(path.parent)] == "0o700"


@pytest.mark.parametrize("size", [40, vector_file.QUANTISED_MAX_ROWS + 1])
def test_a_grown_cache_with_dead_rows_writes_the_file_of_its_live_rows(
    tmp_path: Path, size: int
) -> None:
    # A cache that grew in place is a strided view of a larger matrix, and one caught up on
    # changes keeps dead rows: the file is written row by row from it, without copies, and
    # must hold exactly what its live, contiguous copy would.
    rng = np.random.default_rng(size)
    dim = 8
    spare = rng.standard_normal((dim, size + 13)).astype(np.float32)
    dead = rng.random(size) < 0.3
    dead[0] = True
    grown = vectors.ModelVectors(
        model=MODEL,
        version=77,
        dim=dim,
        ids=vectors.IdColumn([f"m{i:07d}" for i in range(size)]),
        columns=spare[:, :size],
        scope_codes=rng.integers(0, 2, size).astype(np.int32),
        scopes=(("u", "a"), ("v", "b")),
        archived=rng.random(size) < 0.5,
        dead=dead,
        spare=vectors.Spare(spare, size),
    )
    assert not grown.columns.flags.c_contiguous
    live = grown.live()
    assert live.columns.flags.c_contiguous
    assert live.dead is None
    written = []
    for name, cache in (("grown", grown), ("live", live)):
        db = tmp_path / name / "memories.db"
        db.parent.mkdir()
        db.touch()
        path = vector_file.VectorFiles(db).write(cache)
        assert path is not None
        written.append(path.read_bytes())
        assert vector_file.VectorFiles(db).verify(MODEL)
    assert written[0] == written[1]
