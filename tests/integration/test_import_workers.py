"""An import whose turns worker processes prepare stores what one process stores.

The same generated turns (English and Japanese, with profile claims, names, a turn asking to
be remembered, exact duplicates, turns without a time or a source id, source ids stored
before and an erased one) are imported into two stores set up alike: once with the turns
prepared in process (``workers=1``) and once by two worker processes (``workers=2``). Memory
ids come from one seeded generator in each run, so every row of every table must be equal
as it is: only the columns of the wall-clock time of the run, the random numbers a store
draws for itself and the digests keyed by them are left out.

A turn that fails in a worker fails the import as it fails in process (its error, the
batches before it kept); a worker that is killed fails it with WorkerStoppedError; no
worker is left running after an import, whatever its end.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.errors import ValidationError
from kioku.service.remember.imports import ImportResult, ImportTurn, import_turns
from kioku.service.remember.workers import TurnPreparer, WorkerStoppedError

_NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
_START = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
#: Columns of the wall-clock time of the run (not of the turns), and the random version of
#: the vector cache a write makes.
_LEFT_OUT = {
    ("memories", "updated_at"),
    ("relations", "created_at"),
    ("schema_migrations", "applied_at"),
    ("vector_log", "version"),
}
#: Tables keyed by each store's own random erasure key, and random state rows.
_KEYED = {"tombstones", "erasure_audit"}
_RANDOM_STATE = {"vectors_version", "lexical_version", "erasure_key"}

_ENGLISH = (
    "I love {thing} and my sister {name} loves it too.",
    "Yesterday I was so angry at {name} about the {thing}.",
    "My favourite food is {thing}, honestly.",
    "We must finish the {thing} report by Friday, it is urgent.",
    "Remember this: {name}'s birthday is in {month}.",
    "I'm a vegetarian and I live in {city}.",
    "{name} told me the {thing} was cancelled, which is sad.",
)
_JAPANESE = (
    "私は{thing}が大好きです。",
    "昨日{name}さんと{city}で会議をした。",
    "明日までに{thing}の資料を仕上げないといけない。",
    "覚えておいて、{name}さんの誕生日は{month}です。",
    "とても悲しいことに{thing}がなくなった。",
)
_WORDS = {
    "thing": ("hiking", "coffee", "budget", "garden", "sushi", "ramen", "piano", "映画"),
    "name": ("Bob", "Carol", "Dave", "花子", "太郎"),
    "city": ("Osaka", "Kyoto", "Berlin", "東京"),
    "month": ("May", "June", "三月"),
}


def _text(rng: random.Random) -> str:
    template = rng.choice(_ENGLISH if rng.random() < 0.6 else _JAPANESE)
    return template.format(**{key: rng.choice(words) for key, words in _WORDS.items()})


def _turns(count: int, seed: int) -> list[ImportTurn]:
    """``count`` generated turns: most with a time, a session and a source id; some without
    a time or a source id, and exact duplicates of the turn before."""
    rng = random.Random(seed)
    turns: list[ImportTurn] = []
    for n in range(count):
        if turns and rng.random() < 0.05:  # the turn before again: an exact duplicate
            before = turns[-1]
            turns.append(
                ImportTurn(n + 1, before.user, before.assistant, before.at, before.session_id, None)
            )
            continue
        at = None if rng.random() < 0.1 else _START + timedelta(minutes=3 * n)
        source = None if rng.random() < 0.1 else f"line-{n}"
        reply = "" if rng.random() < 0.5 else _text(rng)
        turns.append(ImportTurn(n + 1, _text(rng), reply, at, f"s{n // 40}", source))
    # Source ids stored before, and one erased (see _setup).
    turns.insert(3, ImportTurn(0, "Ann: an old line.", "", _START, "s0", "old-1"))
    turns.insert(9, ImportTurn(0, "Ann: a line that was erased.", "", _START, "s0", "erased-1"))
    return turns


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """``reseed()`` makes this process's memory ids come from a generator seeded afresh."""
    import secrets

    def reseed() -> None:
        rng = random.Random(20240501)
        monkeypatch.setattr(secrets, "token_hex", lambda n=32: rng.randbytes(n).hex())

    return reseed


