"""SIGKILL at random moments of ``kioku import``: nothing lost, nothing doubled, resumable.

A large JSONL file is imported by ``kioku import`` processes killed with SIGKILL, on SQLite
and on PostgreSQL. Each one is killed a random delay (from a seeded RNG) after it has stored
its first new line, so every kill lands while lines are being written. After each kill the
store passes its integrity check (``PRAGMA integrity_check`` on SQLite, the store's own on
PostgreSQL), holds only lines of the file, each at most once, and still holds every line
stored before. Re-running the import then completes it: every line exactly once.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import run_kioku
from tests.reliability.support import (
    Place,
    count,
    integrity,
    kioku_argv,
    scale,
    source_id_counts,
    start,
)

#: Lines and kills per store (PostgreSQL leaner: the suite's time is shared).
LINES = {"sqlite": 1600, "postgres": 240}
KILLS = {"sqlite": 8, "postgres": 2}


def _wait_for_progress(proc: subprocess.Popen[str], place: Place, before: int) -> bool:
    """Wait until the import stored a new line (True) or ended (False)."""
    while proc.poll() is None:
        if count(place) > before:
            return True
        time.sleep(0.02)
    return False


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_sigkill_during_import_loses_and_doubles_nothing(
    tmp_path: Path, place: Place, record_property: Callable[[str, object], None]
) -> None:
    home = place.home
    k = scale()
    lines, kills_wanted = LINES[place.backend] * k, KILLS[place.backend] * k
    source = tmp_path / "turns.jsonl"
    rows = [
        {
            "user": f"import line {i}: 昨日の会議で予算の話をした, the budget is tight this year",
            "assistant": "Let us list what can wait until next quarter.",
            "at": f"2026-03-{1 + i % 28:02d}T{10 + i % 12:02d}:{i % 60:02d}:00+09:00",
            "session": f"s{i // 50}",
            "source_id": f"line-{i}",
        }
        for i in range(lines)
    ]
    source.write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8"
    )
    expected = {r["source_id"] for r in rows}
    assert run_kioku("--home", str(home), "init", env=place.env()).code == 0

    rng = random.Random(20260301)
    kills = finished_early = 0
    stored: set[str] = set()
    for _ in range(kills_wanted):
        proc = start(kioku_argv(home, "import", str(source), "--json"), **place.settings)
        if _wait_for_progress(proc, place, len(stored)):
            time.sleep(rng.uniform(0.0, 0.6))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.communicate()
            kills += 1
        else:
            _, err = proc.communicate()
            assert proc.returncode == 0, err
            finished_early += 1
        assert integrity(place) == "ok"
        counts = source_id_counts(place)
        assert set(counts) <= expected, "a line that is not in the file"
        assert max(counts.values(), default=1) == 1, "a line stored twice"
        assert stored <= set(counts), "a stored line was lost"
        stored = set(counts)
        if stored == expected:
            break
    assert kills >= 1

    final = run_kioku("--home", str(home), "import", str(source), "--json", env=place.env())
    assert final.code == 0, final.err
    summary = final.json()
    assert summary["errors"] == []
    assert summary["skipped"] == len(stored)
    assert summary["imported"] == lines - len(stored)
    counts = source_id_counts(place)
    assert set(counts) == expected
    assert set(counts.values()) == {1}
    assert integrity(place) == "ok"
    doctor = run_kioku("--home", str(home), "doctor", "--json", env=place.env())
    assert doctor.code == 0, doctor.out + doctor.err
    assert doctor.json()["ok"] is True

    record_property(
        "reliability",
        {
            "store": place.backend,
            "lines": lines,
            "kills": kills,
            "imports that finished before the kill": finished_early,
            "lines stored before the last run": len(stored),
            "lost": 0,
            "duplicated": 0,
        },
    )
