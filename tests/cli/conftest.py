"""Run the real ``kioku`` command in a subprocess, on a home under ``tmp_path``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli import forker


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Run = Callable[..., Result]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without KIOKU_* settings, in Tokyo time, with the background batch
    trigger off (pass KIOKU_NO_AUTO_BATCH="" to turn it on)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")}
    env["TZ"] = "Asia/Tokyo"
    env["KIOKU_NO_AUTO_BATCH"] = "1"
    env["KIOKU_NO_DAEMON"] = "1"  # hooks answer in process unless a test starts a daemon
    env.update(extra)
    return env


def run_kioku(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> Result:
    """``python -m kioku ARGS`` in a process of its own (forked from a process that has
    imported kioku already where that shows the same, see tests/cli/forker.py)."""
    env = env or clean_env()
    base = clean_env()
    if forker.usable(args, env, base):
        done = forker.run(args, env, base, timeout)
        if done is not None:
            return Result(*done)
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def kioku(home: Path) -> Run:
    """``kioku(*args, env=...)`` runs ``kioku --home HOME *args``."""

    def run(*args: str, env: dict[str, str] | None = None) -> Result:
        return run_kioku("--home", str(home), *args, env=env)

    return run


def session_turns(kioku: Run, session: str) -> list[dict[str, Any]]:
    """The memories of ``session`` that ``kioku list --json`` shows; none while the store does
    not exist yet (a hook's background drain creates it)."""
    listed = kioku("list", "--json")
    if listed.code == 2 and "no kioku store" in listed.err:
        return []
    assert listed.code == 0, listed.err
    memories: list[dict[str, Any]] = listed.json()
    return [m for m in memories if m.get("session_id") == session]
