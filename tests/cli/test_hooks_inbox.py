"""No captured turn is lost: the drain with a failing provider, the dead-letter file,
``kioku ingest --retry``, ``kioku doctor``, owner-only files, oversize hook input."""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Result, Run, clean_env, session_turns
from tests.fakes import FakeLlmServer, Reply

FIXTURE = Path(__file__).parent.parent / "fixtures" / "claude_hooks" / "session.jsonl"
SESSION = "hook-session-1"
TURN_TEXT = "SQLite"  # a word of the fixture's turns: never in the inbox or the dead letters


def _free_port() -> int:
    """A loopback port nobody listens on (bound once, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _llm_config(home: Path, base_url: str, provider: str = "ollama") -> None:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    (home / "config.toml").write_text(
        f'[llm]\nprovider = "{provider}"\nmodel = "test-model"\nbase_url = "{base_url}"\n'
        "timeout_seconds = 2\nmax_retries = 0\n"
    )


def _queue(home: Path, transcript: Path, **extra: Any) -> None:
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    entry = {"transcript_path": str(transcript), "session_id": SESSION, "event": "SessionEnd"}
    with (home / "inbox.jsonl").open("a") as inbox:
        inbox.write(json.dumps({**entry, **extra}) + "\n")


def _inbox(home: Path) -> list[str]:
    path = home / "inbox.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def _dead(home: Path) -> list[dict[str, Any]]:
    path = home / "inbox.dead.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _log(home: Path) -> str:
    path = home / "hooks.log"
    return path.read_text() if path.exists() else ""


def _turns(kioku: Run) -> list[dict[str, Any]]:
    return session_turns(kioku, SESSION)


def _transcript(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, path)
    return path


def _warnings(home: Path) -> list[str]:
    return [line for line in _log(home).splitlines() if "warning:" in line]


# -- a provider that cannot serve never costs a turn -------------------------------------------


def test_an_unreachable_provider_falls_back_and_the_drain_keeps_every_turn(
    home: Path, kioku: Run, tmp_path: Path
) -> None:
    _llm_config(home, f"http://127.0.0.1:{_free_port()}/v1")
    _queue(home, _transcript(tmp_path))
    report = kioku("hook", "drain", "--json").json()
    assert (report["ingested"], report["added"], report["dead"]) == (1, 2, 0)
    assert _inbox(home) == []
    turns = _turns(kioku)
    assert len(turns) == 2
    (warning,) = _warnings(home)  # one warning for the whole drain, not one per turn
    assert "unreachable" in warning
    assert "llm.base_url" in warning  # what to fix


def test_a_failing_provider_is_said_once_per_drain(home: Path, kioku: Run, tmp_path: Path) -> None:
    with FakeLlmServer() as server:
        server.script(*[Reply.raw(500, '{"error": "overloaded"}')] * 4)
        _llm_config(home, server.v1_url)
        _queue(home, _transcript(tmp_path))
        report = kioku("hook", "drain", "--json").json()
        assert len(server.requests) >= 2  # the provider was asked for each turn...
    assert (report["ingested"], report["added"]) == (1, 2)  # ...and no turn was lost
    (warning,) = _warnings(home)
    assert "HTTP 500" in warning
    assert "offline analyzer" in warning


# -- the dead-letter file ----------------------------------------------------------------------


def test_an_entry_that_keeps_failing_moves_to_the_dead_letters_and_retry_replays_it(
    home: Path, kioku: Run, tmp_path: Path
) -> None:
    broken = tmp_path / "session.jsonl"
    broken.mkdir()  # a transcript that cannot be read (a directory) until the user fixes it
    _queue(home, broken)
    for attempt in (1, 2):
        report = kioku("hook", "drain", "--json").json()
        assert (report["failed"], report["dead"]) == (1, 0)
        (line,) = _inbox(home)
        assert json.loads(line)["attempts"] == attempt
    report = kioku("hook", "drain", "--json").json()
    assert (report["failed"], report["dead"]) == (1, 1)
    assert _inbox(home) == []  # out of the inbox, but not lost:
    (dead,) = _dead(home)
    assert dead["transcript_path"] == str(broken)
    assert dead["session_id"] == SESSION
    assert dead["attempts"] == 3
    assert "IsADirectoryError" in dead["error"]
    assert stat.S_IMODE((home / "inbox.dead.jsonl").stat().st_mode) == 0o600
    assert "inbox.dead.jsonl" in _log(home)

    doctor = kioku("doctor", "--json")
    assert doctor.code == 1
    (check,) = [c for c in doctor.json()["checks"] if c["name"] == "ingest"]
    assert not check["ok"]
    assert "1 captured session" in check["detail"]
    assert dead["dead_at"] in check["detail"]  # the oldest
    assert "kioku ingest --retry" in check["detail"]

    still = kioku("ingest", "--retry")  # not fixed yet: it stays, exit 1
    assert still.code == 1
    assert "1 still failing" in still.out
    assert _dead(home)[0]["attempts"] == 4

    broken.rmdir()
    shutil.copy(FIXTURE, broken)  # the cause is fixed
    done = kioku("ingest", "--retry", "--json")
    assert done.code == 0, done.err
    assert done.json()["retry"] == {"ingested": 1, "added": 2, "left": 0}
    assert not (home / "inbox.dead.jsonl").exists()
    assert len(_turns(kioku)) == 2
    again = kioku("ingest", "--retry")  # idempotent: nothing left, nothing stored twice
    assert again.code == 0, again.err
    assert "retried 0 captured session(s)" in again.out
    assert len(_turns(kioku)) == 2
    assert kioku("doctor").code == 0


def test_retry_keeps_an_entry_that_was_not_stored_and_skips_stored_turns(
    home: Path, kioku: Run, tmp_path: Path
) -> None:
    transcript = _transcript(tmp_path)
    assert kioku("ingest", str(transcript)).code == 0  # the turns are stored already
    home.joinpath("inbox.dead.jsonl").write_text(
        json.dumps({"transcript_path": str(transcript), "session_id": SESSION, "attempts": 3})
        + "\n"
        + json.dumps({"transcript_path": str(tmp_path / "gone.jsonl"), "attempts": 1})
        + "\n"
    )
    done = kioku("ingest", "--retry", "--json")
    assert done.code == 1
    assert done.json()["retry"] == {"ingested": 1, "added": 0, "left": 1}
    (left,) = _dead(home)
    assert left["transcript_path"].endswith("gone.jsonl")
    assert left["error"] == "transcript not found"
    assert len(_turns(kioku)) == 2


def test_the_dead_letters_hold_what_the_inbox_held_and_no_turn_text(
    home: Path, kioku: Run, tmp_path: Path
) -> None:
    _queue(home, tmp_path / "missing.jsonl")
    with (home / "inbox.jsonl").open("a") as inbox:
        inbox.write("{not an entry\n")
    report = kioku("hook", "drain", "--json").json()
    assert report["dead"] == 2
    text = (home / "inbox.dead.jsonl").read_text()
    assert TURN_TEXT not in text
    assert [d.get("line") for d in _dead(home)] == [None, "{not an entry"]


# -- owner-only files whatever the umask ---------------------------------------------------------


def _with_umask_000() -> None:
    os.umask(0)


def test_a_home_made_by_the_session_end_hook_is_owner_only_under_umask_000(
    home: Path, tmp_path: Path, kioku: Run
) -> None:
    payload = json.dumps({"session_id": SESSION, "transcript_path": str(_transcript(tmp_path))})
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), "hook", "session-end"],
        input=payload,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
        preexec_fn=_with_umask_000,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    for name in ("inbox.jsonl", "inbox.jsonl.lock"):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600, name
    # the drain started under the same umask writes owner-only files too
    drained = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), "hook", "drain"],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
        preexec_fn=_with_umask_000,
    )
    assert drained.returncode == 0  # it stores the turns, or the hook's own drain does
    deadline = time.monotonic() + 60
    while len(_turns(kioku)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(_turns(kioku)) == 2
    for path in home.rglob("*"):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} has mode {mode:o}"


# -- oversize hook input -------------------------------------------------------------------------


def _hook(home: Path, event: str, stdin: bytes, **env: str) -> Result:
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), "hook", event],
        input=stdin,
        capture_output=True,
        env=clean_env(**env),
        timeout=120,
        check=False,
    )
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def test_a_10_mb_hook_input_gets_its_own_message_and_fails_open(home: Path, kioku: Run) -> None:
    event = "user-prompt-submit"
    added = kioku(
        "add", "--trigger", "t", "--content", "c", "--intensity", "50", "--category", "work"
    )
    assert added.code == 0, added.err
    prompt = "x" * (10 << 20)
    payload = json.dumps({"session_id": "s1", "transcript_path": "/tmp/x.jsonl", "prompt": prompt})
    done = _hook(home, event, payload.encode())
    assert (done.code, done.out) == (0, "")
    assert done.err.count("\n") == 1
    assert "larger than 4 MiB" in done.err
    assert "not valid JSON" not in done.err
    assert "no memories were recalled for this prompt" in done.err
    assert "larger than 4 MiB" in _log(home)
    assert not (home / "inbox.jsonl").exists()


def test_oversize_input_with_the_daemon_running_is_refused_the_same_way(
    home: Path, kioku: Run
) -> None:
    from kioku.interfaces.claude_code import daemon_client

    if not daemon_client.supported():
        pytest.skip("needs Unix sockets")
    added = kioku(
        "add", "--trigger", "t", "--content", "c", "--intensity", "50", "--category", "work"
    )
    assert added.code == 0, added.err
    try:
        assert kioku("daemon", "start").code == 0
        payload = json.dumps({"session_id": "s1", "prompt": "y" * (10 << 20)})
        done = _hook(home, "user-prompt-submit", payload.encode(), KIOKU_NO_DAEMON="")
    finally:
        kioku("daemon", "stop")
    assert (done.code, done.out) == (0, "")
    assert "larger than 4 MiB" in done.err
