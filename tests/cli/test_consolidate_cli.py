"""``kioku consolidate`` as a person runs it: the plan first, then the run, then nothing more.

Two days of turns are stored through the Python API (with their own times); the command runs
in a subprocess as of the next morning. A dry run prints what would be extracted, validated
and superseded and why, and writes nothing; the run does it, once; ``show`` tells what a fact
replaced and when; ``stats`` shows the lifecycle; bad input is refused with exit 2.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from tests.cli.conftest import Run

TZ = ZoneInfo("Asia/Tokyo")
DAY1 = datetime(2026, 3, 2, 10, 0, tzinfo=TZ)  # a Monday
MORNING = DAY1 + timedelta(days=2, hours=-5)  # two batch days later, at 05:00


@pytest.fixture
def stored(home: Path) -> Path:
    clock = FixedClock(DAY1)
    with Kioku.open(home, env={}, clock=clock) as k:
        k.remember_turn("My colleague Ken lives in Osaka.", "Noted.", at=DAY1)
        k.remember_turn("プロジェクトAの担当は田中さんです。", "了解です。", at=DAY1)
        clock.advance(timedelta(days=1))
        k.remember_turn("Ken moved to Tokyo last month.", "Thanks.", at=clock.now())
        k.remember_turn(
            "To deploy the app: 1. run make test 2. build the image 3. push the image",
            "Got it.",
            at=clock.now(),
        )
    return home


def test_dry_run_prints_the_plan_and_writes_nothing(stored: Path, kioku: Run) -> None:
    dry = kioku("consolidate", "--dry-run", "--now", MORNING.isoformat(), "--json")
    assert dry.code == 0, dry.err
    plan = dry.json()
    assert plan["status"] == "dry_run"
    actions = [a for p in plan["periods"] for a in p["actions"]]
    added = [a["text"] for a in actions if a["action"] == "add_knowledge"]
    assert "My colleague Ken lives in Osaka." in added
    assert all(a["why"] for a in actions)
    listed = kioku("list", "--kind", "knowledge", "--json")
    assert listed.json() == []
    text = kioku("consolidate", "--dry-run", "--now", MORNING.isoformat())
    assert text.code == 0, text.err
    assert "dry run, nothing written" in text.out
    assert "why:" in text.out


def test_run_once_then_up_to_date(stored: Path, kioku: Run) -> None:
    done = kioku("consolidate", "--now", MORNING.isoformat())
    assert done.code == 0, done.err
    assert "daily" in done.out
    assert "add_knowledge" in done.out
    assert "add_procedure" in done.out
    assert "supersede" in done.out
    again = kioku("consolidate", "--now", MORNING.isoformat(), "--json")
    assert again.code == 0, again.err
    assert again.json()["status"] == "up_to_date"
    knowledge = kioku("list", "--kind", "knowledge", "--json").json()
    texts = sorted(m["content"] for m in knowledge)
    assert texts.count("Ken moved to Tokyo last month.") == 1
    tokyo = next(m for m in knowledge if m["content"] == "Ken moved to Tokyo last month.")
    shown = kioku("show", tokyo["id"])
    assert shown.code == 0, shown.err
    assert "replaces" in shown.out
    assert "Ken lives in Osaka." in shown.out
    assert "which held until" in shown.out
    as_json = kioku("show", tokyo["id"], "--json").json()
    assert as_json["history"]["replaces"]["text"] == "My colleague Ken lives in Osaka."
    stats = kioku("stats", "--json")
    assert stats.code == 0, stats.err
    life = stats.json()["lifecycle"]
    assert life["policy"] == "retention"
    assert life["superseded_knowledge"] == 1
    assert life["consolidation"]["daily"]["period"] == MORNING.date().isoformat()
    assert "consolidate" in next(iter(life["lifecycle_log_per_day"].values()))
    assert "consolidation" in kioku("stats").out


def test_weekly_and_monthly_run_by_hand_once(stored: Path, kioku: Run) -> None:
    weekly = kioku("consolidate", "--weekly", "--now", MORNING.isoformat(), "--json")
    assert weekly.code == 0, weekly.err
    assert [p["level"] for p in weekly.json()["periods"]] == ["weekly"]
    assert weekly.json()["periods"][0]["period"] == "2026-W10"
    monthly = kioku("consolidate", "--monthly", "--now", MORNING.isoformat(), "--json")
    assert [p["period"] for p in monthly.json()["periods"]] == ["2026-03"]
    for level in ("--weekly", "--monthly"):
        again = kioku("consolidate", level, "--now", MORNING.isoformat(), "--json")
        assert again.json()["status"] == "up_to_date", level


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--now", "yesterday-ish"], "--now"),
        (["--now", "2026-13-45T00:00:00"], "--now"),
        (["--hourly"], "--hourly"),
        (["--now", "2099-01-01T00:00:00"], "--force"),  # forgetting by days not yet passed
    ],
)
def test_bad_input_is_refused_with_exit_2(
    stored: Path, kioku: Run, args: list[str], says: str
) -> None:
    result = kioku("consolidate", *args)
    assert result.code == 2, result
    assert says in result.err
    assert "Traceback" not in result.err
    assert kioku("list", "--kind", "knowledge", "--json").json() == []
