"""Every input boundary of the command line checks before it writes: import files, turn
texts, timestamps, duplicates, and a home that does not exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Run, run_kioku

BAD_LINES: list[bytes] = [
    b'{"user": "x", "at": 12345}',
    b'{"user": "x", "at": "9999-12-31T23:59:59"}',
    b'{"user": "x", "at": "0001-01-01T00:00:00"}',
    b'{"user": ""}',
    b'{"user": "x", "session": 123.5}',
    b'{"user": "x", "source_id": {"nested": true}}',
    b'{"user": "x", "assistant": NaN}',
    b'{"user": "\\ud800"}',
    b'{"user": "\xff\xfe"}',
    b'{"user": "x"',
]


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _good(n: int) -> bytes:
    return json.dumps({"user": f"good line {n} about the garden", "source_id": f"g{n}"}).encode()


@pytest.mark.parametrize("bad", BAD_LINES)
def test_one_bad_line_imports_nothing_and_names_the_line(
    kioku: Run, home: Path, tmp_path: Path, bad: bytes
) -> None:
    source = _write(tmp_path / "turns.jsonl", [_good(1), _good(2), bad, _good(4)])
    result = kioku("import", str(source))
    assert result.code == 2, result.err
    assert "internal error" not in result.err
    assert "line 3" in result.err
    assert "nothing was imported" in result.err
    assert "--skip-invalid" in result.err
    assert not (home / "memories.db").exists()  # not even an empty store was created


def test_every_bad_line_is_listed_in_json(kioku: Run, tmp_path: Path) -> None:
    source = _write(tmp_path / "turns.jsonl", [_good(0), *BAD_LINES])
    result = kioku("import", str(source), "--json")
    assert result.code == 2
    data = result.json()
    assert data["imported"] == 0
    assert [i["line"] for i in data["invalid"]] == list(range(2, 2 + len(BAD_LINES)))
    assert all(i["error"].startswith(f"line {i['line']}") for i in data["invalid"])


def test_skip_invalid_imports_the_rest_and_lists_what_was_left(kioku: Run, tmp_path: Path) -> None:
    source = _write(tmp_path / "turns.jsonl", [_good(1), *BAD_LINES, _good(2)])
    result = kioku("import", str(source), "--skip-invalid", "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert (data["imported"], data["skipped"]) == (2, 0)
    assert len(data["invalid"]) == len(BAD_LINES)
    assert "warning: line 2" in result.err
    text = kioku("import", str(source), "--skip-invalid")
    assert text.code == 0
    assert "imported 0, skipped 2 already stored" in text.out
    assert f"{len(BAD_LINES)} invalid line(s) left out" in text.out
    assert kioku("stats", "--json").json()["total"] == 2


def test_bom_crlf_and_blank_lines_import_cleanly(kioku: Run, tmp_path: Path) -> None:
    source = tmp_path / "windows.jsonl"
    source.write_bytes(b"\xef\xbb\xbf" + _good(1) + b"\r\n\r\n   \r\n" + _good(2) + b"\r\n")
    result = kioku("import", str(source), "--json")
    assert result.code == 0, result.err
    assert result.json()["imported"] == 2


def test_import_reads_stdin(home: Path) -> None:
    import subprocess
    import sys

    from tests.cli.conftest import clean_env

    proc = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), "import", "-", "--json"],
        input=_good(1) + b"\n",
        capture_output=True,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["imported"] == 1


def test_the_same_turn_remembered_twice_is_already_known(kioku: Run) -> None:
    args = ("remember", "--user", "I finally fixed the deploy", "--assistant", "Well done!")
    first = kioku(*args, "--at", "2026-01-18T18:00:00+09:00", "--json")
    assert first.code == 0, first.err
    assert first.json()["already_known"] is False
    again = kioku(*args, "--at", "2026-01-18T18:00:20+09:00")
    assert again.code == 0, again.err
    assert again.out.startswith(first.json()["id"])
    assert "already known" in again.out
    assert kioku("stats", "--json").json()["total"] == 1


def test_an_import_run_twice_without_source_ids_is_stored_once(kioku: Run, tmp_path: Path) -> None:
    rows = [{"user": f"turn {i} of the trip", "at": f"2025-05-0{i + 1}T10:00:00"} for i in range(3)]
    source = tmp_path / "trip.jsonl"
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert kioku("import", str(source), "--json").json()["imported"] == 3
    again = kioku("import", str(source), "--json").json()
    assert (again["imported"], again["duplicates"]) == (0, 3)
    assert kioku("stats", "--json").json()["total"] == 3


@pytest.mark.parametrize(
    ("at", "where"),
    [
        ("0001-01-01T00:00:00", "--at"),
        ("9999-12-31T23:59:59", "--at"),
        ("1969-12-31T23:59:59Z", "--at"),
        ("2999-01-01T00:00:00+09:00", "--at"),
    ],
)
def test_remember_and_add_refuse_times_out_of_range(kioku: Run, at: str, where: str) -> None:
    for args in (
        ("remember", "--user", "hello"),
        ("add", "--trigger", "t", "--content", "c", "--intensity", "40", "--category", "work"),
    ):
        result = kioku(*args, "--at", at)
        assert result.code == 2, (args, result.err)
        assert where in result.err
        assert "1970-01-01" in result.err
        assert "internal error" not in result.err


def test_bad_owner_ids_are_usage_errors(home: Path) -> None:
    for option in ("--user", "--agent"):
        result = run_kioku("--home", str(home), option, "", "remember", "--user", "hi")
        assert result.code == 2, result.err
        assert option in result.err


READERS = [
    ("list",),
    ("show", "mem_20260101_000000_deadbeef"),
    ("recall", "anything"),
    ("stats",),
    ("log",),
    ("batch",),
    ("backup", "copy.db"),
    ("forget", "mem_20260101_000000_deadbeef"),
    ("protect", "mem_20260101_000000_deadbeef"),
    ("reembed",),
]


@pytest.mark.parametrize("args", READERS, ids=[a[0] for a in READERS])
def test_reading_a_home_that_does_not_exist_is_a_clear_error(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    typo = tmp_path / "kiokuu"
    result = run_kioku("--home", str(typo), *args)
    assert result.code == 2, result.err
    assert str(typo) in result.err
    assert "kioku init" in result.err
    assert "--home" in result.err
    assert not (typo / "memories.db").exists()


def test_an_existing_home_without_memories_still_reads(kioku: Run) -> None:
    assert kioku("init").code == 0
    listed = kioku("list")
    assert listed.code == 0
    assert "no memories match" in listed.err


@pytest.mark.parametrize(
    "args",
    [
        ("remember", "--user", "the first memory of a new home"),
        ("add", "--trigger", "t", "--content", "c", "--intensity", "40", "--category", "work"),
        ("init",),
    ],
)
def test_writing_commands_create_the_home(tmp_path: Path, args: tuple[str, ...]) -> None:
    fresh = tmp_path / "fresh"
    result = run_kioku("--home", str(fresh), *args)
    assert result.code == 0, result.err
    assert (fresh / "memories.db").is_file()


def test_commands_that_need_no_store_work_without_a_home(tmp_path: Path) -> None:
    missing = tmp_path / "none"
    assert run_kioku("--home", str(missing), "analyze", "--user", "hello").code == 0
    assert run_kioku("--home", str(missing), "config", "check").code == 0
    assert not missing.exists()
