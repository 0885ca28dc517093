"""Erasure leaves no byte of the erased text in any file of the home.

Each test stores a memory with distinctive words (ASCII and Japanese), makes the vector cache
file (a recall), ages the memory through the nightly batch so its text is compressed to Level
3 (the lexical index then holds both the full text and the compressed one), keeps the store
open in another process (a process that has opened it and waits, or the recall daemon), then
erases it through the command line and reads the raw bytes of every file under the home:
the database, its write-ahead log and shared-memory index, the vector cache, the logs, the
inbox. A memory that was not erased is the control: its words must still be found.

On PostgreSQL the tests start a server of their own (full page writes on, ``wal_recycle =
off``) and read every file of its data directory: tables, indexes, TOAST, free space maps,
catalogs (``pg_statistic``) and the write-ahead log in ``pg_wal``. A short memory and a long
one (stored out of line, in TOAST) are forgotten, and two more are erased with ``kioku erase
--user``, while another process holds the store; no byte of their words is left. With
``wal_recycle = on`` the erasure warns, naming the setting, and the scan finds the words in
``pg_wal``: the setting is required.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from kioku.interfaces.claude_code import daemon_client
from tests.cli.conftest import Result, Run, clean_env, run_kioku
from tests.postgres_server import server_directory, start_server

#: Words of the erased memory, and of the control memory that stays.
SECRET = ("zanzibarquux", "quokkaflange", "ひみつの合言葉", "ひみつ", "合言葉")
CONTROL = ("marmaladepelican",)

HOLDER = """
import sys, time
from kioku import Kioku
k = Kioku.open(sys.argv[1])
k.count()
k.recall("zanzibarquux door code", mark=False)
print("ready", flush=True)
time.sleep(600)
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def kioku(home: Path) -> Run:
    def run(*args: str) -> Result:
        return run_kioku("--home", str(home), *args)

    return run


