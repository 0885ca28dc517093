"""examples/langgraph_agent.py runs offline on a home of its own and remembers across threads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langgraph", reason="the langgraph extra is not installed")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_agent.py"


def test_the_agent_answers_in_a_new_thread_from_what_another_thread_said(
    tmp_path: Path,
) -> None:
    home = tmp_path / "kioku"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")}
    env["HOME"] = str(tmp_path / "user-home")  # never the user's ~/.kioku
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--home", str(home)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "[tuesday] agent: You told me: I drink green tea every morning." in lines
    assert "[tuesday] agent: You told me: My cat is called Momo." in lines
    assert "[wednesday] agent: I don't remember anything about that." in lines
    assert "the tuesday thread's own messages: 2" in lines
    assert "namespaces on disk: [('users', 'alice', 'memories')]" in lines
    assert (home / "memories.db").is_file()
    assert not (tmp_path / "user-home" / ".kioku").exists()


def test_the_example_cleans_up_its_temporary_home(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")}
    env["HOME"] = str(tmp_path / "user-home")
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (
        "alice's knowledge in kioku: ['I drink green tea every morning.', 'My cat is called Momo.']"
        in proc.stdout.splitlines()
    )
    assert list((tmp_path / "tmp").iterdir()) == []
    assert not (tmp_path / "user-home" / ".kioku").exists()
