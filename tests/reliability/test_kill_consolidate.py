"""SIGKILL at random moments of ``kioku consolidate`` while ten days of consolidation catch up.

A store with a first daily run behind it and ten more days of episodes (facts, changes of
fact, procedures, small talk, in English and Japanese) is copied twice (on PostgreSQL,
leaner: four days, built twice alike in two schemas, with ids from a seeded generator).
The reference copy is consolidated in one uninterrupted run. The other is consolidated by
``kioku consolidate`` processes, each killed with SIGKILL a random delay (seeded) after it
has recorded its first period. After every kill the store passes its integrity check, the
periods recorded are the first ones of the reference in order, and the store holds exactly
what the reference made in those periods: the same knowledge and procedure ids and the same
lifecycle log rows, none of the next period. A final run completes the catch-up, and the
store then equals the reference row for row; running it again changes nothing.
"""

from __future__ import annotations

import json
import random
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from tests.cli.conftest import run_kioku
from tests.reliability.support import Place, integrity, kioku_argv, scale
from tests.reliability.support import rows as query_rows

TZ = ZoneInfo("Asia/Tokyo")
DAY0 = datetime(2026, 2, 1, 3, 0, tzinfo=TZ)
#: Days, turns a day and kills per store (PostgreSQL leaner: the suite's time is shared).
DAYS = {"sqlite": 10, "postgres": 4}
PER_DAY = {"sqlite": 40, "postgres": 16}
KILLS = {"sqlite": 5, "postgres": 2}
PEOPLE = ["Ken", "Mia", "Sora", "Lena", "Omar", "Yui", "Theo", "Nina"]
CITIES = ["Osaka", "Tokyo", "Kyoto", "Sapporo", "Fukuoka", "Nagoya"]
TOOLS = ["PostgreSQL", "Redis", "Kafka", "SQLite", "Grafana"]

Rows = list[tuple[object, ...]]


def _turn(rng: random.Random, n: int) -> tuple[str, str]:
    kind = n % 8
    person, city = rng.choice(PEOPLE), rng.choice(CITIES)
    if kind == 0:
        return f"{person} lives in {city}.", "Noted."
    if kind == 1:
        return f"{person} moved to {city} last month.", "Thanks for telling me."
    if kind == 2:
        return f"We decided to use {rng.choice(TOOLS)} for service {n % 13}.", "Good."
    if kind == 3:
        step = rng.choice(TOOLS).lower()
        return (
            f"To deploy service {n % 5}: 1. run make test 2. build {step} 3. push the image",
            "Got it.",
        )
    if kind == 4:
        return (
            f"プロジェクト{n % 6}の担当は{rng.choice(['田中', '佐藤', '鈴木'])}さんです。",
            "了解です。",
        )
    if kind == 5:
        return f"{person}さんは{rng.choice(['京都', '東京', '大阪'])}に住んでいます。", "なるほど。"
    if kind == 6:
        return "I had ramen for lunch today, it was great.", "Sounds good!"
    return f"The {rng.choice(TOOLS)} cluster is still unresolved.", "I will keep an eye on it."


@contextmanager
def _seeded_ids(seed: int) -> Iterator[None]:
    """Memory ids drawn from a seeded generator instead of ``secrets``, so that two stores
    built alike hold the same ids (the episodes' ids are random)."""
    rng = random.Random(seed)
    drawn = secrets.token_hex
    secrets.token_hex = lambda n=None: f"{rng.getrandbits(8 * (n or 32)):0{2 * (n or 32)}x}"
    try:
        yield
    finally:
        secrets.token_hex = drawn


def build(place: Place) -> None:
    """A first daily run on DAY0, then DAYS days of PER_DAY turns each."""
    rng = random.Random(5)
    clock = FixedClock(DAY0)
    with _seeded_ids(7), Kioku.open(place.home, env=place.settings, clock=clock) as k:
        k.consolidate(now=DAY0)
        n = 0
        for day in range(DAYS[place.backend]):
            for i in range(PER_DAY[place.backend]):
                at = DAY0 + timedelta(days=day, hours=7, minutes=10 * i)
                clock.advance(at - clock.now())
                user, assistant = _turn(rng, n)
                k.remember_turn(user, assistant, at=at, session_id=f"s{day}")
                n += 1