@pytest.fixture(params=["fork", "forkserver"])
def started_by(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Workers forked from this process, or started by the fork server (the two ways
    :func:`~kioku.service.remember.workers.start_method` chooses between on Linux)."""
    method = str(request.param)
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} is not a start method here")
    monkeypatch.setattr(TurnPreparer, "method", method)
    return method


@pytest.fixture
def workers_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every batch prepared by the workers (none in this process while they start), so the
    workers are exercised however fast this machine is."""
    monkeypatch.setattr(TurnPreparer, "head_start", False)


def _open(home: Path) -> Kioku:
    return Kioku.open(home, user_id="ann", clock=FixedClock(_NOW), env={})


def _setup(kioku: Kioku) -> None:
    kioku.remember_turn("Ann: an old line.", "", at=_START, session_id="s0", source_ids=["old-1"])
    gone = kioku.remember_turn("Ann: a line that was erased.", "", source_ids=["erased-1"])
    kioku.erase(gone.memory.id, force=True)


def _rows(kioku: Kioku) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, sorted, but for :data:`_LEFT_OUT` and random numbers."""
    path = getattr(kioku.store, "path", None)
    assert isinstance(path, Path)
    conn = sqlite3.connect(path)
    found = {}
    tables = [str(t) for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        if table in _KEYED:
            continue
        columns = [str(c[1]) for c in conn.execute(f'PRAGMA table_info("{table}")')]
        listed = ", ".join(f'"{c}"' for c in columns if (table, c) not in _LEFT_OUT)
        rows = conn.execute(f'SELECT {listed} FROM "{table}"').fetchall()
        if table == "state":
            rows = [r for r in rows if r[0] not in _RANDOM_STATE]
        found[table] = sorted(rows, key=repr)
    conn.close()
    return found


def _import(
    home: Path, turns: list[ImportTurn], workers: int, reseed: Callable[[], None]
) -> tuple[ImportResult, dict[str, list[tuple[object, ...]]]]:
    with _open(home) as kioku:
        reseed()
        _setup(kioku)
        result = import_turns(kioku, turns, workers=workers)
        return result, _rows(kioku)


def _same_imports(tmp_path: Path, turns: list[ImportTurn], reseed: Callable[[], None]) -> int:
    """Import ``turns`` both ways and check every table agrees; the rows compared."""
    here, here_rows = _import(tmp_path / "here", turns, 1, reseed)
    there, there_rows = _import(tmp_path / "there", turns, 2, reseed)
    assert (there.imported, there.skipped, there.duplicates) == (
        here.imported,
        here.skipped,
        here.duplicates,
    )
    assert there.memory_ids == here.memory_ids
    assert sorted(there_rows) == sorted(here_rows)
    for table, rows in here_rows.items():
        assert there_rows[table] == rows, table
    assert not multiprocessing.active_children()
    return sum(len(rows) for rows in here_rows.values())


def test_workers_store_what_one_process_stores(
    tmp_path: Path, seeded: Callable[[], None], workers_only: None, started_by: str
) -> None:
    turns = _turns(300, seed=1)
    rows = _same_imports(tmp_path, turns, seeded)
    assert rows > 1000


def test_the_first_batches_prepared_here_while_workers_start(
    tmp_path: Path, seeded: Callable[[], None], started_by: str
) -> None:
    """With the head start (the default) some batches may be prepared here, the rest by
    the workers: the same store either way."""
    _same_imports(tmp_path, _turns(400, seed=2), seeded)


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 120))
def test_any_turns_the_same_both_ways(
    tmp_path_factory: pytest.TempPathFactory,
    seeded: Callable[[], None],
    workers_only: None,
    seed: int,
    count: int,
) -> None:
    _same_imports(tmp_path_factory.mktemp("any"), _turns(count, seed), seeded)


def _failing(turns: list[ImportTurn], place: int) -> list[ImportTurn]:
    """``turns`` with the one at ``place`` given a blank session id (read_import refuses
    one, so only a caller of import_turns can pass it; prepare_turn raises)."""
    bad = turns[place]
    turns = list(turns)
    turns[place] = ImportTurn(bad.line, bad.user, bad.assistant, bad.at, "  ", bad.source_id)
    return turns


def test_a_turn_failing_in_a_worker_fails_as_in_process(
    tmp_path: Path, seeded: Callable[[], None], workers_only: None, started_by: str
) -> None:
    turns = _failing(_turns(260, seed=3), 180)  # in the fourth batch of 50
    errors: list[ValidationError] = []
    stored: list[int] = []
    for name, workers in (("here", 1), ("there", 2)):
        with _open(tmp_path / name) as kioku:
            seeded()
            _setup(kioku)
            with pytest.raises(ValidationError) as caught:
                import_turns(kioku, turns, workers=workers)
            errors.append(caught.value)
            stored.append(kioku.count())
        assert not multiprocessing.active_children()
    assert type(errors[1]) is type(errors[0])
    assert str(errors[1]) == str(errors[0])
    assert errors[1].field == "session_id"
    assert stored[1] == stored[0]
    assert 100 < stored[0] < 180  # the three batches before it, nothing of its own
    # Fixed, the import resumes where it stopped: the store then holds what an import
    # that never failed leaves.
    fixed = _turns(260, seed=3)
    with _open(tmp_path / "there") as kioku:
        import_turns(kioku, fixed, workers=2)
        assert _source_ids(kioku) == _expected_source_ids(fixed)
        resumed = kioku.count()
    with _open(tmp_path / "clean") as kioku:
        _setup(kioku)
        import_turns(kioku, fixed, workers=1)
        assert kioku.count() == resumed


def _source_ids(kioku: Kioku) -> list[str]:
    """The source ids of the stored memories, sorted, each as often as it is stored."""
    return sorted(s for m in kioku.list(limit=10_000) for s in m.source_ids)


def _expected_source_ids(turns: list[ImportTurn]) -> list[str]:
    """Each source id of ``turns`` once, but the erased one's."""
    return sorted({t.source_id for t in turns if t.source_id} - {"erased-1"})


def _kill_a_worker_when_one_starts(stop: threading.Event) -> None:
    while not stop.is_set():
        pids = [child.pid for child in multiprocessing.active_children() if child.pid]
        if pids:
            os.kill(pids[0], signal.SIGKILL)
            return
        time.sleep(0.005)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_killed_worker_fails_the_import_clearly(
    tmp_path: Path, workers_only: None, started_by: str
) -> None:
    turns = _turns(1500, seed=4)
    stop = threading.Event()
    killer = threading.Thread(target=_kill_a_worker_when_one_starts, args=(stop,))
    with _open(tmp_path / "home") as kioku:
        _setup(kioku)
        killer.start()
        try:
            with pytest.raises(WorkerStoppedError) as caught:
                import_turns(kioku, turns, workers=2)
        finally:
            stop.set()
            killer.join()
        assert "worker process" in str(caught.value)
        assert "--workers 1" in str(caught.value)
        assert caught.value.exit_code == 1
        kept = kioku.count()
    assert not multiprocessing.active_children()
    # What was stored before is kept, and a second run resumes.
    with _open(tmp_path / "home") as kioku:
        assert kioku.count() == kept
        import_turns(kioku, turns, workers=1)
        assert _source_ids(kioku) == _expected_source_ids(turns)


@pytest.fixture(autouse=True)
def _no_workers_left() -> Iterator[None]:
    yield
    assert not multiprocessing.active_children()


_CHOSEN = """
import sys, threading
from kioku.service.remember.workers import start_method
if sys.argv[1] == "thread":
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
print(start_method())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the rule forks on Linux only")
@pytest.mark.parametrize(("threads", "expected"), [("one", "fork"), ("thread", "forkserver")])
def test_workers_are_forked_only_from_a_process_of_one_thread(threads: str, expected: str) -> None:
    """A fresh process of one thread forks its workers; with another thread running (a lock
    it holds would stay held in a forked child) the fork server starts them."""
    done = subprocess.run(
        [sys.executable, "-c", _CHOSEN, threads],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == expected
