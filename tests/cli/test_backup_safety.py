"""``kioku backup`` can never hurt the store, and treats its target as ``cp`` would."""

from __future__ import annotations

import os
import re
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from kioku.interfaces.claude_code import daemon_client
from tests.cli.conftest import Run


@pytest.fixture
def stocked(kioku: Run) -> Run:
    for n in range(3):
        done = kioku(
            "add", "--trigger", f"memory {n}", "--content", "c", "--intensity", "40",
            "--category", "work",
        )  # fmt: skip
        assert done.code == 0, done.err
    assert kioku("recall", "memory").code == 0  # the vector cache file exists too
    return kioku


def _total(kioku: Run) -> int:
    return int(kioku("stats", "--json").json()["total"])


def _refused(kioku: Run, target: str | Path) -> None:
    done = kioku("backup", str(target), "--force")
    assert done.code == 2, (done.out, done.err)
    assert "refusing" in done.err
    assert _total(kioku) == 3


@pytest.mark.parametrize(
    "name", ["memories.db", "memories.db-wal", "memories.db-shm", "config.toml"]
)
def test_the_store_files_are_refused_even_with_force(stocked: Run, home: Path, name: str) -> None:
    _refused(stocked, home / name)
    assert stocked("doctor").code == 0


def test_a_relative_or_dotted_path_to_the_store_is_refused(
    stocked: Run, home: Path, tmp_path: Path
) -> None:
    _refused(stocked, home / ".." / home.name / "." / "memories.db")
    _refused(stocked, next((home / "memories.db.vectors").glob("*.vec")))


def test_links_to_the_store_are_refused(stocked: Run, home: Path, tmp_path: Path) -> None:
    soft = tmp_path / "soft.db"
    soft.symlink_to(home / "memories.db")
    _refused(stocked, soft)
    hard = tmp_path / "hard.db"
    os.link(home / "memories.db", hard)
    _refused(stocked, hard)
    linked_home = tmp_path / "linked-home"
    linked_home.symlink_to(home)
    _refused(stocked, linked_home / "memories.db")


@pytest.mark.skipif(not daemon_client.supported(), reason="needs Unix sockets")
def test_refused_while_the_daemon_holds_the_store(stocked: Run, home: Path) -> None:
    assert stocked("daemon", "start").code == 0
    try:
        deadline = time.monotonic() + 30
        while not daemon_client.status(home)["running"]:
            assert time.monotonic() < deadline, "the daemon did not start"
            time.sleep(0.05)
        _refused(stocked, home / "memories.db")
    finally:
        stocked("daemon", "stop")
    assert _total(stocked) == 3
    with sqlite3.connect(home / "memories.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_directory_target_gets_a_dated_file(stocked: Run, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    names = set()
    for given in (str(out), f"{out}/"):
        done = stocked("backup", given, "--json")
        assert done.code == 0, done.err
        made = Path(done.json()["path"])
        assert made.parent == out
        assert re.fullmatch(r"memories-\d{8}-\d{6}(-\d+)?\.db", made.name)
        assert stat.S_IMODE(made.stat().st_mode) == 0o600
        names.add(made.name)
    assert len(names) == 2  # the same second twice: the second name gets a counter


def test_a_missing_directory_is_an_error_and_is_not_created(stocked: Run, tmp_path: Path) -> None:
    trailing = stocked("backup", f"{tmp_path}/newdir/sub/")
    assert trailing.code == 2
    assert "does not exist" in trailing.err
    assert not (tmp_path / "newdir").exists()
    parent = stocked("backup", str(tmp_path / "nonexistent" / "dir" / "x.db"))
    assert parent.code == 2
    assert "does not exist" in parent.err
    assert not (tmp_path / "nonexistent").exists()


def test_force_replaces_an_old_backup_only_with_a_complete_copy(
    stocked: Run, tmp_path: Path
) -> None:
    target = tmp_path / "b.db"
    target.write_bytes(b"an older backup")
    assert stocked("backup", str(target)).code == 2
    assert target.read_bytes() == b"an older backup"
    done = stocked("backup", str(target), "--force", "--json")
    assert done.code == 0, done.err
    with sqlite3.connect(target) as conn:
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 3
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".b.db")] == []


def test_doctor_says_how_many_memories_there_are(kioku: Run) -> None:
    assert kioku("init").code == 0
    done = kioku("doctor")
    assert done.code == 0
    assert "0 in the store" in done.out
    assert "the store holds no memories" in done.out
    checks = {c["name"]: c for c in kioku("doctor", "--json").json()["checks"]}
    assert checks["memories"]["detail"].startswith("0 ")
