"""``kioku daemon`` and the UserPromptSubmit hook answered by the warm daemon."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kioku.interfaces.claude_code import daemon_client
from tests.cli.conftest import Run, clean_env

pytestmark = pytest.mark.skipif(not daemon_client.supported(), reason="needs Unix sockets")


def _hook(home: Path, prompt: str, **env: str) -> subprocess.CompletedProcess[str]:
    payload = {
        "session_id": "s1",
        "transcript_path": "/tmp/x.jsonl",
        "cwd": "/tmp",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    return subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), "hook", "user-prompt-submit"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=clean_env(**env),
        timeout=60,
        check=False,
    )


def _wait(home: Path, running: bool, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if daemon_client.status(home)["running"] is running:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def stocked(home: Path, kioku: Run) -> Path:
    done = kioku(
        "add", "--trigger", "Our cat is called Sora", "--content", "She sleeps by the window",
        "--intensity", "70", "--category", "emotional",
    )  # fmt: skip
    assert done.code == 0, done.err
    return home


def test_start_status_hook_stop(stocked: Path, kioku: Run) -> None:
    try:
        started = kioku("daemon", "start", "--json")
        assert started.code == 0, started.err
        assert json.loads(started.out)["running"] is True
        assert json.loads(kioku("daemon", "status", "--json").out)["running"] is True
        answered = _hook(stocked, "what is our cat called?", KIOKU_NO_DAEMON="")
        assert answered.returncode == 0
        assert "<memories>" in answered.stdout
        assert "Sora" in answered.stdout
        # A second start does nothing: one daemon per home.
        assert json.loads(kioku("daemon", "start", "--json").out)["started"] is False
    finally:
        stopped = kioku("daemon", "stop", "--json")
    assert stopped.code == 0
    assert json.loads(stopped.out)["running"] is False
    assert "not running" in kioku("daemon", "status").out


def test_the_hook_starts_a_daemon_on_demand_and_answers_meanwhile(
    stocked: Path, kioku: Run
) -> None:
    try:
        first = _hook(stocked, "what is our cat called?", KIOKU_NO_DAEMON="")
        assert "Sora" in first.stdout  # answered in process while the daemon starts
        assert _wait(stocked, running=True)
        second = _hook(stocked, "what is our cat called?", KIOKU_NO_DAEMON="")
        assert "Sora" in second.stdout
    finally:
        kioku("daemon", "stop")
    assert _wait(stocked, running=False)


def test_no_daemon_when_turned_off(stocked: Path) -> None:
    answered = _hook(stocked, "what is our cat called?")  # KIOKU_NO_DAEMON=1 in clean_env
    assert "Sora" in answered.stdout
    time.sleep(0.5)
    assert daemon_client.status(stocked)["running"] is False


def test_the_answer_comes_from_the_daemon_even_with_stdin_left_open(
    stocked: Path, kioku: Run, tmp_path: Path
) -> None:
    """A home that holds only a link to the daemon's socket has no memories of its own, so
    "Sora" in the answer can only come from the daemon; stdin is never closed, as Claude Code
    sometimes does, and the whole JSON payload is enough."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    try:
        assert kioku("daemon", "start").code == 0
        (elsewhere / daemon_client.SOCKET_NAME).symlink_to(stocked / daemon_client.SOCKET_NAME)
        payload = {"session_id": "s1", "hook_event_name": "UserPromptSubmit",
                   "prompt": "what is our cat called? {\"quoted\": \"}\"}"}  # fmt: skip
        proc = subprocess.Popen(
            [sys.executable, "-m", "kioku", "--home", str(elsewhere), "hook", "user-prompt-submit"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=clean_env(KIOKU_NO_DAEMON=""),
        )
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload).encode())
        proc.stdin.flush()
        proc.wait(timeout=60)  # it answers and exits while stdin is still open
        assert proc.stdout is not None
        assert proc.stderr is not None
        out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
        proc.stdin.close()
        assert proc.returncode == 0, err
        assert "Sora" in out
        assert not (elsewhere / "memories.db").exists()  # nothing answered in process
        # A slash command is excluded by the daemon as by the in-process hook.
        slash = _hook(elsewhere, "/clear", KIOKU_NO_DAEMON="")
        assert slash.returncode == 0
        assert slash.stdout == ""
        assert not (elsewhere / "memories.db").exists()
    finally:
        kioku("daemon", "stop")


def test_stop_says_which_daemon_it_stopped(stocked: Path, kioku: Run) -> None:
    try:
        assert kioku("daemon", "start").code == 0
        pid = json.loads(kioku("daemon", "status", "--json").out)["pid"]
        assert isinstance(pid, int)
    finally:
        stopped = kioku("daemon", "stop")
    assert stopped.code == 0, stopped.err
    assert stopped.out == f"stopped the daemon (pid {pid})\n"
    again = kioku("daemon", "stop")
    assert again.code == 0
    assert again.out.startswith("not running")
    assert json.loads(kioku("daemon", "stop", "--json").out)["stopped"] is False
