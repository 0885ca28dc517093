"""schedule show/install/uninstall: the files and crontab lines, written under a test HOME.

systemctl and launchctl are never run here (--no-activate, or a PATH without them); crontab is
a fake that keeps the table in a file.
"""

from __future__ import annotations

import os
import plistlib
import shlex
import stat
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Result, clean_env, run_kioku

FAKE_CRONTAB = """#!/bin/sh
TAB='{tab}'
if [ "$1" = "-l" ]; then
  if [ -f "$TAB" ]; then /bin/cat "$TAB"; exit 0; fi
  echo "no crontab for tester" >&2; exit 1
fi
if [ "$1" = "-" ]; then /bin/cat > "$TAB"; exit 0; fi
exit 2
"""


@pytest.fixture
def user_home(tmp_path: Path) -> Path:
    path = tmp_path / "user"
    path.mkdir()
    return path


def _env(user_home: Path, **extra: str) -> dict[str, str]:
    env = clean_env(HOME=str(user_home), **extra)
    env.pop("XDG_CONFIG_HOME", None)
    env.update(extra)
    return env


def _kioku(home: Path, env: dict[str, str], *args: str) -> Result:
    return run_kioku("--home", str(home), "schedule", *args, env=env)


def test_show_prints_the_systemd_units_and_writes_nothing(tmp_path: Path, user_home: Path) -> None:
    home = tmp_path / "my home"
    env = _env(user_home, XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    result = _kioku(home, env, "show", "--method", "systemd")
    assert result.code == 0, result.err
    assert "OnCalendar=*-*-* 03:00:00" in result.out
    assert "Persistent=true" in result.out
    assert f'"-m" "kioku" "--home" "{home}" "batch" "--auto"' in result.out
    assert "systemctl --user enable --now kioku-batch-" in result.out
    assert not (tmp_path / "xdg").exists()
    data = _kioku(home, env, "show", "--method", "systemd", "--hour", "5", "--json").json()
    assert data["hour"] == 5
    assert data["command"] == [os.path.abspath(sys.executable), "-m", "kioku", "--home",
                               str(home), "batch", "--auto"]  # fmt: skip
    paths = [f["path"] for f in data["files"]]
    assert all(p.startswith(str(tmp_path / "xdg" / "systemd" / "user")) for p in paths)


def test_install_and_uninstall_systemd_files_without_activating(
    tmp_path: Path, user_home: Path
) -> None:
    home = tmp_path / "100% $HOME"
    xdg = tmp_path / "xdg"
    env = _env(user_home, XDG_CONFIG_HOME=str(xdg))
    installed = _kioku(home, env, "install", "--method", "systemd", "--no-activate", "--hour", "4")
    assert installed.code == 0, installed.err
    assert "not activated" in installed.out
    units = sorted((xdg / "systemd" / "user").iterdir())
    assert [u.suffix for u in units] == [".service", ".timer"]
    service, timer = (u.read_text() for u in units)
    assert "OnCalendar=*-*-* 04:00:00" in timer
    assert "Persistent=true" in timer
    assert "WantedBy=timers.target" in timer
    exec_line = next(line for line in service.splitlines() if line.startswith("ExecStart="))
    # systemd quoting: "…" with % → %% and $ → $$.
    assert f'"{str(home).replace("%", "%%").replace("$", "$$")}"' in exec_line
    assert "Type=oneshot" in service
    removed = _kioku(home, env, "uninstall", "--method", "systemd", "--no-activate", "--json")
    assert removed.code == 0, removed.err
    assert len(removed.json()["removed"]) == 2
    assert list((xdg / "systemd" / "user").iterdir()) == []
    again = _kioku(home, env, "uninstall", "--method", "systemd", "--no-activate")
    assert "nothing was installed" in again.out


def test_the_default_home_gets_the_plain_unit_name(user_home: Path) -> None:
    env = _env(user_home)
    data = run_kioku("schedule", "show", "--method", "systemd", "--json", env=env).json()
    assert data["name"] == "kioku-batch"
    assert data["files"][0]["path"] == str(user_home / ".config/systemd/user/kioku-batch.service")


def test_launchd_plist(tmp_path: Path, user_home: Path) -> None:
    home = tmp_path / "home"
    env = _env(user_home)
    result = _kioku(home, env, "install", "--method", "launchd", "--no-activate", "--hour", "2")
    assert result.code == 0, result.err
    assert "launchctl load -w" in result.out
    (plist_path,) = (user_home / "Library" / "LaunchAgents").iterdir()
    plist = plistlib.loads(plist_path.read_bytes())
    assert plist["Label"] == plist_path.stem
    assert plist["ProgramArguments"][1:] == [
        "-m", "kioku", "--home", str(home), "batch", "--auto",
    ]  # fmt: skip
    assert plist["StartCalendarInterval"] == {"Hour": 2, "Minute": 0}
    assert plist["StandardOutPath"] == str(home / "batch.log")
    removed = _kioku(home, env, "uninstall", "--method", "launchd", "--no-activate")
    assert removed.code == 0
    assert not plist_path.exists()


def _fake_path(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "crontab"
    fake.write_text(FAKE_CRONTAB.format(tab=bin_dir / "crontab.txt"))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return bin_dir


@pytest.mark.skipif(sys.platform == "darwin", reason="auto means launchd on macOS")
def test_without_systemctl_auto_installs_a_crontab_line_once(
    tmp_path: Path, user_home: Path
) -> None:
    home = tmp_path / "home dir"
    bin_dir = _fake_path(tmp_path)
    tab = bin_dir / "crontab.txt"
    tab.write_text("MAILTO=me\n15 * * * * /usr/bin/true\n")
    env = _env(user_home, PATH=str(bin_dir))
    first = _kioku(home, env, "install", "--json")
    assert first.code == 0, first.err
    assert first.json()["method"] == "cron"
    assert first.json()["activated"] is True
    second = _kioku(home, env, "install", "--hour", "6")
    assert second.code == 0, second.err
    assert "added to your crontab" in second.out
    lines = tab.read_text().splitlines()
    assert lines[:2] == ["MAILTO=me", "15 * * * * /usr/bin/true"]
    entries = [line for line in lines if " kioku " in line and not line.startswith("#")]
    assert len(entries) == 1  # replaced, not added twice
    entry = entries[0]
    assert entry.startswith("0 6 * * * ")
    words = shlex.split(entry.split(" ", 5)[5])
    assert words[1:8] == ["-m", "kioku", "--home", str(home), "batch", "--auto", ">>"]
    removed = _kioku(home, env, "uninstall")
    assert removed.code == 0, removed.err
    assert "removed the entry from your crontab" in removed.out
    assert tab.read_text().splitlines() == ["MAILTO=me", "15 * * * * /usr/bin/true"]


def test_cron_without_crontab_prints_the_line(tmp_path: Path, user_home: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = _env(user_home, PATH=str(empty))
    result = _kioku(tmp_path / "home", env, "install", "--method", "cron")
    assert result.code == 0, result.err
    assert "add these lines to your crontab" in result.out
    assert f"0 3 * * * {sys.executable} -m kioku --home" in result.out


def test_bad_hour_exits_2(user_home: Path) -> None:
    result = run_kioku("schedule", "show", "--hour", "24", env=_env(user_home))
    assert result.code == 2
    assert "--hour" in result.err
