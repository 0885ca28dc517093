"""Concurrent writers never collide: distinct ids, every memory stored, a healthy store."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.cli.conftest import clean_env, run_kioku

WRITER = textwrap.dedent(
    """
    import sys
    from kioku import Kioku

    home, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Kioku.open(home) as k:
        for i in range(n):
            k.remember(f"{tag}-{i}", "concurrent", intensity=i % 101, category="work")
    """
)


def _start_writers(home: Path, processes: int, each: int) -> list[subprocess.Popen[bytes]]:
    return [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), f"w{p}", str(each)],
            env=clean_env(),
            stderr=subprocess.PIPE,
        )
        for p in range(processes)
    ]


def test_four_processes_adding_250_each_on_a_brand_new_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    writers = _start_writers(home, 4, 250)
    for proc in writers:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    listed = run_kioku("--home", str(home), "list", "--limit", "5000", "--json").json()
    assert len(listed) == 1000
    assert len({m["id"] for m in listed}) == 1000
    assert {m["trigger"] for m in listed} == {f"w{p}-{i}" for p in range(4) for i in range(250)}
    doctor = run_kioku("--home", str(home), "doctor", "--json")
    assert doctor.code == 0, doctor.out
    assert doctor.json()["ok"] is True


def test_four_cli_loops_at_the_same_time(tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = (
        'for i in $(seq 1 15); do "$0" -m kioku --home "$1" add --trigger "$2-$i" '
        "--content c --intensity 30 --category casual >/dev/null || exit 1; done"
    )
    loops = [
        subprocess.Popen(
            ["bash", "-c", script, sys.executable, str(home), f"loop{p}"], env=clean_env()
        )
        for p in range(4)
    ]
    for proc in loops:
        assert proc.wait(timeout=300) == 0
    stats = run_kioku("--home", str(home), "stats", "--json").json()
    assert stats["total"] == 60
    assert run_kioku("--home", str(home), "doctor").code == 0
