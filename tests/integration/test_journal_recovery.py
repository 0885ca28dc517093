"""The streaming journal wired through Kioku: a response cut off by SIGKILL becomes an episode.

A child process opens ``kioku.journal(...)`` on a real home, streams and flushes, says so on
stdout and waits; the parent kills it with SIGKILL (nothing of the child runs after that) and
recovers. The parent never waits on a clock: it reads the child's "ready" line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kioku import Kioku
from tests.cli.conftest import clean_env

SESSION = "stream-1"
TRIGGER = "Summarise the quarterly budget meeting"
FIRST = "The budget meeting agreed on 予算 cuts of 5%. "
SECOND = 'Marketing keeps its share; "travel" is frozen.\nNext review: April 🌸'

CHILD = r"""
import sys, time
from kioku import Kioku

home, session, mode = sys.argv[1:4]
first, second = sys.argv[4:6]
kioku = Kioku.open(home, env={})
journal = kioku.journal(session, trigger=sys.argv[6], sender="alice")
journal.write_text(first)
journal.write_text(second)
if mode == "tool":
    journal.write_tool_start("web_search", "budget 2026")
journal.flush()
if mode == "finish":
    journal.finalize()
    kioku.close()
    print("done", flush=True)
    sys.exit(0)
print("ready", flush=True)
time.sleep(60)
"""


def _child(home: Path, mode: str, session: str = SESSION) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(home), session, mode, FIRST, SECOND, TRIGGER],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def killed(home: Path) -> Path:
    """A home whose streaming child was SIGKILLed after it flushed."""
    _stream_and_kill(home, "kill")
    return home


def _stream_and_kill(home: Path, mode: str, session: str = SESSION) -> None:
    proc = _child(home, mode, session)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line == "ready\n", proc.stderr.read() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def _journals(home: Path) -> list[Path]:
    folder = home / "shortterm"
    return sorted(p for p in folder.iterdir() if p.suffix == ".jsonl") if folder.is_dir() else []


def test_a_killed_stream_is_recovered_once_as_one_episode(killed: Path) -> None:
    assert len(_journals(killed)) == 1  # the orphan the kill left behind
    with Kioku.open(killed, env={}) as kioku:
        assert kioku.list(kind="episode") == []
        (episode,) = kioku.recover_journals()
        assert episode.kind.value == "episode"
        assert episode.trigger == TRIGGER
        assert episode.content == FIRST + SECOND + "\n[interrupted]"
        assert episode.session_id == SESSION
        assert kioku.get(episode.id).content == episode.content
        assert [m.id for m in kioku.list(kind="episode")] == [episode.id]
        assert _journals(killed) == []
        assert kioku.recover_journals() == []
        assert [m.id for m in kioku.list(archived=None)] == [episode.id]
        said = [(e.type.value, e.content, e.session_id) for _, e in kioku.activity() if e]
        assert said == [
            ("message_received", TRIGGER, SESSION),
            ("response_sent", episode.content, SESSION),
        ]
    with Kioku.open(killed, env={}) as again:  # a later process finds nothing more either
        assert again.recover_journals() == []
        assert again.count() == 1


def test_an_unfinished_tool_call_is_noted_in_the_episode(home: Path) -> None:
    _stream_and_kill(home, "tool")
    with Kioku.open(home, env={}) as kioku:
        (episode,) = kioku.recover_journals()
    assert episode.content == FIRST + SECOND + "\n[tool web_search: unfinished]\n[interrupted]"


def test_opening_a_journal_recovers_the_orphans_first(killed: Path) -> None:
    with Kioku.open(killed, env={}) as kioku:
        journal = kioku.journal("stream-2", trigger="And the next question")
        (episode,) = kioku.list(kind="episode")
        assert episode.content == FIRST + SECOND + "\n[interrupted]"
        assert episode.session_id == SESSION
        assert [p.name.startswith("stream-2") for p in _journals(killed)] == [True]
        journal.write_text("A complete answer.")
        recovery = journal.finalize()
        assert recovery.completed
        assert recovery.text == "A complete answer."
        assert _journals(killed) == []
        assert kioku.recover_journals() == []
        assert kioku.count() == 1  # a finished stream is stored by its caller, not recovered


def test_the_killed_session_can_stream_again_after_recovery(killed: Path) -> None:
    with Kioku.open(killed, env={}) as kioku:
        journal = kioku.journal(SESSION, trigger="Try again")
        assert kioku.count() == 1  # the orphan of this very session was recovered first
        journal.finalize()
        assert kioku.recover_journals() == []
        assert kioku.count() == 1


def test_a_stream_still_running_is_not_recovered(home: Path) -> None:
    proc = _child(home, "kill")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "ready\n"
        with Kioku.open(home, env={}) as kioku:
            assert kioku.recover_journals() == []  # its writer holds it
            assert kioku.count() == 0
            assert len(_journals(home)) == 1
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        with Kioku.open(home, env={}) as kioku:
            (episode,) = kioku.recover_journals()
            assert episode.content.endswith("[interrupted]")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_a_finalized_stream_leaves_nothing_to_recover(home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(home), SESSION, "finish", FIRST, SECOND, TRIGGER],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "done\n"), done.stderr
    assert _journals(home) == []
    with Kioku.open(home, env={}) as kioku:
        assert kioku.recover_journals() == []
        assert kioku.count() == 0
