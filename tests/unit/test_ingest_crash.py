"""A process killed while remembering turns leaves a store where every turn is whole or absent.

A real child process remembers turns (some of which teach the speaker's profile) and is killed
with SIGKILL at varying moments; the store is then opened afresh and checked: SQLite's and the
lexical index's integrity, and for every episode its activity line, its entry in the vector
change log, and nothing of a turn that is not there.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kioku.adapters.store.sqlite import open_sqlite_store

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

_CHILD = r"""
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from kioku import Kioku
home, start = Path(sys.argv[1]), int(sys.argv[2])
base = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
with Kioku.open(home, user_id="ann", env={}) as kioku:
    for i in range(start, start + 10_000):
        at = base + timedelta(minutes=i)
        text = (
            f"Ann: I love topic {i} and my dog Rex." if i % 3 == 0
            else f"Ann: turn {i} was about the garden, the weather and Bob."
        )
        kioku.remember_turn(text, f"reply {i}", at=at, session_id=f"s{i // 20}",
                            source_ids=[f"t{i}"], source_timestamps=[at])
        print(i, flush=True)
"""


def _remember_until_killed(home: Path, start: int, delay: float) -> int:
    """Start remembering at turn ``start``, kill the process ``delay`` seconds after its
    first turn is stored; the number of turns it reported stored."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(home), str(start)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    reported = [child.stdout.readline()]
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    reported += child.stdout.read().split()
    child.wait()
    return len([line for line in reported if line.strip()])


def test_killed_while_remembering_every_turn_is_whole_or_absent(tmp_path: Path) -> None:
    home = tmp_path / "home"
    start = 0
    for delay in (0.0, 0.013, 0.031, 0.057, 0.12):
        start += _remember_until_killed(home, start, delay) + 2

    store = open_sqlite_store(home / "memories.db")
    try:
        report = store.check_integrity()
        assert report.ok, report.problems
    finally:
        store.close()
    conn = sqlite3.connect(home / "memories.db")
    try:
        episodes = {
            str(memory_id)
            for (memory_id,) in conn.execute("SELECT id FROM memories WHERE kind = 'episode'")
        }
        assert len(episodes) >= 5
        logged = {
            str(memory_id)
            for (memory_id,) in conn.execute(
                "SELECT am.memory_id FROM activity_memories am "
                "JOIN activity a ON a.seq = am.seq WHERE a.type = 'message_received'"
            )
        }
        assert logged == episodes
        in_vector_log = {
            str(memory_id) for (memory_id,) in conn.execute("SELECT memory_id FROM vector_log")
        }
        assert episodes <= in_vector_log
        indexed = {str(m) for (m,) in conn.execute("SELECT memory_id FROM memories_fts")}
        all_ids = {str(m) for (m,) in conn.execute("SELECT id FROM memories")}
        assert indexed == all_ids
        last = conn.execute("SELECT version FROM vector_log ORDER BY seq DESC LIMIT 1").fetchone()
        state = conn.execute("SELECT value FROM state WHERE key = 'vectors_version'").fetchone()
        assert int(state[0]) == int(last[0])
        profile = conn.execute(
            "SELECT details FROM memories WHERE kind = 'profile' AND user_id = 'ann'"
        ).fetchall()
        assert len(profile) == 1
        details = json.loads(profile[0][0])
        sources = {s for item in details["facts"] + details["preferences"] for s in item["sources"]}
        assert sources
        assert sources <= episodes
    finally:
        conn.close()
