"""init, stats, doctor, backup, config — and the conventions every command follows."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import click
import pytest

from kioku.interfaces.cli.main import LazyGroup, cli
from tests.cli.conftest import Run, clean_env, run_kioku


def _all_commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [prefix]
    found = group.all_commands() if isinstance(group, LazyGroup) else group.commands
    for name, command in found.items():
        if isinstance(command, click.Group):
            out.extend(_all_commands(command, (*prefix, name)))
        else:
            out.append((*prefix, name))
    return out


@pytest.mark.parametrize("path", _all_commands(cli))
def test_help_everywhere(path: tuple[str, ...]) -> None:
    result = run_kioku(*path, "--help")
    assert result.code == 0
    assert "Usage:" in result.out


def test_init_creates_owner_only_files_and_is_idempotent(kioku: Run, home: Path) -> None:
    first = kioku("init", "--json")
    assert first.code == 0, first.err
    assert first.json()["created_config"] is True
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "config.toml").stat().st_mode) == 0o600
    assert stat.S_IMODE((home / "memories.db").stat().st_mode) == 0o600
    second = kioku("init", "--json")
    assert second.json()["created_config"] is False
    assert kioku("config", "check").code == 0


def test_stats_counts(kioku: Run) -> None:
    kioku("add", "--trigger", "t", "--content", "c", "--intensity", "40", "--category", "work")
    kioku(
        "add", "--trigger", "t", "--content", "c", "--intensity", "90",
        "--category", "emotional", "--protected",
    )  # fmt: skip
    data = kioku("stats", "--json").json()
    assert data["total"] == 2
    assert data["by_level"] == {"1": 2, "2": 0, "3": 0, "4": 0}
    assert data["by_category"] == {"emotional": 1, "work": 1}
    assert data["protected"] == 1
    assert data["max_protected"] == 50
    assert data["database"]["size_bytes"] > 0
    assert "by category" in kioku("stats").out


def test_doctor_ok_then_reports_loose_permissions(kioku: Run, home: Path) -> None:
    kioku("init")
    ok = kioku("doctor", "--json")
    assert ok.code == 0, ok.out
    assert ok.json()["ok"] is True
    os.chmod(home / "memories.db", 0o644)
    bad = kioku("doctor")
    assert bad.code == 1
    assert "chmod" in bad.out


def test_doctor_reports_a_damaged_vector_cache_file(kioku: Run, home: Path) -> None:
    added = kioku(
        *("add", "--trigger", "Tea or coffee?", "--content", "Green tea"),
        *("--intensity", "50", "--category", "casual"),
    )
    assert added.code == 0, added.err
    assert kioku("recall", "green tea").code == 0  # the search writes the cache file
    [cache] = (home / "memories.db.vectors").glob("*.vec")
    assert kioku("doctor").code == 0
    data = bytearray(cache.read_bytes())
    data[len(data) // 4] ^= 0x01  # inside the matrix, which searches do not check
    cache.write_bytes(bytes(data))
    bad = kioku("doctor")
    assert bad.code == 1
    assert str(cache) in bad.out
    assert "fix: delete it" in bad.out
    cache.unlink()
    assert kioku("doctor").code == 0


def test_doctor_on_a_missing_home(kioku: Run) -> None:
    result = kioku("doctor")
    assert result.code == 1
    assert "kioku init" in result.out


def test_corrupt_database_is_a_clear_runtime_error(kioku: Run, home: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "memories.db").write_text("this is not a database\n" * 100)
    result = kioku("stats")
    assert result.code == 1
    assert "memories.db" in result.err
    assert "backup" in result.err
    assert "Traceback" not in result.err


def test_locked_database_is_a_clear_runtime_error(kioku: Run, home: Path) -> None:
    kioku("init")
    holder = sqlite3.connect(home / "memories.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        env = clean_env(KIOKU_STORE__BUSY_TIMEOUT_MS="200")
        result = kioku(
            "add", "--trigger", "t", "--content", "c", "--intensity", "10",
            "--category", "casual", env=env,
        )  # fmt: skip
    finally:
        holder.rollback()
        holder.close()
    assert result.code == 1
    assert "lock" in result.err
    assert kioku("stats", "--json").json()["total"] == 0


def test_backup_is_a_consistent_owner_only_copy(kioku: Run, home: Path, tmp_path: Path) -> None:
    kioku("add", "--trigger", "t", "--content", "c", "--intensity", "40", "--category", "work")
    target = tmp_path / "copy.db"
    result = kioku("backup", str(target), "--json")
    assert result.code == 0, result.err
    assert result.json()["memories"] == 1
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    again = kioku("backup", str(target))
    assert again.code == 2
    assert "--force" in again.err
    assert kioku("backup", str(target), "--force").code == 0
    restored = run_kioku("--home", str(tmp_path / "restored"), "init")
    assert restored.code == 0
    (tmp_path / "restored" / "memories.db").unlink()
    target.rename(tmp_path / "restored" / "memories.db")
    listed = run_kioku("--home", str(tmp_path / "restored"), "list", "--json")
    assert [m["trigger"] for m in listed.json()] == ["t"]


def test_backup_into_a_directory(kioku: Run, tmp_path: Path) -> None:
    kioku("init")
    out_dir = tmp_path / "backups"
    out_dir.mkdir()
    result = kioku("backup", str(out_dir), "--json")
    assert result.code == 0
    assert Path(result.json()["path"]).parent == out_dir


def test_config_show_reports_sources(kioku: Run, home: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text("[levels]\nlevel1_threshold = 60\n")
    env = clean_env(KIOKU_RETRIEVAL__TOP_K="7")
    data = kioku("config", "show", "--json", env=env).json()
    assert data["config"]["levels"]["level1_threshold"] == 60
    assert data["sources"]["levels.level1_threshold"].startswith("file:")
    assert data["config"]["retrieval"]["top_k"] == 7
    assert data["sources"]["retrieval.top_k"] == "env:KIOKU_RETRIEVAL__TOP_K"
    assert data["sources"]["levels.level2_threshold"] == "default"
    text = kioku("config", "show", env=env).out
    assert "levels.level1_threshold = 60" in text


def test_invalid_config_fails_every_command_with_exit_2(kioku: Run, home: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text("[retention.decay_by_category.work]\nmin = 0.85\nmax = 1.2\n")
    for args in (("config", "check"), ("stats",), ("list",)):
        result = kioku(*args)
        assert result.code == 2, args
        assert "retention.decay_by_category.work.max" in result.err
        assert "1.2" in result.err
    assert not (home / "memories.db").exists()


def test_config_check_on_an_explicit_json_file(kioku: Run, tmp_path: Path) -> None:
    good = tmp_path / "config.json"
    good.write_text('{"version": "1.0.0", "levels": {"level1_threshold": 55}}')
    assert kioku("config", "check", str(good)).code == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"compression": {"level1_ratio": 0.5}}')
    result = kioku("config", "check", str(bad))
    assert result.code == 2
    assert "ratio" in result.err


def test_version_and_module_entry_point() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "--version"],
        capture_output=True,
        text=True,
        env=clean_env(),
        check=False,
    )
    assert proc.returncode == 0
    assert "kioku" in proc.stdout


def test_cli_reference_is_up_to_date() -> None:
    script = Path(__file__).resolve().parents[2] / "scripts" / "cli_docs.py"
    proc = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr


def test_config_show_never_prints_an_api_key(kioku: Run, home: Path) -> None:
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text('[llm]\napi_key = "sk-secret-123"\n')
    for args in (("config", "show"), ("config", "show", "--json")):
        result = kioku(*args)
        assert result.code == 0, result.err
        assert "sk-secret-123" not in result.out + result.err
        assert "***" in result.out
