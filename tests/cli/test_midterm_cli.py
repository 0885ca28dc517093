"""``kioku midterm`` run as a user runs it, on threads a working memory filed."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.service.context.working_memory import WorkingMemory
from tests.cli.conftest import Run

NOW = datetime.fromisoformat("2026-03-01T10:00:00+09:00")


def _session(home: Path, session_id: str, start: datetime, turns: list[tuple[str, str]]) -> None:
    clock = FixedClock(start)
    with Kioku.open(home, env={}, clock=clock) as kioku:
        wm = WorkingMemory(kioku=kioku, session_id=session_id)
        for user, assistant in turns:
            clock.advance(timedelta(minutes=1))
            wm.add("user", user)
            wm.add("assistant", assistant)
        wm.close()


@pytest.fixture
def filed(home: Path) -> Path:
    """Two sessions: one two days old (kept, no longer hot), one just now (hot)."""
    _session(
        home,
        "trip",
        NOW - timedelta(days=2),
        [
            ("We are planning a trip to Hokkaido in February.", "Sapporo's snow festival?"),
            ("Yes, and the hot springs in Noboribetsu.", "A good pairing."),
        ],
    )
    _session(
        home,
        "chat",
        NOW - timedelta(minutes=10),
        [
            ("My cat Mochi is sick and I am very worried.", "I hope she gets better soon."),
            ("The vet said \x1b[31mkidney\x1b[0m trouble.", "That must be hard."),
            ("ok thanks", "You're welcome."),
        ],
    )
    return home


def test_lists_the_unexpired_threads(filed: Path, kioku: Run) -> None:
    done = kioku("midterm", "--now", NOW.isoformat())
    assert done.code == 0, done.err
    lines = done.out.splitlines()
    assert lines[0].split() == ["THREAD", "LAST", "TURN", "HOT", "EXPIRES", "TURNS", "SUMMARY"]
    chat, trip = lines[1], lines[2]  # newest first
    assert chat.startswith("chat:1 ")
    assert " hot " in chat
    assert " 3 " in chat
    assert trip.startswith("trip:1 ")
    assert " hot " not in trip
    assert " 2 " in trip
    assert "2026-03-08 09:53" in chat  # expires seven days after its last turn

    data = kioku("midterm", "--now", NOW.isoformat(), "--json").json()
    assert [e["thread_id"] for e in data] == ["chat:1", "trip:1"]
    assert [e["hot"] for e in data] == [True, False]
    assert data[0]["turn_count"] == 3
    assert len(data[0]["turns"]) == 3
    assert data[0]["session_id"] == "chat"
    assert data[0]["summary"]
    assert data[0]["keywords"]

    one = kioku("midterm", "--thread", "trip:1", "--now", NOW.isoformat(), "--json").json()
    assert [e["thread_id"] for e in one] == ["trip:1"]

    later = kioku("midterm", "--now", (NOW + timedelta(days=6)).isoformat(), "--json").json()
    assert [e["thread_id"] for e in later] == ["chat:1"]  # trip:1 expired
    empty = kioku("midterm", "--now", (NOW + timedelta(days=8)).isoformat())
    assert empty.code == 0
    assert "empty" in empty.out


def test_resume_prints_the_summary_and_every_turn(filed: Path, kioku: Run) -> None:
    done = kioku("midterm", "--resume", "chat:1", "--now", NOW.isoformat())
    assert done.code == 0, done.err
    out = done.out
    assert out.startswith("thread chat:1 (session chat)")
    assert "hot until 2026-03-02 09:53" in out
    assert "summary:" in out
    assert "turns:" in out
    assert "[1] user: My cat Mochi is sick and I am very worried." in out
    assert "assistant: I hope she gets better soon." in out
    assert "[3] user: ok thanks" in out  # left out of long-term memory, still here
    assert "kidney" in out
    assert "\x1b" not in out  # nothing a terminal would obey

    data = kioku("midterm", "--resume", "chat:1", "--now", NOW.isoformat(), "--json").json()
    assert data["thread_id"] == "chat:1"
    assert "\x1b[31mkidney" in data["turns"][1]  # JSON keeps the text exact


def test_an_unknown_thread_is_a_clear_error(filed: Path, kioku: Run) -> None:
    for option in ("--resume", "--thread"):
        done = kioku("midterm", option, "nope:1")
        assert done.code == 2
        assert "no unexpired mid-term entry for thread 'nope:1'" in done.err
    expired = kioku("midterm", "--resume", "trip:1", "--now", (NOW + timedelta(days=9)).isoformat())
    assert expired.code == 2
    both = kioku("midterm", "--resume", "chat:1", "--thread", "chat:1")
    assert both.code == 2
    assert "not both" in both.err
