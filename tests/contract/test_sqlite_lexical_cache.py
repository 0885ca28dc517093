"""The in-process copy of the lexical index (:mod:`.lexical_cache`): BM25 scores equal to
FTS5's ``bm25()`` to the last bit, FTS5's order of equal scores, and a copy that follows every
write: this process's, another process's, one rolled back, an erasure."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.store.sqlite import (
    SqliteStore,
    fts_rows,
    lexical_cache,
    open_sqlite_store,
    search,
)
from kioku.ports.store import MemoryFilter, MemoryPatch
from tests.contract.conftest import build_memory, memory_id

#: Words of the rows: ones the Python path tokenizes and ones only FTS5 can (punctuation,
#: capitals, accents, full-width letters, a sound mark).
WORDS = (
    "coffee tea kyoto rain x1 42 寿司 ラーメン たべる 東京 "
    "don't Café e-mail TOKYO ｂｅｅｒ か\u3099 naïve a.b"
).split()
#: Query terms: only what plan() can choose and the snapshot ranks (one token each).
QUERY_WORDS = (
    "coffee tea kyoto rain x1 42 寿司 ラーメン たべる 東京 cafe tokyo naive missing".split()
)
ROWS = 24


def _open(directory: Path) -> SqliteStore:
    store = open_sqlite_store(directory / "memories.db")
    store.add_many([build_memory(n, user_id="alice" if n % 3 else "bob") for n in range(ROWS)])
    return store


@pytest.fixture(autouse=True)
def _copy_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Searches rank from the copy from the first on."""
    monkeypatch.setattr(search, "_FTS5_SEARCHES", 0)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    opened = _open(tmp_path)
    try:
        yield opened
    finally:
        opened.close()


def _bm25(conn: sqlite3.Connection, terms: Sequence[str]) -> dict[int, float]:
    """-bm25() of every row matching any of ``terms``, by FTS5 itself."""
    match = " OR ".join(f'"{t}"' for t in terms)
    found = conn.execute(
        "SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ?",
        (match,),
    ).fetchall()
    return {int(slot): -float(score) for slot, score in found}


def _scope(user: str | None) -> tuple[str, tuple[object, ...]]:
    return ("", ()) if user is None else (" AND user_id = ?", (user,))


def _both(
    conn: sqlite3.Connection, terms: Sequence[str], user: str | None, limit: int
) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
    """search() from the snapshot and from FTS5 alone, with the same plan."""
    query = search.plan(conn, terms)
    if query is None:
        return [], []
    scope, params = _scope(user)
    cached = search.search(conn, query, scope, params, limit)
    plain = search.search(
        conn, search.LexicalQuery(query.match, query.window), scope, params, limit
    )
    return cached, plain


def _same_as_fts5(conn: sqlite3.Connection, queries: Sequence[Sequence[str]]) -> None:
    snap = lexical_cache.current(conn, 0)
    assert snap is not None
    conn.execute(search._VOCAB)
    for term in {t for q in queries for t in q}:
        vocab = conn.execute(
            "SELECT doc FROM temp.memories_fts_vocab WHERE term = ?", (term,)
        ).fetchone()
        assert snap.documents(term) == (0 if vocab is None else vocab[0])
    for terms in queries:
        slots, scores = snap.rank(terms)
        expected = _bm25(conn, terms)
        assert dict(zip(slots.tolist(), scores.tolist(), strict=True)) == expected
        assert slots.tolist() == sorted(expected, key=lambda s: (-expected[s], s))
        for user, limit in ((None, 3), ("alice", 5), ("bob", ROWS)):
            cached, plain = _both(conn, terms, user, limit)
            assert cached == plain


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    writes=st.lists(
        st.tuples(
            st.integers(0, ROWS - 1),
            st.none() | st.lists(st.sampled_from(WORDS), max_size=14),
            st.booleans(),
        ),
        min_size=1,
        max_size=30,
    ),
    queries=st.lists(
        st.lists(st.sampled_from(QUERY_WORDS), min_size=1, max_size=4, unique=True),
        min_size=1,
        max_size=4,
    ),
    logged=st.booleans(),
)
def test_scores_and_order_equal_fts5_after_any_writes(
    writes: list[tuple[int, list[str] | None, bool]], queries: list[list[str]], logged: bool
) -> None:
    """Rows replaced or removed (None), some with a search between writes, then queries:
    every score equals bm25()'s exactly, equal scores keep ascending slots, and search()
    finds the same through the snapshot as through FTS5, in and out of scopes; with the
    changed slots logged, or not (then every row is read again and compared)."""
    with tempfile.TemporaryDirectory() as directory, pytest.MonkeyPatch.context() as patch:
        if not logged:
            patch.setattr(lexical_cache, "_MAX_LINK_SLOTS", 0)
        store = _open(Path(directory))
        try:
            conn = store._connection()
            for n, words, look in writes:
                with store.atomic():
                    if words is None:
                        search.remove(conn, memory_id(n))
                    else:
                        search.put_many(conn, [(memory_id(n), " ".join(words))])
                if look:
                    lexical_cache.current(conn, 0)  # a snapshot to bring up to date later
            _same_as_fts5(conn, queries)
        finally:
            store.close()


