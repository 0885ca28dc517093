"""The write path of a remembered turn: transactions, the vector, and what it does not import.

Each ``remember_turn`` is one transaction: nested levels are savepoints, and a single-statement
state write inside a transaction needs none (it is all or nothing by itself). The new memory's
vector is computed without numpy when the embedder can (the offline one), and must be the same
floats, bit for bit, as the numpy path gives.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku import Kioku
from kioku.adapters.embedders.offline import HashEmbedder
from kioku.adapters.store.sqlite import open_sqlite_store
from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.errors import StoreError, ValidationError
from tests.contract.conftest import build_memory


class _StopError(Exception):
    pass


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = open_sqlite_store(tmp_path / "memories.db")
    yield opened
    opened.close()


def _other_thread_can_write(store: SqliteStore) -> bool:
    done = threading.Event()

    def write() -> None:
        store.set_state("from-thread", "yes")
        done.set()

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    thread.join(timeout=30)
    return done.is_set()


def _write_then_fail(store: SqliteStore, *keys: str) -> None:
    """Set ``keys`` each in a level of its own inside one more level, then raise."""
    with store.atomic():
        for key in keys:
            with store.atomic():
                store.set_state(key, "written")
        store.add(build_memory(1))
        raise _StopError


def test_state_written_inside_a_transaction_goes_with_it(store: SqliteStore) -> None:
    with store.atomic():
        store.set_state("outer", "kept")
        with pytest.raises(_StopError):
            _write_then_fail(store, "inner", "inner too")
        store.set_state("after", "kept")
    assert store.get_state("outer") == "kept"
    assert store.get_state("after") == "kept"
    assert store.get_state("inner") is None
    assert store.get_state("inner too") is None
    assert store.get(build_memory(1).id) is None
    with pytest.raises(_StopError):
        _write_then_fail(store, "alone")
    assert store.get_state("alone") is None
    assert _other_thread_can_write(store)


def test_a_refused_state_write_leaves_the_transaction_whole(store: SqliteStore) -> None:
    with store.atomic():
        store.set_state("first", "kept")
        with pytest.raises(ValidationError):
            store.set_state("bad", "lone \udc80 surrogate")
        store.add(build_memory(2))
    assert store.get_state("first") == "kept"
    assert store.get_state("bad") is None
    assert store.get(build_memory(2).id) is not None
    assert _other_thread_can_write(store)


def _read_missing_table(store: SqliteStore) -> None:
    with store._reading() as conn:
        conn.execute("SELECT * FROM no_such_table")


def _write_then_break(store: SqliteStore) -> None:
    with store._writing() as conn:
        conn.execute("INSERT INTO state (key, value) VALUES ('gone', '1')")
        conn.execute("INSERT INTO no_such_table VALUES (1)")


def _fail_in_snapshot(store: SqliteStore) -> None:
    with store.reading():
        raise _StopError


def test_errors_inside_reads_and_writes_become_store_errors_and_free_the_lock(
    store: SqliteStore,
) -> None:
    with pytest.raises(StoreError):
        _read_missing_table(store)
    with store.atomic():
        store.set_state("kept", "1")
        with pytest.raises(StoreError):
            _write_then_break(store)
    assert store.get_state("kept") == "1"
    assert store.get_state("gone") is None
    with pytest.raises(_StopError):
        _fail_in_snapshot(store)
    assert _other_thread_can_write(store)
    assert store.get_state("from-thread") == "yes"


def _enter_atomic(store: SqliteStore) -> None:
    with store.atomic():
        pass


def test_a_closed_store_says_so(tmp_path: Path) -> None:
    closed = open_sqlite_store(tmp_path / "memories.db")
    closed.close()
    with pytest.raises(StoreError, match="closed"):
        _enter_atomic(closed)
    with pytest.raises(StoreError, match="closed"):
        closed.get_state("x")


_TEXT = st.text(
    st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=120
) | st.sampled_from(["Caroline: I love hiking.", "今日は東京で会議がありました。", "ok"])


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kioku]:
    """A real engine with the default (offline) embedder."""
    with Kioku.open(tmp_path_factory.mktemp("embed") / "home", env={}) as kioku:
        yield kioku


@settings(max_examples=150, deadline=None)
@given(trigger=_TEXT, content=_TEXT)
def test_the_memorys_vector_is_the_numpy_paths_bit_for_bit(
    engine: Kioku, trigger: str, content: str
) -> None:
    import numpy as np

    from kioku.service.vectors import embed_memory

    embedder = engine.embedder
    assert isinstance(embedder, HashEmbedder)
    memory = build_memory(3, trigger=trigger, content=content)
    vector = embed_memory(engine, memory).embedding
    assert vector is not None
    assert vector.model == embedder.model_id
    row = embedder.embed([f"{trigger}\n{content}"])[0]
    assert tuple(row.tolist()) == vector.vector
    assert np.asarray(vector.vector, dtype=np.float32).tobytes() == row.tobytes()


def test_remembering_a_turn_in_a_fresh_process_does_not_import_numpy(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}) as kioku:
        kioku.remember_turn("Caroline: I went to a support group yesterday.")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from kioku import Kioku\n"
        f"with Kioku.open(Path({str(home)!r}), env={{}}) as kioku:\n"
        "    kioku.remember_turn('Melanie: I love painting. My kids painted with me.')\n"
        "    kioku.remember_turn('Melanie: We went camping last week.')\n"
        "    stored = len(kioku.store.list(__import__('kioku.ports.store', fromlist=['x'])"
        ".MemoryFilter(kind='episode')))\n"
        "print(stored, 'numpy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["3", "False"]


def test_savepoints_keep_their_statement_journals_in_memory(store: SqliteStore) -> None:
    # Every remembered turn nests savepoints; their journals go to no temporary file.
    with store._reading() as conn:
        assert conn.execute("PRAGMA temp_store").fetchone()[0] == 2  # MEMORY
