"""The examples of the memory tool and of function calling run offline and do what they say."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, tmp_path: Path) -> str:
    # HOME points at an empty directory: the example must not need (or touch) ~/.kioku.
    env = {**os.environ, "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    env = {k: v for k, v in env.items() if not k.startswith("KIOKU_")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == [], "the example left files behind"
    return done.stdout


def test_the_memory_tool_example(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    out = run_example("anthropic_memory_tool.py", tmp_path)
    assert "model > memory create /memories/knowledge/staging database.md" in out
    assert "kioku <      1\tThe staging database is db-stg-3 (PostgreSQL 16)." in out
    assert "kioku ! path '/memories/../../etc/passwd' is refused" in out
    assert (
        "knowledge 'staging database': 'The staging database is db-stg-3 (PostgreSQL 16).'" in out
    )
    assert "steps: ['run the tests', 'tag the release', 'push the tag']" in out
    assert "profile   'Aiko': 'residence: Osaka'" in out
    assert "search 'staging database' -> knowledge mem_" in out


def test_the_function_calling_example(tmp_path: Path) -> None:
    pytest.importorskip("openai")
    out = run_example("openai_tools.py", tmp_path)
    assert "tools offered: search_memory, read_memory, prime, explain, write_memory" in out
    assert ": 'The release train leaves on Thursdays.'" in out
    assert "kioku < stored procedure mem_" in out
    assert "model: The release train leaves on Thursdays; noted the steps." in out
    assert "procedures kept: ['ship a release']" in out
