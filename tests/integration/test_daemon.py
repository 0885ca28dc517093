"""The warm recall daemon: a real server process on a Unix socket in a temp home."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.interfaces.claude_code import daemon_client

pytestmark = pytest.mark.skipif(not daemon_client.supported(), reason="needs Unix sockets")


def _wait(predicate: object, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_daemon_answers_recall_and_stops(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}) as k:
        k.remember(
            "We adopted a cat named Sora",
            "She likes the window",
            intensity=70,
            category="emotional",
        )
    assert daemon_client.ask(home, {"op": "ping"}) is None  # nothing runs yet
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kioku.interfaces.claude_code.daemon",
            "--home",
            str(home),
            "--idle",
            "60",
        ]
    )
    try:
        assert _wait(lambda: daemon_client.status(home)["running"])
        assert (home / daemon_client.SOCKET_NAME).stat().st_mode & 0o077 == 0  # owner-only
        answer = daemon_client.ask(home, {"op": "recall", "prompt": "what is the cat called?"})
        assert answer is not None
        assert answer["ok"]
        assert "Sora" in answer["block"]
        bad = daemon_client.ask(home, {"op": "recall"})
        assert bad is not None
        assert not bad["ok"]
        assert daemon_client.stop(home) == proc.pid
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not (home / daemon_client.SOCKET_NAME).exists()
    assert daemon_client.ask(home, {"op": "ping"}) is None


def test_daemon_stops_when_idle(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}) as k:
        k.remember("note", "text", intensity=30, category="work")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kioku.interfaces.claude_code.daemon",
            "--home",
            str(home),
            "--idle",
            "1",
        ]
    )
    try:
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert not (home / daemon_client.SOCKET_NAME).exists()


def _raw(home: Path, payload: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(30)
        conn.connect(str(home / daemon_client.SOCKET_NAME))
        conn.sendall(daemon_client.HOOK_REQUEST + b"\n" + payload)
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _marked(home: Path) -> bool:
    with Kioku.open(home) as k:
        return all(m.recalled_since_last_batch for m in k.list())


def test_the_raw_hook_protocol(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home) as k:
        k.remember(
            "Our cat is called Sora", "She sleeps by the window", intensity=70, category="emotional"
        )
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kioku.interfaces.claude_code.daemon",
            "--home",
            str(home),
            "--idle",
            "60",
        ]
    )
    try:
        assert _wait(lambda: daemon_client.status(home)["running"])
        prompt = {"session_id": "s1", "prompt": "what is our cat called?"}
        answer = _raw(home, json.dumps(prompt).encode())
        status, _, block = answer.partition(b"\n")
        assert status == b"OK"
        assert b"<memories>" in block
        assert b"Sora" in block
        # the answer goes first; the recall is marked right after it
        assert _wait(lambda: _marked(home))
        assert _raw(home, json.dumps({"prompt": "  /compact now"}).encode()) == b"OK\n"
        assert _raw(home, json.dumps({"prompt": "   "}).encode()) == b"OK\n"
        assert _raw(home, b'{"prompt": "unfinished') == b"FALLBACK\n"
        assert _raw(home, json.dumps({"session_id": "s1"}).encode()) == b"FALLBACK\n"
        assert _raw(home, b"[1, 2]") == b"FALLBACK\n"
        # The JSON protocol still answers on the same socket.
        assert daemon_client.ask(home, {"op": "ping"}) is not None
    finally:
        daemon_client.stop(home)
        proc.wait(timeout=30)


def test_the_pid_file_is_owner_only_whatever_the_umask(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}) as k:
        k.remember("note", "text", intensity=30, category="work")
    (home / daemon_client.PID_NAME).write_text("1\n")  # left by an older daemon, mode 0644
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kioku.interfaces.claude_code.daemon",
            "--home",
            str(home),
            "--idle",
            "60",
        ],
        preexec_fn=lambda: os.umask(0),
    )
    try:
        assert _wait(lambda: daemon_client.status(home)["running"])
        pid_file = home / daemon_client.PID_NAME
        assert stat.S_IMODE(pid_file.stat().st_mode) == 0o600
        assert pid_file.read_text() == f"{proc.pid}\n"
    finally:
        daemon_client.stop(home)
        proc.wait(timeout=30)
