"""The real ``kioku`` command and hook: off-topic prompts inject nothing, and memory text never
reaches the terminal with control characters (subprocesses on a real home)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Result, Run, clean_env

HOSTILE_TRIGGER = "Momo\x1b]0;pwned\x07 the dog\x1b[2J walks\rby the river\x07"
HOSTILE_CONTENT = "every \x1b[31mevening\x1b[0m \x9b2J at six\u202e"
FORBIDDEN = [chr(c) for c in range(0x20) if chr(c) not in "\n"] + [
    chr(c) for c in range(0x7F, 0xA0)
]


def _hook(home: Path, prompt: str, session: str = "s1") -> Result:
    payload = {
        "session_id": session,
        "transcript_path": "/tmp/x.jsonl",
        "cwd": "/tmp",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), "hook", "user-prompt-submit"],
        input=json.dumps(payload, ensure_ascii=False),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _remember(kioku: Run, user: str, assistant: str, session: str) -> str:
    done = kioku("remember", "--user", user, "--assistant", assistant, "--session", session)
    assert done.code == 0, done.err
    return done.out.split()[0]


@pytest.fixture
def moody(kioku: Run) -> dict[str, str]:
    ids = {
        "build": _remember(kioku, "ふざけんな！またビルドが壊れた！", "ログを見ましょう", "a"),
        "dog": _remember(kioku, "I'm heartbroken, my dog Momo died", "I'm so sorry", "b"),
        "db": _remember(kioku, "We chose PostgreSQL for the server, relieved", "Good", "c"),
    }
    assert "ビルド" in kioku("recall", "ビルドが壊れた", "--session", "s1").out  # the mood
    return ids


@pytest.mark.parametrize("prompt", ["How do I center a div in CSS?", "今日の天気は？"])
def test_the_hook_injects_nothing_for_an_off_topic_prompt(
    home: Path, moody: dict[str, str], prompt: str
) -> None:
    assert "PostgreSQL" in _hook(home, "Which database for the server?").out
    done = _hook(home, prompt)
    assert done.code == 0
    assert done.out == ""


def test_recall_prints_nothing_for_an_off_topic_prompt(kioku: Run, moody: dict[str, str]) -> None:
    done = kioku("recall", "How do I center a div in CSS?", "--session", "s1", "--explain")
    assert done.code == 0
    assert done.out == ""
    assert "no memories recalled" in done.err
    assert "the query names css, and no memory mentions any of them" in done.err
    assert json.loads(kioku("recall", "How do I center a div?", "--json").out)["results"] == []
    unnamed = kioku("recall", "How do I center a div?", "--session", "s1", "--explain")
    assert unnamed.out == ""
    assert "min_relevance" in unnamed.err
    data = kioku("recall", "How do I center a div in CSS?", "--session", "s1", "--json").json()
    assert data["results"] == []
    assert data["block"] == ""
    assert data["min_relevance"] > 0


def test_explain_says_why_each_memory_qualified(kioku: Run, moody: dict[str, str]) -> None:
    done = kioku("recall", "What happened to my dog Momo?", "--session", "s1", "--explain")
    assert done.code == 0
    row = next(line for line in done.out.splitlines() if line.startswith(moody["dog"]))
    assert row.split()[1] == "match"
    assert "COVER ≥" in done.out
    assert "min_relevance" in done.out


@pytest.fixture
def hostile(kioku: Run) -> str:
    done = kioku(
        "add", "--trigger", HOSTILE_TRIGGER, "--content", HOSTILE_CONTENT,
        "--intensity", "50", "--category", "casual",
    )  # fmt: skip
    assert done.code == 0, done.err
    return done.out.strip()


def _clean(text: str) -> None:
    found = sorted({repr(c) for c in text if c in FORBIDDEN or c in "\u202e"})
    assert not found, f"control characters printed: {found}"


@pytest.mark.parametrize(
    "args",
    [
        ("list",),
        ("list", "--all"),
        ("recall", "Momo the dog by the river"),
        ("recall", "Momo the dog by the river", "--explain"),
    ],
)
def test_commands_print_no_control_characters(kioku: Run, hostile: str, args: tuple[str]) -> None:
    done = kioku(*args)
    assert done.code == 0, done.err
    assert "Momo" in done.out
    _clean(done.out)


def test_show_prints_no_control_characters_but_json_is_exact(kioku: Run, hostile: str) -> None:
    done = kioku("show", hostile)
    assert done.code == 0, done.err
    assert "Momo" in done.out
    assert "evening" in done.out
    _clean(done.out)
    data = kioku("show", hostile, "--json").json()
    assert data["trigger"] == HOSTILE_TRIGGER
    assert data["content"] == HOSTILE_CONTENT


def test_the_hook_block_carries_no_control_characters(home: Path, hostile: str) -> None:
    done = _hook(home, "Momo the dog by the river")
    assert "<memories>" in done.out
    _clean(done.out)
    assert "\x1b" not in done.out
