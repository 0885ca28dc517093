"""SIGKILL at random moments of ``kioku batch`` while 20 daily batches catch up.

On SQLite a 10,000-memory store is copied twice; on PostgreSQL (leaner: 800 memories, 5
days, 3 kills) two schemas are built the same way. The reference copy runs the 20 days one
at a time without interruption, and its level counts and lifecycle log are kept after every day. The
other copy is caught up by ``kioku batch --now`` processes, each killed with SIGKILL a random
delay (from a seeded RNG) after it has committed its first day, so kills land inside a day's
work. After every kill the store passes its integrity check and is exactly the
reference as of its last applied day: the same lifecycle log rows (none of the next day) and
the same count of memories per level, so a day is either fully applied or not at all. A final
run finishes the catch-up, and the store then equals the reference row for row (memories,
numbers, texts, relations, log); ``kioku doctor``, ``kioku stats`` and ``kioku log`` agree.
"""

from __future__ import annotations

import random
import shutil
import signal
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.model import Embedding, Level, Memory, Valence
from kioku.core.retention import decay_coefficient, level_for_score
from kioku.service.lifecycle.batch import LAST_DAY_KEY
from tests.cli.conftest import run_kioku
from tests.reliability.support import (
    Place,
    integrity,
    kioku_argv,
    level_counts,
    scale,
    start,
    state_value,
)
from tests.reliability.support import rows as query_rows

TZ = ZoneInfo("Asia/Tokyo")
DAY0 = datetime(2026, 2, 1, 3, 0, tzinfo=TZ)
#: Days caught up, memories and kills per store (PostgreSQL leaner: the suite's time is shared).
DAYS = {"sqlite": 20, "postgres": 5}
SIZE = {"sqlite": 10_000, "postgres": 800}
KILLS = {"sqlite": 6, "postgres": 3}
CATEGORIES = ("casual", "work", "decision", "emotional")
WORDS = "deploy index query garden river coffee train exam concert travel rain budget".split()

Rows = list[tuple[object, ...]]


def build(place: Place) -> None:
    """SIZE memories over the 100 days before DAY0 at their spec levels, then one batch."""
    rng = random.Random(3)
    np_rng = np.random.default_rng(3)
    home = place.home
    home.mkdir(mode=0o700, parents=True)
    # The batch alone: consolidation after it has its own kill test (test_kill_consolidate).
    (home / "config.toml").write_text("[consolidation]\nenabled = false\n")
    with Kioku.open(home, env=place.settings, clock=FixedClock(DAY0)) as k:
        cfg = k.config.retention
        memories: list[Memory] = []
        for i in range(SIZE[place.backend]):
            created = DAY0 - timedelta(days=100) + timedelta(minutes=14.4 * i + 1)
            category = rng.choice(CATEGORIES)
            intensity = rng.randint(10, 100)
            coefficient = decay_coefficient(
                category, intensity, cfg.decay_by_category, cfg.base_decay_coefficient
            )
            days = (DAY0 - created).total_seconds() / 86400
            score = intensity * coefficient**days
            level = level_for_score(score, k.config.levels)
            words = rng.sample(WORDS, 5)
            vector = np_rng.standard_normal(64).astype(np.float32)
            if i % 50 == 1:  # a near-duplicate of the one before, so links are made
                last = memories[-1].embedding
                assert last is not None
                vector = np.asarray(last.vector, dtype=np.float32) + 0.01 * vector
            memories.append(
                Memory(
                    id=f"mem_crash_{i:06d}",
                    created=created,
                    trigger=" ".join(words[:3]) + f" talk {i}",
                    content="We went over the " + " and the ".join(words) + ".",
                    emotional_intensity=intensity,
                    emotional_valence=Valence.NEUTRAL,
                    emotional_arousal=40,
                    category=category,
                    decay_coefficient=coefficient,
                    memory_days=days,
                    retention_score=score,
                    current_level=min(level, Level.TRACE),
                    recalled_since_last_batch=rng.random() < 0.02,
                    protected=rng.random() < 0.002,
                    embedding=Embedding(k.embedder.model_id, tuple(vector.tolist())),
                )
            )
        k.store.add_many(memories)
        k.batch(now=DAY0)  # settle: thresholds and ratios once, before the measured days
        assert k.store.get_state(LAST_DAY_KEY) == DAY0.date().isoformat()


def _log(place: Place) -> Rows:
    return query_rows(
        place,
        "SELECT batch_day, event, memory_id, level_before, level_after, score_before, "
        "score_after, details FROM lifecycle_log ORDER BY batch_day, event, memory_id, details",
    )