def _scan(home: Path, words: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(file, word)`` for each word whose UTF-8 bytes occur in a file under ``home``."""
    found: list[tuple[str, str]] = []
    for path in sorted(home.rglob("*")):
        if not path.is_file():
            continue  # directories, the daemon's socket
        data = path.read_bytes()
        found += [(path.name, w) for w in words if w.encode("utf-8") in data]
    return found


def _add(kioku: Run, trigger: str, content: str, keywords: str, *scope: str) -> str:
    done = kioku(
        *scope, "add", "--trigger", trigger, "--content", content, "--intensity", "30",
        "--category", "casual", "--keywords", keywords, "--json",
    )  # fmt: skip
    assert done.code == 0, done.err
    return str(done.json()["id"])


def _compress(kioku: Run) -> None:
    """Age the store by four days: the casual memories are compressed to Level 3."""
    later = (datetime.now().astimezone() + timedelta(days=4)).isoformat(timespec="seconds")
    done = kioku("batch", "--now", later, "--force", "--json")
    assert done.code == 0, done.err


def _stock(kioku: Run, *scope: str) -> str:
    secret = _add(
        kioku,
        "The zanzibarquux door code is ひみつの合言葉, Ken said",
        "Remember: zanzibarquux opens it, ひみつの合言葉 too, and quokkaflange",
        "zanzibarquux,合言葉",
        *scope,
    )
    _add(kioku, "The marmaladepelican recipe", "Bake the marmaladepelican", "marmaladepelican")
    _compress(kioku)
    shown = kioku(*scope, "show", secret, "--json").json()
    assert shown["current_level"] == 3, shown
    assert kioku(*scope, "recall", "zanzibarquux door code").code == 0  # the vector file
    return secret


@contextmanager
def _holding(home: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """Another process that has the store open (and its vectors loaded), waiting."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env or clean_env(),
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "ready"
        yield process
    finally:
        process.kill()
        process.wait(timeout=30)


def test_the_scan_sees_the_words_before_erasure(home: Path, kioku: Run) -> None:
    """The control of the controls: before erasure the scan finds the words, including
    those compression took out of the memory's text (they stay in the index's segments)."""
    _stock(kioku)
    found = {w for _, w in _scan(home, SECRET + CONTROL)}
    assert {"zanzibarquux", "quokkaflange", "ひみつ", "合言葉", *CONTROL} <= found


def test_forget_leaves_no_byte_while_another_process_holds_the_store(
    home: Path, kioku: Run
) -> None:
    secret = _stock(kioku)
    assert list((home / "memories.db.vectors").glob("*.vec"))
    with _holding(home) as other:
        done = kioku("forget", secret, "--json")
        assert done.code == 0, done.err
        assert done.json()["scrub"]["wal_truncated"] is True
        assert _scan(home, SECRET) == []
        assert {w for _, w in _scan(home, CONTROL)} == set(CONTROL)
        assert other.poll() is None  # it held the store all along
    assert _scan(home, SECRET) == []


@pytest.mark.skipif(not daemon_client.supported(), reason="needs Unix sockets")
def test_erase_user_leaves_no_byte_while_the_daemon_runs(home: Path, kioku: Run) -> None:
    _stock(kioku, "--user", "carol")
    assert kioku("daemon", "start").code == 0
    try:
        deadline = time.monotonic() + 30
        while not daemon_client.status(home)["running"]:
            assert time.monotonic() < deadline, "the daemon did not start"
            time.sleep(0.05)
        plan = kioku("erase", "--user", "carol", "--json")
        assert plan.code == 0, plan.err
        assert plan.json()["memories"] == 1
        assert not any(w in plan.out for w in SECRET)  # the plan shows counts, not text
        done = kioku("erase", "--user", "carol", "--token", plan.json()["token"], "--json")
        assert done.code == 0, done.err
        report = done.json()
        assert report["erased"] == 1
        assert report["scrub"]["wal_truncated"] is True
        assert _scan(home, SECRET) == []
        assert {w for _, w in _scan(home, CONTROL)} == set(CONTROL)
        audit = kioku("erase", "--audit", "--json").json()
        assert [a["action"] for a in audit] == ["erase_user"]
        assert "carol" not in json.dumps(audit)
    finally:
        kioku("daemon", "stop")
    assert _scan(home, SECRET) == []


def test_a_turn_remembered_by_the_session_end_hook_leaves_no_byte(
    home: Path, kioku: Run, tmp_path: Path
) -> None:
    """The hook path: the transcript is captured to the inbox and ingested by the background
    drain; forgetting the turn leaves nothing of it in the inbox, the logs or the store, and
    the next drain of the same transcript does not bring it back."""
    session = "bytes-session"
    lines = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": session,
         "timestamp": "2026-01-18T09:00:00.000Z", "isSidechain": False,
         "message": {"role": "user", "content": "The zanzibarquux code is ひみつの合言葉"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": session,
         "timestamp": "2026-01-18T09:00:05.000Z", "isSidechain": False,
         "message": {"role": "assistant", "model": "m", "content": [
             {"type": "text", "text": "Noted: quokkaflange and 合言葉."}]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": session,
         "timestamp": "2026-01-18T09:01:00.000Z", "isSidechain": False,
         "message": {"role": "user", "content": "The marmaladepelican recipe is ready"}},
    ]  # fmt: skip
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines))
    payload = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(tmp_path),
        "hook_event_name": "SessionEnd",
        "reason": "exit",
    }
    ended = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), "hook", "session-end"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert ended.returncode == 0, ended.stderr
    deadline = time.monotonic() + 120

    def drained() -> bool:
        if (home / "inbox.jsonl").exists() or not (home / "memories.db").exists():
            return False  # the drain has not started, or not finished
        listed = kioku("list", "--json")
        return listed.code == 0 and len(listed.json()) >= 2

    while not drained():
        assert time.monotonic() < deadline, "the background drain did not ingest the session"
        time.sleep(0.2)
    memories = kioku("list", "--json").json()
    (secret,) = [m["id"] for m in memories if "zanzibarquux" in m["trigger"]]
    assert kioku("recall", "zanzibarquux").code == 0
    with _holding(home):
        done = kioku("forget", secret, "--json")
        assert done.code == 0, done.err
        assert _scan(home, SECRET) == []
        assert {w for _, w in _scan(home, CONTROL)} == set(CONTROL)
    again = kioku("hook", "drain", "--json")
    assert again.code == 0, again.err
    (home / "inbox.jsonl").write_text(json.dumps({"transcript_path": str(transcript),
                                                  "session_id": session}) + "\n")  # fmt: skip
    drained = kioku("hook", "drain", "--json")
    assert drained.code == 0, drained.err
    assert drained.json()["added"] == 0
    assert len(kioku("list", "--json").json()) == 1
    assert _scan(home, SECRET) == []


