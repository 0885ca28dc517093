"""Opening a second store on a home keeps the lock SQLite holds on the database file.

POSIX drops every lock a process holds on a file when any descriptor of that file is closed.
A store that opened and closed ``memories.db`` beside a connection already open in the same
process (the HTTP server's services of several owners, a daemon, a second ``Kioku``) would
leave that connection without its shared lock, and another process closing its last
connection could then checkpoint and remove the write-ahead log under it. A second process
probes the lock bytes SQLite uses (its shared range starts at 0x40000002 and spans 510
bytes): while a store is open they must be taken.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kioku import Kioku

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX advisory locks")

_PROBE = r"""
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 510, 0x40000002, 0)
except OSError:
    print("held")
else:
    fcntl.lockf(fd, fcntl.LOCK_UN, 510, 0x40000002, 0)
    print("free")
"""


def _probe(db: Path) -> str:
    """What another process finds on the database file's shared lock range."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(db)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_a_second_store_in_the_process_keeps_the_first_ones_lock(tmp_path: Path) -> None:
    env = {"KIOKU_NO_AUTO_BATCH": "1"}
    db = tmp_path / "memories.db"
    with Kioku.open(tmp_path, env=env) as first:
        first.remember("the red kettle", "it whistles at dawn", intensity=40, category="casual")
        first.recall("kettle")
        assert _probe(db) == "held"
        with Kioku.open(tmp_path, env=env) as second:
            second.recall("kettle")
            assert _probe(db) == "held"
        assert _probe(db) == "held"  # the first store is still open
        assert [m.trigger for m in first.list()] == ["the red kettle"]
    assert _probe(db) == "free"  # every store closed: nothing holds it
