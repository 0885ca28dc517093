"""Crash safety of the batch: SIGKILL at random moments while 20 daily batches catch up.

A 10,000-memory store is copied twice. The reference copy runs the 20 days without
interruption; the other is run by child processes killed at random moments until one finishes.
Afterwards the killed store must pass the integrity check and equal the reference exactly:
same memories (none lost, none duplicated), same numbers and texts, same relations, and the
same lifecycle log rows per day (so every day was applied exactly once).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.model import Embedding, Level, Memory, Valence
from kioku.core.retention import decay_coefficient, level_for_score
from kioku.service.batch import LAST_DAY_KEY

TZ = ZoneInfo("Asia/Tokyo")
DAY0 = datetime(2026, 2, 1, 3, 0, tzinfo=TZ)
DAYS = 20
SIZE = 10_000
CATEGORIES = ("casual", "work", "decision", "emotional")
WORDS = "deploy index query garden river coffee train exam concert travel rain budget".split()

CHILD = """
import sys
from datetime import datetime
from pathlib import Path
from kioku import Kioku
from kioku.adapters.clock import FixedClock
now = datetime.fromisoformat(sys.argv[2])
with Kioku.open(Path(sys.argv[1]), env={}, clock=FixedClock(now)) as k:
    report = k.batch(now=now)
print(report.status, flush=True)
"""


def build(home: Path) -> None:
    rng = random.Random(3)
    np_rng = np.random.default_rng(3)
    with Kioku.open(home, env={}, clock=FixedClock(DAY0)) as k:
        cfg = k.config.retention
        memories = []
        for i in range(SIZE):
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


def dump(home: Path) -> tuple[object, ...]:
    with sqlite3.connect(home / "memories.db") as conn:
        memories = conn.execute(
            "SELECT id, memory_days, retention_score, decay_coefficient, recall_count, "
            "current_level, trigger, content, archived_at, recalled_since_last_batch, "
            "revival_requested, embedding FROM memories ORDER BY id"
        ).fetchall()
        relations = conn.execute(
            "SELECT source_id, target_id, type FROM relations ORDER BY source_id, target_id"
        ).fetchall()
        log = conn.execute(
            "SELECT batch_day, event, memory_id, level_before, level_after, score_before, "
            "score_after, details FROM lifecycle_log ORDER BY batch_day, event, memory_id, details"
        ).fetchall()
    return memories, relations, log


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_sigkill_during_batches_leaves_the_same_store_as_an_uninterrupted_run(
    tmp_path: Path,
) -> None:
    base = tmp_path / "base"
    build(base)
    reference, killed = tmp_path / "reference", tmp_path / "killed"
    shutil.copytree(base, reference)
    shutil.copytree(base, killed)
    final = DAY0 + timedelta(days=DAYS, hours=2)
    with Kioku.open(reference, env={}, clock=FixedClock(final)) as k:
        report = k.batch(now=final)
    assert len(report.days) == DAYS

    rng = random.Random(11)
    env = {**os.environ, "KIOKU_NO_AUTO_BATCH": "1"}
    kills = 0
    for _attempt in range(200):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(killed), final.isoformat()],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        try:
            out, err = child.communicate(timeout=rng.uniform(0.4, 2.5))
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGKILL)
            child.communicate()
            kills += 1
            continue
        assert child.returncode == 0, err.decode()
        if out.decode().split()[0] in ("done", "up_to_date"):
            break
    else:
        pytest.fail("the batch never finished")
    assert kills >= 3, "the kills must land during the work"

    with Kioku.open(killed, env={}) as k:
        report_check = k.check()
        assert report_check.ok, report_check.problems
        assert k.store.get_state(LAST_DAY_KEY) == (DAY0 + timedelta(days=DAYS)).date().isoformat()
    got, want = dump(killed), dump(reference)
    assert len(got[0]) == len(want[0]) == SIZE  # auto-delete is off: nothing erased
    assert got[0] == want[0]
    assert got[1] == want[1]
    assert got[2] == want[2]
    days = {row[0] for row in got[2]}  # type: ignore[union-attr]
    assert len(days) >= DAYS
