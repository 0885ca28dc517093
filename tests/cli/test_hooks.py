"""``kioku hook EVENT``: the real entry point fed Claude Code's hook JSON on stdin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Result, Run, clean_env, session_turns

FIXTURE = Path(__file__).parent.parent / "fixtures" / "claude_hooks" / "session.jsonl"
SESSION = "hook-session-1"


def _hook(home: Path, event: str, stdin: str, *extra: str) -> Result:
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), *extra, "hook", event],
        input=stdin,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _payload(event: str, **fields: str) -> str:
    base = {
        "session_id": "s1",
        "transcript_path": "/tmp/x.jsonl",
        "cwd": "/tmp",
        "hook_event_name": event,
    }
    return json.dumps({**base, **fields}, ensure_ascii=False)


def _add_in_process(home: Path, items: list[tuple[str, str]]) -> None:
    """Many memories at once through the Python API (what is tested is the hook)."""
    from kioku import Kioku

    with Kioku.open(home, env={}) as k:
        for trigger, content in items:
            k.remember(trigger, content, intensity=60, category="decision")


def _add(kioku: Run, trigger: str, content: str, *extra: str) -> None:
    done = kioku(
        "add",
        "--trigger",
        trigger,
        "--content",
        content,
        "--intensity",
        "60",
        "--category",
        "decision",
        *extra,
    )
    assert done.code == 0, done.err


@pytest.fixture
def stocked(home: Path, kioku: Run) -> Path:
    _add(
        kioku,
        "Which database for the store?",
        "We chose SQLite in WAL mode",
        "--keywords",
        "SQLite",
    )
    _add(kioku, "Where to go in spring", "A trip to Kyoto in April", "--keywords=Kyoto")
    return home


def _log(home: Path) -> str:
    path = home / "hooks.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_user_prompt_submit_prints_the_relevant_memories(stocked: Path) -> None:
    stdin = _payload("UserPromptSubmit", prompt="Which database did we choose? SQLite?")
    done = _hook(stocked, "user-prompt-submit", stdin)
    assert done.code == 0, done.err
    assert done.out.startswith("<memories>\n")
    assert "</memories>" in done.out
    assert "We chose SQLite in WAL mode" in done.out
    assert len(done.out) <= 10_000
    assert done.err == ""


def test_user_prompt_submit_marks_the_recall(stocked: Path, kioku: Run) -> None:
    stdin = _payload("UserPromptSubmit", prompt="Which database did we choose? SQLite?")
    assert "SQLite" in _hook(stocked, "user-prompt-submit", stdin).out
    memories = kioku("list", "--json").json()
    marked = [m for m in memories if m["recalled_since_last_batch"]]
    assert [m["trigger"] for m in marked] == ["Which database for the store?"]


def test_the_block_stays_within_the_budget(stocked: Path, kioku: Run) -> None:
    _add_in_process(
        stocked,
        [(f"SQLite note {i} " + "x" * 200, "SQLite detail " + "y" * 300) for i in range(30)],
    )
    (stocked / "config.toml").write_text("[retrieval]\nbudget_chars = 800\ntop_k = 20\n")
    stdin = _payload("UserPromptSubmit", prompt="SQLite notes")
    done = _hook(stocked, "user-prompt-submit", stdin)
    assert done.code == 0, done.err
    assert done.out.startswith("<memories>")
    assert len(done.out.rstrip("\n")) <= 800


@pytest.mark.parametrize("prompt", ["/clear", "  /compact now", "", "   "])
def test_slash_commands_and_empty_prompts_print_nothing(stocked: Path, prompt: str) -> None:
    done = _hook(stocked, "user-prompt-submit", _payload("UserPromptSubmit", prompt=prompt))
    assert (done.code, done.out, done.err) == (0, "", "")
    assert _log(stocked) == ""


def test_nothing_relevant_prints_nothing(stocked: Path) -> None:
    stdin = _payload("UserPromptSubmit", prompt="量子色力学の格子計算")
    done = _hook(stocked, "user-prompt-submit", stdin)
    assert (done.code, done.out) == (0, "")


def test_no_store_yet_prints_nothing_and_creates_nothing(home: Path) -> None:
    done = _hook(home, "user-prompt-submit", _payload("UserPromptSubmit", prompt="hello there"))
    assert (done.code, done.out) == (0, "")
    assert not (home / "memories.db").exists()


@pytest.mark.parametrize("stdin", ["not json", "[1, 2]", ""])
def test_malformed_stdin_fails_open_with_a_log_line(stocked: Path, stdin: str) -> None:
    done = _hook(stocked, "user-prompt-submit", stdin)
    assert done.code == 0
    assert done.out == ""
    assert done.err.count("\n") == 1
    assert "kioku hook user-prompt-submit:" in done.err
    log = _log(stocked)
    assert log.count("\n") == 1
    assert "user-prompt-submit" in log


def test_a_broken_config_fails_open(stocked: Path) -> None:
    (stocked / "config.toml").write_text("[retrieval\n")
    done = _hook(stocked, "user-prompt-submit", _payload("UserPromptSubmit", prompt="SQLite"))
    assert (done.code, done.out) == (0, "")
    assert "user-prompt-submit" in _log(stocked)


def test_the_log_never_holds_memory_text(stocked: Path) -> None:
    (stocked / "config.toml").write_text("[retrieval\n")
    _hook(stocked, "user-prompt-submit", _payload("UserPromptSubmit", prompt="secret SQLite"))
    _hook(stocked, "session-end", "garbage")
    log = _log(stocked)
    assert log
    assert "secret" not in log
    assert "WAL" not in log


def test_session_start_primes_with_the_strongest_memories(stocked: Path, kioku: Run) -> None:
    _add(kioku, "Mother's birthday", "Next Thursday", "--protected")
    done = _hook(stocked, "session-start", _payload("SessionStart", source="startup"))
    assert done.code == 0, done.err
    assert done.out.startswith("<memories>")
    first = done.out.splitlines()[2]
    assert "Mother's birthday" in first  # protected first
    assert len(done.out) <= 1_600


def test_session_start_on_an_empty_home_prints_nothing(home: Path) -> None:
    done = _hook(home, "session-start", _payload("SessionStart", source="startup"))
    assert (done.code, done.out, done.err) == (0, "", "")


def _turns(kioku: Run) -> list[dict[str, Any]]:
    return session_turns(kioku, SESSION)


def _wait_for_turns(kioku: Run, count: int, seconds: float = 30) -> list[dict[str, object]]:
    deadline = time.monotonic() + seconds
    while True:
        turns = _turns(kioku)
        if len(turns) >= count or time.monotonic() > deadline:
            return turns
        time.sleep(0.3)


def _end_session(home: Path, transcript: Path, event: str = "session-end") -> None:
    """Run the hook with stdin written but never closed; it must return on its own."""
    name = {"session-end": "SessionEnd", "pre-compact": "PreCompact"}[event]
    payload = _payload(name, session_id=SESSION, transcript_path=str(transcript), reason="exit")
    process = subprocess.Popen(
        [sys.executable, "-m", "kioku", "--home", str(home), "hook", event],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(),
    )
    assert process.stdin is not None
    process.stdin.write(payload.encode())
    process.stdin.flush()
    try:
        code = process.wait(timeout=60)  # a guard against a hang, not a speed claim
    finally:
        process.stdin.close()
    assert process.stdout is not None
    assert process.stderr is not None
    assert (code, process.stdout.read(), process.stderr.read()) == (0, b"", b"")


def _feed_when_read(fifo: Path, data: bytes, seconds: float = 60) -> None:
    """Write ``data`` into the named pipe ``fifo`` once a reader opened it (the drain)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader yet (ENXIO)
            assert time.monotonic() < deadline, "the drain never opened the transcript"
            time.sleep(0.05)
            continue
        break
    os.set_blocking(fd, True)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _session_ends_before_its_drain(home: Path, kioku: Run, tmp_path: Path, event: str) -> None:
    """The hook returns while its drain is still blocked reading the transcript (a named
    pipe nobody has written yet): the entry is still in the inbox and nothing is stored.
    Once the transcript arrives, the background drain stores both turns and empties it."""
    transcript = tmp_path / "session.jsonl"
    os.mkfifo(transcript)
    _end_session(home, transcript, event)
    assert json.loads((home / "inbox.jsonl").read_text())["transcript_path"] == str(transcript)
    assert not (home / "memories.db").exists() or _turns(kioku) == []
    _feed_when_read(transcript, FIXTURE.read_bytes())
    turns = _wait_for_turns(kioku, 2)
    assert len(turns) == 2  # the /clear command is not a turn
    deadline = time.monotonic() + 30
    while (home / "inbox.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (home / "inbox.jsonl").exists()
    assert _log(home) == ""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_session_end_returns_at_once_and_ingests_in_the_background(
    home: Path, kioku: Run, tmp_path: Path
) -> None:
    _session_ends_before_its_drain(home, kioku, tmp_path, "session-end")


def test_session_end_with_stdin_that_never_ends(home: Path, tmp_path: Path) -> None:
    """No whole JSON object and an stdin that stays open: the hook gives up waiting."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kioku", "--home", str(home), "hook", "session-end"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(),
    )
    assert process.stdin is not None
    try:
        process.stdin.write(b'{"session_id": "s1", "transcript_')
        process.stdin.flush()
        code = process.wait(timeout=60)  # returns although stdin stays open (no speed claim)
    finally:
        process.stdin.close()
    for stream in (process.stdout, process.stderr):
        assert stream is not None
        stream.close()
    assert code == 0
    assert "session-end" in _log(home)
    assert "still arriving when the hook stopped waiting" in _log(home)


def test_a_crashed_worker_loses_nothing(home: Path, kioku: Run, tmp_path: Path) -> None:
    """An entry left in the inbox (the worker died) is ingested by the next drain, and
    ingesting twice stores each turn once."""
    transcript = tmp_path / "session.jsonl"
    shutil.copy(FIXTURE, transcript)
    home.mkdir(parents=True)
    entry = {"transcript_path": str(transcript), "session_id": SESSION, "event": "SessionEnd"}
    line = json.dumps(entry) + "\n"
    (home / "inbox.jsonl").write_text(line + "not json\n" + line)
    done = kioku("hook", "drain", "--json")
    assert done.code == 0, done.err
    report = done.json()
    assert (report["ingested"], report["added"], report["dead"]) == (1, 2, 1)
    assert not (home / "inbox.jsonl").exists()
    (dead,) = (home / "inbox.dead.jsonl").read_text().splitlines()
    assert json.loads(dead)["line"] == "not json"  # kept as the inbox held it
    assert len(_turns(kioku)) == 2
    (home / "inbox.jsonl").write_text(line)
    assert kioku("hook", "drain", "--json").json()["added"] == 0
    assert len(_turns(kioku)) == 2


def test_drain_moves_a_missing_transcript_to_the_dead_letters(
    home: Path, kioku: Run, tmp_path: Path
) -> None:
    home.mkdir(parents=True)
    entry = {"transcript_path": str(tmp_path / "gone.jsonl"), "session_id": "x"}
    (home / "inbox.jsonl").write_text(json.dumps(entry) + "\n")
    report = kioku("hook", "drain", "--json").json()
    assert report["dead"] == 1
    assert not (home / "inbox.jsonl").exists()
    assert "gone.jsonl" in _log(home)
    (dead,) = (home / "inbox.dead.jsonl").read_text().splitlines()
    assert json.loads(dead)["error"] == "transcript not found"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_pre_compact_captures_too(home: Path, kioku: Run, tmp_path: Path) -> None:
    _session_ends_before_its_drain(home, kioku, tmp_path, "pre-compact")


def test_session_end_without_transcript_path_fails_open(home: Path) -> None:
    done = _hook(home, "session-end", json.dumps({"session_id": "s1"}))
    assert (done.code, done.out) == (0, "")
    assert "transcript_path" in _log(home)


def test_help_goes_through_click(home: Path) -> None:
    done = _hook(home, "user-prompt-submit", "", "--user", "me")
    assert done.code == 0
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "hook", "--help"],
        capture_output=True,
        text=True,
        env=clean_env(),
        check=False,
    )
    assert proc.returncode == 0
    assert "user-prompt-submit" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "hook", "session-end", "--help"],
        capture_output=True,
        text=True,
        env=clean_env(),
        check=False,
    )
    assert proc.returncode == 0
    assert "Usage: kioku hook session-end" in proc.stdout


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["hook", "user-prompt-submit"], ("user-prompt-submit", None)),
        (["--home", "/h", "hook", "session-end"], ("session-end", "/h")),
        (["--home=/h", "--user", "u", "hook", "drain"], ("drain", "/h")),
        (["hook", "--help"], None),
        (["hook", "session-end", "--help"], None),
        (["hook", "drain", "--json"], None),
        (["-V", "hook", "session-end"], None),
        (["hook", "unknown"], None),
        (["hook"], None),
        (["--home"], None),
    ],
)
def test_the_fast_path_takes_plain_hook_calls_only(
    argv: list[str], expected: tuple[str, str | None] | None
) -> None:
    from kioku.interfaces.claude_code.hook_fast import parse_hook_argv

    parsed = parse_hook_argv(argv)
    if expected is None:
        assert parsed is None
        return
    assert parsed is not None
    event, options = parsed
    assert event == expected[0]
    assert (str(options.home) if options.home else None) == expected[1]


_ANSWER_AND_REPORT = """
import sys
{preload}
from kioku.interfaces.claude_code.hook_fast import run_fast
run_fast(sys.argv[1:])
sys.stdout.flush()
print("numpy" in sys.modules, file=sys.stderr)
"""


def _answer(home: Path, prompt: str, *, preload: str = "") -> tuple[str, bool]:
    """The in-process hook's block, and whether the process imported numpy."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _ANSWER_AND_REPORT.format(preload=preload),
            "--home",
            str(home),
            "hook",
            "user-prompt-submit",
        ],
        input=_payload("UserPromptSubmit", prompt=prompt),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=True,
    )
    return proc.stdout, proc.stderr.strip().splitlines()[-1] == "True"


