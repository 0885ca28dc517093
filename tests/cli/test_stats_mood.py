"""``kioku stats`` shows the mood balance: per day, the memories primed or recalled by
valence, from the activity log."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from tests.cli.conftest import Run

TOKYO = ZoneInfo("Asia/Tokyo")


def _stock_and_prime(home: Path) -> tuple[str, dict[str, int]]:
    """Memories about a lighthouse, primed once today: the day and the counts expected."""
    now = datetime.now(TOKYO)
    tones = [("positive", 50), ("neutral", 20), ("negative", 85), ("negative", 80)]
    tones += [("negative", 30)]
    with Kioku.open(home, clock=FixedClock(now), env={}) as k:
        for n, (valence, intensity) in enumerate(tones):
            k.remember(
                f"the lighthouse visit {n}",
                f"lighthouse visit number {n}",
                intensity=intensity,
                category="casual",
                valence=valence,
                at=now - timedelta(days=3, hours=n),
            )
        primed = k.prime("How was the lighthouse visit?", session_id="s1")
        shown = [k.get(i) for i in primed.memory_ids]
    expected = {
        "positive": sum(m.emotional_valence.value == "positive" for m in shown),
        "neutral": sum(m.emotional_valence.value == "neutral" for m in shown),
        "negative": sum(m.emotional_valence.value == "negative" for m in shown),
        "negative_high_intensity": sum(
            m.emotional_valence.value == "negative" and m.emotional_intensity >= 61 for m in shown
        ),
    }
    return now.date().isoformat(), expected


def test_stats_shows_the_mood_balance_per_day(kioku: Run, home: Path) -> None:
    today, expected = _stock_and_prime(home)
    assert expected["negative_high_intensity"] == 2
    assert sum(expected.values()) > expected["negative_high_intensity"] + 2
    data = kioku("stats", "--json", "--days", "3").json()
    mood = data["mood_balance"]
    assert [d["day"] for d in mood["days"]][-1] == today
    assert len(mood["days"]) == 3
    last = mood["days"][-1]
    assert {key: last[key] for key in expected} == expected
    total = expected["positive"] + expected["neutral"] + expected["negative"]
    assert last["total"] == total
    assert last["negative_share"] == round(expected["negative"] / total, 4)
    assert mood["days"][0]["total"] == 0
    assert mood["days"][0]["negative_share"] is None
    assert (mood["high_intensity"], mood["limiter"], mood["shift"]) == (61, True, False)

    text = kioku("stats", "--days", "2")
    assert text.code == 0, text.err
    assert "mood balance" in text.out
    row = next(line for line in text.out.splitlines() if line.startswith(today))
    assert row.split()[1:5] == [
        str(expected[k]) for k in ("positive", "neutral", "negative", "negative_high_intensity")
    ]
    assert f"{expected['negative'] / total:.0%}" in row
    assert "at most 30% negative intense in 10 in a row; mood shift off" in text.out


def test_stats_refuses_a_bad_number_of_days(kioku: Run) -> None:
    bad = kioku("stats", "--days", "0")
    assert bad.code == 2
    assert "--days" in bad.err
    assert "1<=x<=366" in bad.err


def test_recall_reports_the_limiter_and_takes_the_mood_shift(kioku: Run, home: Path) -> None:
    """``kioku recall`` in a low mood: --json lists what the limiter ranked down and whether
    the mood shift applied; --mood-shift turns it on for one call; --explain says both."""
    from tests.unit.test_mood_balance_store import NOW, SESSION, TOPIC, _low_mood, _stock

    clock = FixedClock(NOW)
    with Kioku.open(home, clock=clock, env={}) as k:
        memories = _stock(k)
        for _ in range(4):  # enough primed in a row for the limiter to act
            _low_mood(k, memories["storm"])
            k.prime(f"How is the {TOPIC}?", session_id=SESSION)
        _low_mood(k, memories["storm"])
    query = f"How is the {TOPIC}?"
    plain = kioku("recall", query, "--session", SESSION, "--no-mark", "--json").json()
    assert plain["limited"]
    assert plain["mood_shifted"] is False
    by_id = {m.id: m for m in memories.values()}
    assert all(by_id[i].emotional_intensity >= 61 for i in plain["limited"])
    assert not set(plain["limited"]) & {r["id"] for r in plain["results"]}

    shifted = kioku(
        "recall", query, "--session", SESSION, "--no-mark", "--mood-shift", "--json"
    ).json()
    assert shifted["mood_shifted"] is True
    off = kioku(
        "recall", query, "--session", SESSION, "--no-mark", "--no-mood-shift", "--json"
    ).json()
    assert off["mood_shifted"] is False

    explained = kioku(
        "recall", query, "--session", SESSION, "--no-mark", "--mood-shift", "--explain"
    )
    assert explained.code == 0, explained.err
    assert "mood limiter:" in explained.err
    assert "mood shift:" in explained.err
