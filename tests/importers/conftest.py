"""Run ``kioku`` in this process (its real ``main``, exit codes included) on a home under
``tmp_path``, and copy the importer fixtures with fixed modification times."""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kioku.interfaces.cli.main import main
from tests.cli.conftest import Result

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "importers"
#: The modification time the copied fixtures get (2024-06-01 00:00 UTC).
MTIME = datetime(2024, 6, 1, tzinfo=UTC)


Cli = Callable[..., Result]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def cli(home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    """``cli(*args)`` runs ``kioku --home HOME *args`` in this process."""
    for name in list(os.environ):
        if name.startswith("KIOKU_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("KIOKU_NO_AUTO_BATCH", "1")
    monkeypatch.setenv("KIOKU_NO_DAEMON", "1")

    def run(*args: str) -> Result:
        capsys.readouterr()
        try:
            main(["--home", str(home), *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        else:
            code = 0
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def copy_fixture(name: str, target: Path) -> Path:
    """A copy of fixture ``name`` under ``target``, every file dated MTIME."""
    source = FIXTURES / name
    dest = target / name
    if source.is_dir():
        shutil.copytree(source, dest)
        files = [p for p in dest.rglob("*") if p.is_file()]
    else:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
        files = [dest]
    stamp = MTIME.timestamp()
    for path in files:
        os.utime(path, (stamp, stamp))
    return dest


def mem0_history(target: Path) -> Path:
    """mem0's history database built from the fixture's SQL (mem0's own schema)."""
    path = target / "history.db"
    conn = sqlite3.connect(path)
    try:
        conn.executescript((FIXTURES / "mem0" / "history.sql").read_text(encoding="utf-8"))
    finally:
        conn.close()
    return path