def dump(place: Place) -> tuple[Rows, Rows, Rows]:
    """Every memory's state, the relations and the lifecycle log, in a stable order."""
    memories = query_rows(
        place,
        "SELECT id, memory_days, retention_score, decay_coefficient, recall_count, "
        "current_level, trigger, content, archived_at, recalled_since_last_batch, "
        "revival_requested, embedding FROM memories ORDER BY id",
    )
    relations = query_rows(
        place, "SELECT source_id, target_id, type FROM relations ORDER BY source_id, target_id"
    )
    return memories, relations, _log(place)


def _reference(place: Place) -> dict[str, dict[int, int]]:
    """Run the DAYS days one at a time; the level counts after each day, by day."""
    levels = {DAY0.date().isoformat(): level_counts(place)}
    for n in range(1, DAYS[place.backend] + 1):
        moment = DAY0 + timedelta(days=n, hours=2)
        with Kioku.open(place.home, env=place.settings, clock=FixedClock(moment)) as k:
            report = k.batch(now=moment)
        assert [d.day for d in report.days] == [moment.date().isoformat()]
        levels[moment.date().isoformat()] = level_counts(place)
    return levels


def _run_until_a_day_commits(place: Place, final: datetime, delay: float) -> bool:
    """Start a catch-up; SIGKILL it ``delay`` seconds after its first day commits.

    True if it was killed, False if it finished first.
    """
    db = place
    before = state_value(db, LAST_DAY_KEY)
    proc = start(
        kioku_argv(place.home, "batch", "--now", final.isoformat(), "--json"), **place.settings
    )
    while proc.poll() is None and state_value(db, LAST_DAY_KEY) == before:
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
def test_sigkill_during_batches_applies_each_day_whole_or_not_at_all(
    tmp_path: Path, place: Place, record_property: Callable[[str, object], None]
) -> None:
    reference = place.at(tmp_path / "reference", "reference")
    killed = place.at(tmp_path / "killed", "killed")
    if place.url:  # two schemas built the same way
        build(reference)
        build(killed)
    else:  # one file, copied
        base = place.at(tmp_path / "base", "base")
        build(base)
        shutil.copytree(base.home, reference.home)
        shutil.copytree(base.home, killed.home)
    days, size = DAYS[place.backend], SIZE[place.backend]
    levels = _reference(reference)
    want = dump(reference)
    final = DAY0 + timedelta(days=days, hours=2)
    last = final.date().isoformat()
    db = killed

    rng = random.Random(11)
    kills = finished_early = 0
    days_at_kill: list[str] = []
    for attempt in range(KILLS[place.backend] * scale()):
        # The first kill comes as soon as a day has committed, so that at least one lands
        # however fast the batch runs (a small store on PostgreSQL runs its days in well
        # under a second); later ones come at random points of the run.
        delay = 0.0 if attempt == 0 else rng.uniform(0.0, 1.2)
        if not _run_until_a_day_commits(killed, final, delay):
            finished_early += 1
            break
        kills += 1
        assert integrity(db) == "ok"
        day = state_value(db, LAST_DAY_KEY)
        assert day is not None
        assert day in levels
        days_at_kill.append(day)
        assert _log(db) == [row for row in want[2] if str(row[0]) <= day], day
        assert level_counts(db) == levels[day], day
        if day == last:
            break
    assert kills >= 1

    env = killed.env()
    home = str(killed.home)
    again = run_kioku("--home", home, "batch", "--now", final.isoformat(), "--json", env=env)
    assert again.code == 0, again.err
    assert again.json()["status"] in ("done", "up_to_date")
    assert state_value(db, LAST_DAY_KEY) == last
    assert integrity(db) == "ok"
    got = dump(db)
    assert len(got[0]) == len(want[0]) == size  # auto-delete is off: nothing erased
    assert got[0] == want[0]
    assert got[1] == want[1]
    assert got[2] == want[2]
    assert len({row[0] for row in got[2]}) >= days

    doctor = run_kioku("--home", home, "doctor", "--json", env=env)
    assert doctor.code == 0, doctor.out + doctor.err
    stats = run_kioku("--home", home, "stats", "--json", env=env)
    assert stats.code == 0, stats.err
    by_level = {int(level): n for level, n in stats.json()["by_level"].items()}
    assert {level: n for level, n in by_level.items() if n} == levels[last]
    logged = run_kioku(
        "--home", home, "log", "--all-scopes", "--limit", "1000000", "--json", env=env
    )
    assert logged.code == 0, logged.err
    assert len(logged.json()) == len(want[2])

    record_property(
        "reliability",
        {
            "store": place.backend,
            "memories": size,
            "days": days,
            "kills": kills,
            "distinct last days at a kill": len(set(days_at_kill)),
            "runs that finished before the kill": finished_early,
            "lost": 0,
            "duplicated": 0,
        },
    )
