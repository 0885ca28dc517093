"""simulate: the batch replayed on a throwaway store, with its checks."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests.cli.conftest import Run, clean_env


def test_json_is_a_list_of_days_that_pass_every_check(kioku: Run, home: Path) -> None:
    result = kioku("simulate", "--days", "8", "--per-day", "20", "--seed", "5", "--json")
    assert result.code == 0, result.err
    days = result.json()
    assert isinstance(days, list)
    assert [d["day"] for d in days] == list(range(1, 9))
    assert all(d["ok"] for d in days)
    assert [c["name"] for c in days[0]["checks"]] == ["ratios", "protected", "log"]
    last = days[-1]
    assert last["memories"] == 160
    assert sum(v["count"] for v in last["levels"].values()) == last["non_protected"]
    assert last["levels"]["1"]["target"] == 0.15
    assert set(last["transitions"]) >= {"compressed_1_2", "compressed_2_3", "archived", "revived"}
    assert not home.exists()  # the real home is never touched


def test_text_has_a_table_and_a_summary(kioku: Run) -> None:
    result = kioku("simulate", "--days", "6", "--per-day", "10", "--every", "2")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("DAY"))
    rows = [line for line in lines[header + 1 :] if line[:1].isdigit()]
    assert [row.split()[0] for row in rows] == ["2", "4", "6"]
    assert "passed after all 6 batches" in result.out
    assert "simulated 6 day(s) (synthetic, seed 0): 60 memories added" in result.out
    assert result.err == ""  # no progress bar when stderr is not a terminal


def test_from_store_leaves_the_store_as_it_was(kioku: Run) -> None:
    for n in range(5):
        kioku("add", "--trigger", f"t{n}", "--content", "c", "--intensity", "40",
              "--category", "work")  # fmt: skip
    before = kioku("stats", "--json").json()
    result = kioku("simulate", "--from-store", "--days", "30", "--json")
    assert result.code == 0, result.err
    days = result.json()
    assert days[0]["added"] == 0
    assert days[-1]["memories"] == 5
    assert days[-1]["levels"]["1"]["count"] == 0  # work memories at 40 fade within a month
    after = kioku("stats", "--json").json()
    assert after["by_level"] == before["by_level"] == {"1": 5, "2": 0, "3": 0, "4": 0}
    assert after["batch"]["last_day"] is None
    assert kioku("log", "--json").json() == []


def test_plot_without_matplotlib_names_the_extra(kioku: Run, tmp_path: Path) -> None:
    hidden = tmp_path / "no-matplotlib"
    (hidden / "matplotlib").mkdir(parents=True)
    (hidden / "matplotlib" / "__init__.py").write_text("raise ImportError('hidden for a test')\n")
    path = os.pathsep.join([str(hidden), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    result = kioku(
        "simulate", "--days", "2", "--plot", str(tmp_path / "out.png"),
        env=clean_env(PYTHONPATH=path),
    )  # fmt: skip
    assert result.code == 2
    assert 'pip install "kioku[plot]"' in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert not (tmp_path / "out.png").exists()


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs kioku[plot]")
def test_plot_writes_a_png(kioku: Run, tmp_path: Path) -> None:
    target = tmp_path / "levels.png"
    result = kioku("simulate", "--days", "5", "--per-day", "30", "--plot", str(target))
    assert result.code == 0, result.err
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot written to {target}" in result.out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--days", "0"), "--days"),
        (("--per-day", "-1"), "--per-day"),
        (("--plot", "/nonexistent-dir/x.png"), "--plot"),
    ],
)
def test_bad_input_exits_2(kioku: Run, args: tuple[str, ...], needle: str) -> None:
    result = kioku("simulate", *args)
    if "--plot" in args and importlib.util.find_spec("matplotlib") is None:
        assert result.code == 2  # the missing extra is reported first
        return
    assert result.code == 2
    assert needle in result.err


def test_from_store_without_a_store_creates_nothing(kioku: Run, home: Path) -> None:
    result = kioku("simulate", "--from-store", "--days", "2")
    assert result.code == 1
    assert "no store" in result.err
    assert not home.exists()