# -- PostgreSQL: every file of the server's data directory ------------------------------------

#: A server as one would run it, except ``fsync`` (no waiting for the disk, same bytes):
#: full page writes on, and ``wal_recycle = off``, which erasure needs (see docs/postgres.md).
ERASURE_SERVER = {
    "fsync": "off",
    "full_page_writes": "on",
    "synchronous_commit": "on",
    "wal_recycle": "off",
}


#: The report of a scrub that did everything (PostgreSQL keeps no vector files).
CLEAN_SCRUB = {
    "index_merged": True,
    "wal_truncated": True,
    "wal_detail": "",
    "vector_files_removed": False,
}


@pytest.fixture(scope="module")
def own_server() -> Iterator[tuple[str, Path]]:
    """A PostgreSQL server whose data directory these tests own: its URL and directory."""
    if os.environ.get("KIOKU_TEST_PG_URL"):
        pytest.skip("needs a server whose files the test can read; KIOKU_TEST_PG_URL is set")
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    directory = server_directory()
    server = start_server(directory, ERASURE_SERVER)
    try:
        yield server.get_uri(), directory
    finally:
        server.cleanup()
        shutil.rmtree(directory.parent, ignore_errors=True)


def _server_sql(url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(statement)  # type: ignore[arg-type]  # fixed text


@pytest.fixture
def pg_env(own_server: tuple[str, Path]) -> Iterator[dict[str, str]]:
    """The environment of a kioku process using a schema of its own on ``own_server``."""
    url, _ = own_server
    schema = "bytes_" + os.urandom(4).hex()
    try:
        yield clean_env(KIOKU_STORE_URL=url, KIOKU_STORE__SCHEMA=schema)
    finally:
        _server_sql(url, f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def pg_kioku(pg_env: dict[str, str], home: Path) -> Run:
    def run(*args: str) -> Result:
        return run_kioku("--home", str(home), *args, env=pg_env, timeout=120)

    return run


def _long_text(words: str) -> str:
    """About 12 kB of text PostgreSQL cannot compress much (so it is stored out of line, in
    TOAST, as written) with ``words`` in its middle."""
    noise = " ".join(os.urandom(6).hex() for _ in range(900))
    return f"{noise} {words} {noise}"


def _stock_pg(kioku: Run, *scope: str) -> list[str]:
    short = _add(
        kioku,
        "The zanzibarquux door code is ひみつの合言葉, Ken said",
        "Remember: zanzibarquux opens it, and quokkaflange",
        "zanzibarquux,合言葉",
        *scope,
    )
    long = _add(
        kioku, "the long note", _long_text("quokkaflange and ひみつの合言葉"), "note", *scope
    )
    return [short, long]


def test_postgres_erasure_leaves_no_byte_in_the_data_directory(
    own_server: tuple[str, Path], pg_env: dict[str, str], pg_kioku: Run, home: Path
) -> None:
    url, data = own_server
    forgotten = _stock_pg(pg_kioku)
    erased = _stock_pg(pg_kioku, "--user", "carol")
    _add(pg_kioku, "The marmaladepelican recipe", "Bake the marmaladepelican", "marmaladepelican")
    _compress(pg_kioku)  # compressed text (Level 3) beside the full text and the original
    assert pg_kioku("recall", "zanzibarquux door code").code == 0
    _server_sql(url, "ANALYZE")  # what autovacuum does: sample values in pg_statistic
    found = {w for _, w in _scan(data, SECRET + CONTROL)}
    assert {"zanzibarquux", "quokkaflange", "ひみつの合言葉", *CONTROL} <= found

    with _holding(home, pg_env) as other:
        for memory_id in forgotten:
            done = pg_kioku("forget", memory_id, "--json")
            assert done.code == 0, done.err
            assert done.json()["scrub"] == CLEAN_SCRUB
        plan = pg_kioku("erase", "--user", "carol", "--json").json()
        assert plan["memories"] == 2
        done = pg_kioku("erase", "--user", "carol", "--token", plan["token"], "--json")
        assert done.code == 0, done.err
        report = done.json()
        assert set(report["memory_ids"]) == set(erased)
        assert report["scrub"] == CLEAN_SCRUB
        assert _scan(data, SECRET) == []
        assert {w for _, w in _scan(data, CONTROL)} == set(CONTROL)
        assert other.poll() is None
    listed = pg_kioku("list", "--all", "--json").json()
    assert len(listed) == 1
    assert "marmaladepelican" in listed[0]["trigger"]


def test_postgres_erasure_says_what_the_server_keeps_with_wal_recycle_on(
    own_server: tuple[str, Path], pg_kioku: Run
) -> None:
    """With ``wal_recycle = on`` (PostgreSQL's default) old WAL segments are renamed for reuse
    and keep their bytes: the erasure says so, names the setting, and the scan finds the
    erased words in ``pg_wal``; the tables themselves are clean."""
    url, data = own_server
    secret = _add(pg_kioku, "The zanzibarquux door code", "quokkaflange", "zanzibarquux")
    _server_sql(url, "ALTER SYSTEM SET wal_recycle = on")
    _server_sql(url, "SELECT pg_reload_conf()")
    try:
        done = pg_kioku("forget", secret)
        assert done.code == 0, done.err
        assert "erased text may stay in the store's files" in done.err
        assert "wal_recycle = off" in done.err
        left = _scan(data, SECRET)
        # kioku vacuum, which finishes a scrub, says the same while the setting stays.
        again = pg_kioku("vacuum")
        assert again.code == 0, again.err
        assert "erased text may stay in the store's files" in again.err
        assert "wal_recycle = off" in again.err
    finally:
        _server_sql(url, "ALTER SYSTEM SET wal_recycle = off")
        _server_sql(url, "SELECT pg_reload_conf()")
    assert left
    assert {name for name, _ in left} <= {p.name for p in (data / "pg_wal").iterdir()}


def test_postgres_scrub_names_what_a_plain_role_and_an_old_transaction_keep(
    own_server: tuple[str, Path],
) -> None:
    """A role that owns its schema but is neither superuser nor the database's owner may
    rewrite its tables, not pg_statistic, and may not switch the WAL: the report says so and
    names what an administrator must run; without pg_read_all_stats it cannot see other
    roles' transactions and says so. A transaction older than the scrub makes it say that
    the rewrite could keep rows."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    from kioku.adapters.store.postgres import open_postgres_store
    from tests.contract.conftest import build_memory

    url, _ = own_server
    role, schema = "kioku_plain_" + os.urandom(3).hex(), "plain_" + os.urandom(3).hex()
    _server_sql(url, f"CREATE ROLE {role} LOGIN")
    _server_sql(url, f"CREATE SCHEMA {schema} AUTHORIZATION {role}")
    plain = make_conninfo(url, user=role, options=f"-c search_path={schema},public")
    store = open_postgres_store(plain, pool_max=2)
    try:
        store.add(build_memory(1))
        store.delete(build_memory(1).id)
        report = store.scrub()
        assert (report.index_merged, report.wal_truncated) == (False, False)
        assert "VACUUM (FULL) pg_catalog.pg_statistic" in report.wal_detail
        assert "SELECT pg_switch_wal(); CHECKPOINT;" in report.wal_detail
        assert "GRANT pg_read_all_stats TO <role>" in report.wal_detail
        assert "replication slot(s) older than" not in report.wal_detail
        _server_sql(url, f"GRANT pg_read_all_stats TO {role}")
        with psycopg.connect(url) as old:
            old.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            old.execute("SELECT 1")  # a snapshot, held open
            held = store.scrub()
        assert not held.index_merged
        assert "1 transaction(s) or replication slot(s) older than this erasure" in held.wal_detail
        assert "pg_read_all_stats" not in held.wal_detail
    finally:
        store.close()
        _server_sql(url, f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        _server_sql(url, f"DROP ROLE IF EXISTS {role}")
