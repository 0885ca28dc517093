"""Forgotten turns stay forgotten, erasure of a person, and what erasure reports."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from tests.cli.conftest import Run

FIXTURES = Path(__file__).parent.parent / "fixtures"
TRANSCRIPT = FIXTURES / "claude" / "normal.jsonl"
HOOK_TRANSCRIPT = FIXTURES / "claude_hooks" / "session.jsonl"
HOOK_SESSION = "hook-session-1"


def _memories(kioku: Run, *scope: str) -> list[dict[str, Any]]:
    listed = kioku(*scope, "list", "--all", "--limit", "1000", "--json")
    assert listed.code == 0, listed.err
    data = listed.json()
    assert isinstance(data, list)
    return data


def _forget_all(kioku: Run) -> int:
    ids = [str(m["id"]) for m in _memories(kioku)]
    for memory_id in ids:
        done = kioku("forget", memory_id, "--force")
        assert done.code == 0, done.err
    return len(ids)


def test_ingest_after_forget_never_stores_the_turn_again(kioku: Run, tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    shutil.copy(TRANSCRIPT, transcript)
    first = kioku("ingest", str(transcript), "--json")
    assert first.code == 0, first.err
    stored = _memories(kioku)
    assert stored
    forgotten = stored[0]
    assert kioku("forget", str(forgotten["id"])).code == 0
    again = kioku("ingest", str(transcript), "--json")
    assert again.code == 0, again.err
    after = _memories(kioku)
    assert len(after) == len(stored) - 1
    sources = {s for m in after for s in m["source_ids"]}
    assert not sources & set(forgotten["source_ids"])


def test_import_after_forget_skips_the_erased_line(kioku: Run, tmp_path: Path) -> None:
    lines = tmp_path / "turns.jsonl"
    lines.write_text(
        "\n".join(
            json.dumps({"user": f"turn number {n} about the garden", "source_id": f"imp:{n}"})
            for n in range(3)
        )
        + "\n"
    )
    assert kioku("import", str(lines), "--json").json()["imported"] == 3
    victim = next(m for m in _memories(kioku) if m["source_ids"] == ["imp:1"])
    assert kioku("forget", str(victim["id"])).code == 0
    again = kioku("import", str(lines), "--json")
    assert again.code == 0, again.err
    assert (again.json()["imported"], again.json()["skipped"]) == (0, 3)
    assert sorted(s for m in _memories(kioku) for s in m["source_ids"]) == ["imp:0", "imp:2"]


def test_the_hook_drain_does_not_store_an_erased_turn_again(
    home: Path, kioku: Run, tmp_path: Path
) -> None:
    transcript = tmp_path / "session.jsonl"
    shutil.copy(HOOK_TRANSCRIPT, transcript)
    home.mkdir(parents=True)
    entry = {"transcript_path": str(transcript), "session_id": HOOK_SESSION, "event": "SessionEnd"}
    (home / "inbox.jsonl").write_text(json.dumps(entry) + "\n")
    assert kioku("hook", "drain", "--json").json()["added"] == 2
    assert _forget_all(kioku) == 2
    (home / "inbox.jsonl").write_text(json.dumps(entry) + "\n")
    drained = kioku("hook", "drain", "--json")
    assert drained.code == 0, drained.err
    assert drained.json()["added"] == 0
    assert _memories(kioku) == []


def test_forget_reports_the_backups_that_still_hold_it(kioku: Run, tmp_path: Path) -> None:
    made = kioku(
        "add", "--trigger", "t", "--content", "c", "--intensity", "40", "--category", "work",
        "--json",
    )  # fmt: skip
    memory_id = made.json()["id"]
    copies = tmp_path / "copies"
    copies.mkdir()
    first = kioku("backup", str(copies / "a.db"), "--json")
    assert first.code == 0, first.err
    assert first.json()["memories"] == 1
    gone = copies / "gone.db"
    assert kioku("backup", str(gone)).code == 0
    gone.unlink()
    done = kioku("forget", memory_id, "--json")
    assert done.code == 0, done.err
    held = done.json()["backups_containing"]
    assert {(Path(b["path"]).name, b["exists"]) for b in held} == {
        ("a.db", True),
        ("gone.db", False),
    }
    text = kioku("backup", str(copies / "b.db"))
    assert text.code == 0
    human = kioku("erase", "--audit", "--json").json()
    assert human[0]["action"] == "forget"
    assert human[0]["details"]["backups_still_containing"] == [str((copies / "a.db").resolve())]


def test_forget_says_which_backups_hold_it_in_text(kioku: Run, tmp_path: Path) -> None:
    made = kioku(
        "add", "--trigger", "t", "--content", "c", "--intensity", "40", "--category", "work",
        "--json",
    )  # fmt: skip
    assert kioku("backup", str(tmp_path / "a.db")).code == 0
    done = kioku("forget", made.json()["id"])
    assert done.code == 0, done.err
    assert "1 backup(s)" in done.out
    assert str(tmp_path / "a.db") in done.out


def test_erase_user_needs_the_token_of_exactly_what_is_there(kioku: Run) -> None:
    def add(user: str, text: str) -> None:
        done = kioku(
            "--user", user, "add", "--trigger", text, "--content", "c", "--intensity", "40",
            "--category", "work",
        )  # fmt: skip
        assert done.code == 0, done.err

    add("dana", "dana one")
    add("erin", "erin stays")
    plan = kioku("erase", "--user", "dana", "--json")
    assert plan.code == 0, plan.err
    token = plan.json()["token"]
    assert plan.json()["memories"] == 1
    assert "dana one" not in plan.out
    add("dana", "dana two arrives after the plan")
    stale = kioku("erase", "--user", "dana", "--token", token)
    assert stale.code == 2
    assert "token" in stale.err
    assert len(_memories(kioku, "--user", "dana")) == 2  # nothing was erased
    fresh = kioku("erase", "--user", "dana", "--json").json()
    assert fresh["memories"] == 2
    assert fresh["token"] != token
    done = kioku("erase", "--user", "dana", "--token", fresh["token"], "--json")
    assert done.code == 0, done.err
    assert done.json()["erased"] == 2
    assert _memories(kioku, "--user", "dana") == []
    assert [m["trigger"] for m in _memories(kioku, "--user", "erin")] == ["erin stays"]
    assert kioku("erase", "--token", "x").code == 2  # no --user: usage error


def test_erase_user_takes_every_agent_and_the_log_rows(kioku: Run, home: Path) -> None:
    for agent in ("a1", "a2"):
        done = kioku(
            "--user", "fay", "--agent", agent, "add", "--trigger", f"fay {agent}",
            "--content", "c", "--intensity", "40", "--category", "work",
        )  # fmt: skip
        assert done.code == 0, done.err
    plan = kioku("erase", "--user", "fay", "--json").json()
    assert plan["by_agent"] == {"a1": 1, "a2": 1}
    assert kioku("erase", "--user", "fay", "--token", plan["token"]).code == 0
    with sqlite3.connect(home / "memories.db") as conn:
        assert (
            conn.execute("SELECT COUNT(*) FROM memories WHERE user_id = 'fay'").fetchone()[0] == 0
        )
        assert (
            conn.execute("SELECT COUNT(*) FROM lifecycle_log WHERE user_id = 'fay'").fetchone()[0]
            == 0
        )
        audit = conn.execute("SELECT subject, items FROM erasure_audit").fetchall()
    assert len(audit) == 1
    assert audit[0][1] == 2
    assert audit[0][0] != "fay"
    only = kioku("erase", "--audit", "--user", "fay", "--json").json()
    assert len(only) == 1
    assert kioku("erase", "--audit", "--user", "nobody", "--json").json() == []