def test_equal_scores_keep_fts5_order_at_the_cut(store: SqliteStore) -> None:
    conn = store._connection()
    with store.atomic():
        search.put_many(conn, [(memory_id(n), "same words here") for n in range(ROWS)])
    _same_as_fts5(conn, [["same"], ["words", "here"]])
    cached, plain = _both(conn, ["same"], "alice", 4)
    assert len(cached) == 4
    assert cached == plain


def test_a_window_ranks_the_same_sample(store: SqliteStore) -> None:
    conn = store._connection()
    with store.atomic():
        search.put_many(conn, [(memory_id(n), "coffee " * (1 + n % 3)) for n in range(ROWS)])
    slots = sorted(int(r[0]) for r in conn.execute("SELECT rowid FROM memories_fts"))
    window = (slots[5], slots[15])
    query = search.LexicalQuery('"coffee"', window, ("coffee",))
    cached = search.search(conn, query, "", (), 6)
    plain = search.search(conn, search.LexicalQuery('"coffee"', window), "", (), 6)
    assert cached == plain
    assert len(cached) == 6


def test_this_process_writes_are_followed(store: SqliteStore) -> None:
    conn = store._connection()
    with store.reading():
        assert store.search_lexical(["harpsichord"], MemoryFilter(), 5) == []
    store.update(memory_id(4), MemoryPatch(content="harpsichord recital"))
    found = store.search_lexical(["harpsichord"], MemoryFilter(), 5)
    assert [m for m, _ in found] == [memory_id(4)]
    store.delete(memory_id(4))
    assert store.search_lexical(["harpsichord"], MemoryFilter(), 5) == []
    _same_as_fts5(conn, [["content"], ["trigger", "content"]])


def test_a_rolled_back_write_is_never_taken_for_a_later_one(store: SqliteStore) -> None:
    """A snapshot made inside a transaction that is undone, then a different write of the
    same size: FTS5's own records may look the same, the version does not."""
    conn = store._connection()

    def undone() -> None:
        with store.atomic():
            search.put_many(conn, [(memory_id(1), "oboe oboe")])
            assert lexical_cache.current(conn, 0) is not None
            found = store.search_lexical(["oboe"], MemoryFilter(), 5)
            assert [m for m, _ in found] == [memory_id(1)]
            raise RuntimeError("undo")

    with pytest.raises(RuntimeError):
        undone()
    assert store.search_lexical(["oboe"], MemoryFilter(), 5) == []
    with store.atomic():
        search.put_many(conn, [(memory_id(1), "lute lute")])
    assert store.search_lexical(["oboe"], MemoryFilter(), 5) == []
    assert [m for m, _ in store.search_lexical(["lute"], MemoryFilter(), 5)] == [memory_id(1)]
    _same_as_fts5(conn, [["oboe"], ["lute"], ["content"]])


_WRITER = """
import sys
from kioku.adapters.store.sqlite import open_sqlite_store
from kioku.ports.store import MemoryPatch
store = open_sqlite_store(sys.argv[1])
store.update(sys.argv[2], MemoryPatch(content="bassoon concerto"))
store.delete(sys.argv[3])
store.close()
"""


def test_another_process_writes_are_followed(store: SqliteStore) -> None:
    conn = store._connection()
    before = store.search_lexical(["content"], MemoryFilter(), ROWS)
    assert memory_id(7) in {m for m, _ in before}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run(
        [sys.executable, "-c", _WRITER, str(store.path), memory_id(5), memory_id(7)],
        check=True,
        env=env,
        timeout=120,
    )
    assert [m for m, _ in store.search_lexical(["bassoon"], MemoryFilter(), 5)] == [memory_id(5)]
    after = {m for m, _ in store.search_lexical(["content"], MemoryFilter(), ROWS)}
    assert memory_id(7) not in after
    assert memory_id(5) not in after
    _same_as_fts5(conn, [["content"], ["bassoon", "trigger"]])


