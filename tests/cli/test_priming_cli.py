"""``kioku prime``, ``kioku activity`` and the UserPromptSubmit hook, run as real commands.

The stores are written in process through Kioku (fast), then read by the command in a
subprocess, as a user's shell or Claude Code would run it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.core.model import Memory
from tests.cli.conftest import Result, clean_env, run_kioku

QUESTION = "Which PostgreSQL version does the billing database use?"
TYPES = (
    "message_received", "response_sent", "dm_sent", "dm_received", "channel_post",
    "channel_read", "human_notify", "tool_use", "heartbeat_start", "heartbeat_end",
    "cron_executed", "memory_write", "error", "issue_resolved",
    "memory_recall", "priming", "memory_erased",
)  # fmt: skip
_ANY_OPEN = re.compile(r"<\s*kioku-priming\b", re.IGNORECASE)
_ANY_CLOSE = re.compile(r"<\s*/\s*kioku-priming\b[^>]*>", re.IGNORECASE)
_SECTION = re.compile(r'^<kioku-priming channel="([A-D])" name="[a-z ]+">$', re.MULTILINE)


def _stock(home: Path) -> dict[str, Memory]:
    with Kioku.open(home, env={}) as k:
        return {
            "migration": k.remember_turn(
                "We moved the billing database to PostgreSQL 16",
                "The migration finished overnight",
                session_id="s-db",
            ).memory,
            "tulips": k.remember_turn(
                "I planted tulips by the garden wall", "They will bloom in April", session_id="s-g"
            ).memory,
            "fact": k.write_memory(
                "knowledge", "The billing database runs PostgreSQL 16", title="billing database"
            ),
            "deploy": k.write_memory(
                "procedure",
                "",
                title="Deploy billing",
                description="[deploy] the billing service to production",
                steps=["run the tests", "kubectl apply"],
            ),
        }


@pytest.fixture(scope="module")
def stocked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Memory]]:
    """A home the tests using it only read: priming without --mark writes nothing."""
    home = tmp_path_factory.mktemp("prime-cli") / "home"
    return home, _stock(home)


def _run(home: Path, *args: str) -> Result:
    return run_kioku("--home", str(home), *args)


def _assert_balanced(block: str) -> None:
    sections = len(_SECTION.findall(block))
    assert len(_ANY_OPEN.findall(block)) == sections
    assert len(_ANY_CLOSE.findall(block)) == sections
    assert block.count("<memories>") == block.count("</memories>") <= 1


def _lines(home: Path) -> list[str]:
    with Kioku.open(home, env={}) as k:
        return [stored.line for stored, _ in k.activity()]


# -- kioku prime ----------------------------------------------------------------------------------


def test_prime_explain_shows_each_channel_and_marks_nothing(
    stocked: tuple[Path, dict[str, Memory]],
) -> None:
    home, _ = stocked
    before = _lines(home)
    done = _run(home, "prime", QUESTION, "--explain")
    assert done.code == 0, done.err
    block, _, explained = done.out.partition("\n\n")
    assert '<kioku-priming channel="C" name="related knowledge">' in block
    assert "- billing database: The billing database runs PostgreSQL 16" in block
    assert "<memories>" in block
    assert "We moved the billing database to PostgreSQL 16" in block
    head, *rows = explained.strip().splitlines()
    assert head == f"type question, budget 1500 tokens, block {len(block)} characters"
    assert rows[0].split() == ["CHANNEL", "BUDGET", "USED", "LINES", "SKIPPED", "WHY"]
    names = ["A sender profile", "B recent activity", "C related knowledge", "D procedures"]
    names.append("E episodes")
    assert [row[: len(name)] for row, name in zip(rows[1:], names, strict=True)] == names
    numbers = {
        name[0]: [int(x) for x in row[len(name) :].split()[:4]]
        for row, name in zip(rows[1:], names, strict=True)
    }
    assert sum(budget for budget, *_ in numbers.values()) <= 1500
    for budget, used, _lines_shown, _skipped in numbers.values():
        assert used <= budget
    assert numbers["C"][2] == 1
    assert numbers["E"][2] >= 1
    assert "activation" in rows[3]
    assert _lines(home) == before


def test_prime_json_reports_budgets_fills_and_the_block(
    stocked: tuple[Path, dict[str, Memory]],
) -> None:
    home, ids = stocked
    done = _run(home, "prime", QUESTION, "--json")
    assert done.code == 0, done.err
    data = done.json()
    assert (data["message"], data["message_type"], data["total_budget"]) == (
        QUESTION,
        "question",
        1500,
    )
    channels = data["channels"]
    assert [c["channel"] for c in channels] == list("ABCDE")
    assert [c["name"] for c in channels] == [
        "sender profile",
        "recent activity",
        "related knowledge",
        "procedures",
        "episodes",
    ]
    assert sum(c["budget"] for c in channels) <= 1500
    for channel in channels:
        assert 0 <= channel["used"] <= channel["budget"]
        assert len(channel["why"]) == len(channel["lines"]) or channel["channel"] == "B"
        if channel["channel"] != "E":
            for line in channel["lines"]:
                assert line in data["block"].splitlines()
    by = {c["channel"]: c for c in channels}
    assert by["C"]["memory_ids"] == [ids["fact"].id]
    assert ids["migration"].trigger in data["block"]
    assert data["chars"] == len(data["block"])
    _assert_balanced(data["block"])


def test_prime_type_heartbeat_uses_the_heartbeat_budget_and_no_episodes(
    stocked: tuple[Path, dict[str, Memory]],
) -> None:
    home, _ = stocked
    done = _run(home, "prime", QUESTION, "--type", "heartbeat", "--json")
    assert done.code == 0, done.err
    data = done.json()
    assert (data["message_type"], data["total_budget"]) == ("heartbeat", 200)
    assert sum(c["budget"] for c in data["channels"]) <= 200
    (episodes,) = [c for c in data["channels"] if c["channel"] == "E"]
    assert episodes["lines"] == []
    assert "<memories>" not in data["block"]


def test_prime_refuses_an_unknown_type(stocked: tuple[Path, dict[str, Memory]]) -> None:
    home, _ = stocked
    done = _run(home, "prime", QUESTION, "--type", "chitchat")
    assert done.code == 2
    assert done.out == ""
    for allowed in ("greeting", "question", "request", "heartbeat"):
        assert allowed in done.err


def test_prime_mark_logs_the_priming_and_strengthens_the_knowledge(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = _stock(home)
    done = _run(home, "prime", QUESTION, "--mark", "--json")
    assert done.code == 0, done.err
    with Kioku.open(home, env={}) as k:
        (priming,) = k.activity(types=["priming"])
        event = priming[1]
        assert event is not None
        assert event.content == ""  # the prompt is its turn's own event
        assert ids["fact"].id in event.memory_ids
        assert k.get(ids["fact"].id).recall_count == 1
        assert k.get(ids["migration"].id).recalled_since_last_batch


# -- kioku activity -------------------------------------------------------------------------------


def test_activity_prints_the_log_oldest_first(stocked: tuple[Path, dict[str, Memory]]) -> None:
    home, _ids = stocked
    done = _run(home, "activity")
    assert done.code == 0, done.err
    rows = done.out.splitlines()
    labels = [row.split()[1] for row in rows]
    assert labels == ["MSG<", "MSG>", "MSG<", "MSG>", "MEM", "MEM"]
    assert rows[0].endswith("We moved the billing database to PostgreSQL 16")
    assert rows[3].endswith("They will bloom in April")
    assert rows[4].endswith("billing database")
    newest = _run(home, "activity", "--type", "response_sent", "--limit", "1")
    assert newest.code == 0, newest.err
    assert newest.out.splitlines() == [rows[3]]


def test_activity_json_prints_one_spec_line_per_event(
    stocked: tuple[Path, dict[str, Memory]],
) -> None:
    home, ids = stocked
    done = _run(home, "activity", "--json", "--type", "message_received", "--type", "memory_write")
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines == [line for line in _lines(home) if json.loads(line)["type"] != "response_sent"]
    records = [json.loads(line) for line in lines]
    assert [r["type"] for r in records] == ["message_received"] * 2 + ["memory_write"] * 2
    assert records[0]["content"] == ids["migration"].trigger
    assert records[0]["memory_ids"] == [ids["migration"].id]
    for record in records:
        assert list(record)[:2] == ["ts", "type"]


def test_activity_refuses_an_unknown_type_and_names_the_allowed_ones(
    stocked: tuple[Path, dict[str, Memory]],
) -> None:
    home, _ = stocked
    done = _run(home, "activity", "--type", "message")
    assert done.code == 2
    assert done.out == ""
    assert "'message' is not an event type" in done.err
    for name in TYPES:
        assert name in done.err


def test_forget_leaves_only_the_time_and_type_in_the_activity_log(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}) as k:
        secret = k.remember_turn("My locker code is zebra 4471", "Noted the zebra code").memory
        k.remember_turn("The tulips bloomed", "Lovely")
    assert _run(home, "forget", secret.id).code == 0
    text = _run(home, "activity")
    assert text.code == 0, text.err
    assert "zebra" not in text.out
    assert "4471" not in text.out
    assert [row.endswith("(erased)") for row in text.out.splitlines()] == [True, True, False, False]
    lines = _run(home, "activity", "--json").out.splitlines()
    erased = [json.loads(line) for line in lines[:2]]
    assert [(r["type"], r["redacted"]) for r in erased] == [
        ("message_received", True),
        ("response_sent", True),
    ]
    assert all("content" not in r for r in erased)
    assert "zebra" not in "".join(lines)
    assert json.loads(lines[2])["content"] == "The tulips bloomed"


# -- the UserPromptSubmit hook ----------------------------------------------------------------


def _hook(home: Path, prompt: str) -> Result:
    payload = {
        "session_id": "hook-s1",
        "transcript_path": "/tmp/x.jsonl",
        "cwd": "/tmp",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), "hook", "user-prompt-submit"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def test_the_hook_injects_the_knowledge_section_and_logs_the_priming(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ids = _stock(home)
    done = _hook(home, QUESTION)
    assert (done.code, done.err) == (0, "")
    block = done.out.rstrip("\n")
    assert '<kioku-priming channel="C" name="related knowledge">' in block
    assert "The billing database runs PostgreSQL 16" in block
    assert "<memories>" in block
    assert ids["migration"].trigger in block
    assert len(block) <= 10_000
    _assert_balanced(block)
    with Kioku.open(home, env={}) as k:
        (priming,) = k.activity(types=["priming"])
        assert priming[1] is not None
        assert priming[1].content == ""  # the prompt is its turn's own event
        assert k.get(ids["fact"].id).recall_count == 1


def test_the_hook_stays_within_10000_characters_with_many_long_memories(tmp_path: Path) -> None:
    home = tmp_path / "home"
    long = " ".join(["the billing invoice export worker needs a careful check after a restart"] * 6)
    prompt = "Check the billing invoice export worker restart"
    with Kioku.open(home, env={}) as k:
        for i in range(40):
            k.write_memory("knowledge", f"Note {i}: {long}", title=f"billing export note {i}")
            k.remember_turn(
                f"Billing export incident {i}: {long}", f"Answer {i}: {long}", session_id=f"s{i}"
            )
        k.write_memory(
            "procedure",
            "",
            title="Restart export",
            description="[restart] the billing invoice export worker",
            steps=["check the queue"] * 5,
        )
        uncapped = k.prime(prompt, mark=False)
    assert len(uncapped.block) > 10_000  # without the cap the block would not fit
    done = _hook(home, prompt)
    assert (done.code, done.err) == (0, "")
    block = done.out.rstrip("\n")
    assert 0 < len(block) <= 10_000
    assert '<kioku-priming channel="C" name="related knowledge">' in block
    assert "billing export note" in block
    _assert_balanced(block)
    kept = block.splitlines()
    assert all(line in uncapped.block.splitlines() or line.startswith("[") for line in kept)