def _rows(place: Place) -> tuple[Rows, Rows, Rows]:
    """Knowledge and procedures, recorded periods, and the consolidation's log rows."""
    items = query_rows(
        place,
        "SELECT id, kind, content, details, archived_at, low_since_utc FROM memories "
        "WHERE kind IN ('knowledge', 'procedure') ORDER BY id",
    )
    runs = query_rows(place, "SELECT kind, period FROM consolidation_runs ORDER BY seq")
    log = query_rows(
        place,
        "SELECT batch_day, event, memory_id, details FROM lifecycle_log "
        "ORDER BY batch_day, event, memory_id, details",
    )
    return items, runs, log


def _periods(place: Place) -> list[str]:
    return [str(r[0]) for r in query_rows(place, "SELECT period FROM consolidation_runs")]


def _run_until_a_period_commits(place: Place, final: datetime, delay: float) -> bool:
    """Start a catch-up; SIGKILL it ``delay`` seconds after its first period is recorded.
    True if it was killed, False if it finished first."""
    db = place
    before = len(_periods(db))
    proc = subprocess.Popen(  # output unread until the end: sent nowhere, it never blocks
        kioku_argv(place.home, "consolidate", "--now", final.isoformat()),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=place.env(),
    )
    while proc.poll() is None and len(_periods(db)) == before:
        time.sleep(0.02)
    deadline = time.monotonic() + delay
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        return True
    _, err = proc.communicate()
    assert proc.returncode == 0, err
    return False


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_sigkill_during_consolidation_applies_each_period_whole_or_not_at_all(
    tmp_path: Path, place: Place, record_property: Callable[[str, object], None]
) -> None:
    reference = place.at(tmp_path / "reference", "reference")
    killed = place.at(tmp_path / "killed", "killed")
    if place.url:  # two schemas built alike (seeded ids)
        build(reference)
        build(killed)
    else:  # one file, copied
        base = place.at(tmp_path / "base", "base")
        build(base)
        shutil.copytree(base.home, reference.home)
        shutil.copytree(base.home, killed.home)
    days_built = DAYS[place.backend]
    final = DAY0 + timedelta(days=days_built, hours=1)
    with Kioku.open(reference.home, env=reference.settings, clock=FixedClock(final)) as k:
        done = k.consolidate(now=final)
    assert done.status == "done"
    order = [p.period for p in done.periods]
    assert len(order) >= days_built
    want_items, want_runs, want_log = _rows(reference)
    made_in: dict[str, str] = {}
    for batch_day, event, memory_id, _ in want_log:
        if event == "consolidate":
            made_in.setdefault(str(memory_id), str(batch_day))

    db = killed
    rng = random.Random(17)
    kills = 0
    for _ in range(KILLS[place.backend] * scale()):
        if not _run_until_a_period_commits(killed, final, rng.uniform(0.0, 0.25)):
            break
        kills += 1
        assert integrity(db) == "ok"
        periods = _periods(db)
        recorded = [p for p in order if p in periods]
        assert recorded == order[: len(recorded)], "periods are applied in order"
        days = {p[:10] for p in periods} | {DAY0.date().isoformat()}
        items, _, log = _rows(db)
        assert log == [row for row in want_log if str(row[0]) in days]
        assert {str(r[0]) for r in items} == {mid for mid, day in made_in.items() if day in days}
        if len(recorded) == len(order):
            break
    assert kills >= 1

    home, env = str(killed.home), killed.env()
    again = run_kioku("--home", home, "consolidate", "--now", final.isoformat(), "--json", env=env)
    assert again.code == 0, again.err
    assert integrity(db) == "ok"
    assert _rows(db) == (want_items, want_runs, want_log)
    once_more = run_kioku(
        "--home", home, "consolidate", "--now", final.isoformat(), "--json", env=env
    )
    assert once_more.code == 0, once_more.err
    assert json.loads(once_more.out)["status"] == "up_to_date"
    assert _rows(db) == (want_items, want_runs, want_log)
    record_property(
        "reliability",
        {
            "store": place.backend,
            "episodes": days_built * PER_DAY[place.backend],
            "periods": len(order),
            "kills": kills,
        },
    )