def test_an_erased_memory_and_a_merged_index_are_followed(store: SqliteStore) -> None:
    conn = store._connection()
    assert memory_id(2) in {m for m, _ in store.search_lexical(["content"], MemoryFilter(), 50)}
    store.delete_many([memory_id(2)])
    found = {m for m, _ in store.search_lexical(["content"], MemoryFilter(), 50)}
    assert memory_id(2) not in found
    assert len(found) == ROWS - 1
    before = lexical_cache.current(conn, 0)
    store.scrub()  # merges the index: a new structure record, the same rows and version
    after = lexical_cache.current(conn, 0)
    assert before is not None
    assert after is not None
    assert after is not before
    assert after.key[0] == before.key[0]
    assert {m for m, _ in store.search_lexical(["content"], MemoryFilter(), 50)} == found
    _same_as_fts5(conn, [["content"], ["trigger", "content"]])


def test_a_store_over_the_limit_is_not_copied(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = store._connection()
    assert lexical_cache.current(conn, lexical_cache.MAX_MEMORIES + 1) is None
    monkeypatch.setattr(lexical_cache, "MAX_MEMORIES", 3)
    found = store.search_lexical(["content"], MemoryFilter(), 5)
    assert len(found) == 5
    monkeypatch.undo()
    assert store.search_lexical(["content"], MemoryFilter(), 5) == found


def test_a_process_copies_the_index_only_after_a_few_searches(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = store._connection()
    lexical_cache.forget(conn)
    monkeypatch.setattr(search, "_FTS5_SEARCHES", 2)
    first = store.search_lexical(["content"], MemoryFilter(), 5)
    assert store.term_documents(["content"])[1] == {"content": ROWS}
    assert lexical_cache.current(conn, 0, build_after=None) is None
    assert store.search_lexical(["content"], MemoryFilter(), 5) == first
    assert lexical_cache.current(conn, 0, build_after=None) is None
    assert store.search_lexical(["content"], MemoryFilter(), 5) == first
    assert lexical_cache.current(conn, 0, build_after=None) is not None


@pytest.mark.parametrize("value", ["not a log", "1 2 x", "- 5 -", ""])
def test_a_version_value_that_is_no_log_makes_every_row_read_again(
    store: SqliteStore, value: str
) -> None:
    """A value older code or a damaged row left: the copy compares every row instead."""
    conn = store._connection()
    store.search_lexical(["content"], MemoryFilter(), 5)
    store.set_state(lexical_cache.LEXICAL_VERSION, value)
    store.update(memory_id(3), MemoryPatch(content="piccolo"))
    assert [m for m, _ in store.search_lexical(["piccolo"], MemoryFilter(), 5)] == [memory_id(3)]
    store.update(memory_id(3), MemoryPatch(content="tuba"))
    assert store.search_lexical(["piccolo"], MemoryFilter(), 5) == []
    _same_as_fts5(conn, [["content"], ["tuba", "trigger"]])


def test_writes_beyond_the_log_make_every_row_read_again(store: SqliteStore) -> None:
    conn = store._connection()
    store.search_lexical(["content"], MemoryFilter(), 5)
    for n in range(lexical_cache._MAX_LINKS + 2):
        store.update(memory_id(n), MemoryPatch(content=f"cello {n}"))
    snap = lexical_cache.current(conn, 0)
    assert snap is not None
    assert snap.documents("cello") == lexical_cache._MAX_LINKS + 2
    _same_as_fts5(conn, [["cello"], ["content"]])


@pytest.mark.parametrize("crowded", [False, True])
def test_indexed_terms_from_the_copy_equal_the_index_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, crowded: bool
) -> None:
    if crowded:
        # Home slots a few apart, so memories share probe windows as they never do by chance.
        home = fts_rows.home_slot

        def crowd(memory_id: str) -> int:
            return 1000 + home(memory_id) % 32

        # The writers (fts_rows) and the readers (search) place rows by the same slots.
        monkeypatch.setattr(fts_rows, "home_slot", crowd)
        monkeypatch.setattr(search, "home_slot", crowd)
    store = _open(tmp_path)
    try:
        _indexed_terms_follow(store)
    finally:
        store.close()


def _indexed_terms_follow(store: SqliteStore) -> None:
    conn = store._connection()
    ids = [memory_id(n) for n in range(ROWS)] + ["no-such-memory"]
    store.update(memory_id(2), MemoryPatch(content="harpsichord recital tonight"))
    store.delete(memory_id(5))

    def from_fts5() -> dict[str, frozenset[str]]:
        lexical_cache.forget(conn)
        return search.indexed_terms(conn, ids)

    expected = from_fts5()
    assert memory_id(5) not in expected
    assert "harpsichord" in expected[memory_id(2)]
    assert lexical_cache.current(conn, 0) is not None  # the copy exists from here on
    assert search.indexed_terms(conn, ids) == expected
    store.update(memory_id(3), MemoryPatch(content="a fresh text about oboes"))
    followed = search.indexed_terms(conn, ids)
    assert "oboe" in followed[memory_id(3)]
    assert followed == from_fts5()
