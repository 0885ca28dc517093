"""`kioku finalize` and `kioku heartbeat` (spec 001, 即時符号化) as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Run

DAY = "2025-03-01T10:0{}:00+09:00"


def remember(kioku: Run, user: str, assistant: str, minute: int, session: str = "s-1") -> str:
    result = kioku(
        "remember",
        "--user",
        user,
        "--assistant",
        assistant,
        "--at",
        DAY.format(minute),
        "--session",
        session,
        "--json",
    )
    assert result.code == 0, result.err
    return str(result.json()["id"])


def test_heartbeat_finalizes_a_session_ten_minutes_after_its_last_turn(kioku: Run) -> None:
    ids = [
        remember(kioku, "The login page throws a 500 error.", "Let me check.", 0),
        remember(kioku, "Fixed the login bug.", "The deploy works now.", 2),
    ]
    early = kioku("heartbeat", "--now", "2025-03-01T10:11:59+09:00", "--json")
    assert early.code == 0, early.err
    assert early.json() == {"finalized": []}
    result = kioku("heartbeat", "--now", "2025-03-01T10:12:00+09:00", "--json")
    assert result.code == 0, result.err
    [report] = result.json()["finalized"]
    assert report["session_id"] == "s-1"
    assert (report["first_turn"], report["last_turn"], report["turns"]) == (0, 1, 2)
    assert report["turn_ids"] == ids
    assert report["resolved"] == ["Fixed the login bug.", "The deploy works now."]
    assert report["last_finalized_turn_index"] == 1
    summary = kioku("show", report["summary_id"], "--json").json()
    assert summary["trigger"] == "Session s-1: turns 0\u20131"
    assert summary["session_id"] == "s-1"
    assert "session-summary" in summary["keywords"]
    events = kioku("activity", "--type", "issue_resolved", "--json")
    lines = [json.loads(line) for line in events.out.splitlines()]
    assert [(e["content"], e["memory_ids"]) for e in lines] == [
        ("Fixed the login bug.", [ids[1]]),
        ("The deploy works now.", [ids[1]]),
    ]
    again = kioku("heartbeat", "--now", "2025-03-01T11:00:00+09:00", "--json")
    assert again.json() == {"finalized": []}


def test_finalize_summarises_only_new_turns(kioku: Run) -> None:
    remember(kioku, "最初の質問です。", "はい。", 0)
    first = kioku("finalize", "s-1", "--json")
    assert first.code == 0, first.err
    assert (first.json()["first_turn"], first.json()["last_turn"]) == (0, 0)
    nothing = kioku("finalize", "s-1", "--json")
    assert nothing.json()["turns"] == 0
    assert nothing.json()["summary_id"] is None
    remember(kioku, "ログインのバグが直りました。", "よかったです。", 5)
    second = kioku("finalize", "s-1")
    assert second.code == 0, second.err
    headline, item = second.out.splitlines()
    assert headline.startswith("session s-1: turns 1\u20131 finalized, summary mem_")
    assert headline.endswith(", 1 resolved")
    assert item == "  resolved: ログインのバグが直りました。"


def test_text_output_when_there_is_nothing_to_do(kioku: Run) -> None:
    remember(kioku, "hello", "hi", 0)
    assert kioku("finalize", "s-1").code == 0
    result = kioku("finalize", "s-1")
    assert result.out.strip() == "session s-1: nothing new to finalize"
    quiet = kioku("heartbeat", "--now", "2025-03-01T12:00:00+09:00")
    assert quiet.code == 0
    assert quiet.out == ""
    assert "no quiet session to finalize" in quiet.err


def test_heartbeat_waits_as_long_as_asked(kioku: Run) -> None:
    remember(kioku, "hello", "hi", 0)
    waiting = kioku("heartbeat", "--idle", "30", "--now", "2025-03-01T10:29:00+09:00", "--json")
    assert waiting.json() == {"finalized": []}
    done = kioku("heartbeat", "--idle", "30", "--now", "2025-03-01T10:30:00+09:00", "--json")
    assert [r["session_id"] for r in done.json()["finalized"]] == ["s-1"]


def test_bad_input_exits_2(kioku: Run) -> None:
    remember(kioku, "hello", "hi", 0)
    assert kioku("heartbeat", "--idle", "-1").code == 2
    assert kioku("heartbeat", "--now", "yesterday").code == 2
    bad_now = kioku("finalize", "s-1", "--now", "2999-01-01T00:00:00+09:00")
    assert bad_now.code == 2
    assert "now" in bad_now.err
    assert kioku("finalize", "   ").code == 2


def test_a_home_without_a_store_is_not_created(kioku: Run, home: Path) -> None:
    result = kioku("heartbeat")
    assert result.code == 2
    assert "no kioku store" in result.err
    assert not (home / "memories.db").exists()