def test_a_prompt_answered_in_process_needs_no_numpy_and_gets_the_same_answer(
    stocked: Path, kioku: Run, tmp_path: Path
) -> None:
    """With the vector cache file in place, the hook searches it without importing numpy
    (vector_lite), and answers exactly as a process that searches with numpy."""
    topics = ["SQLite", "Kyoto", "garden", "tomato"]
    _add_in_process(
        stocked,
        [
            (f"{topics[i % 4]} note {i}", f"About {topics[i % 4]} and thing {i} " + "z" * (i % 7))
            for i in range(40)
        ],
    )
    prompts = ["Which database did we choose? SQLite?", "tomato garden notes", "Kyoto trip"]
    first, numpy_loaded = _answer(stocked, prompts[0])  # no file yet: numpy builds and writes it
    assert numpy_loaded
    assert "SQLite" in first
    for prompt in prompts:
        lite_home, numpy_home = tmp_path / f"lite-{len(prompt)}", tmp_path / f"np-{len(prompt)}"
        shutil.copytree(stocked, lite_home)  # the same store, marks and all, for both answers
        shutil.copytree(stocked, numpy_home)
        lite, lite_numpy = _answer(lite_home, prompt)
        with_numpy, _ = _answer(numpy_home, prompt, preload="import numpy")
        assert not lite_numpy, "the in-process hook imported numpy"
        assert lite == with_numpy
        assert lite.startswith("<memories>")
