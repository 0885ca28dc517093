"""Erasure leaves no byte of the erased text in any file of the home.

Each test stores a memory with distinctive words (ASCII and Japanese), makes the vector cache
file (a recall), ages the memory through the nightly batch so its text is compressed to Level
3 (the lexical index then holds both the full text and the compressed one), keeps the store
open in another process (a process that has opened it and waits, or the recall daemon), then
erases it through the command line and reads the raw bytes of every file under the home:
the database, its write-ahead log and shared-memory index, the vector cache, the logs, the
inbox. A memory that was not erased is the control: its words must still be found.
"""

from __future__ import annotations

import json
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
def _holding(home: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process that has the store open (and its vectors loaded), waiting."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
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
