"""``kioku import --dry-run`` writes nothing and predicts the import; bad sources are refused
whole, naming the file and the place, with exit status 2."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.service.mirror import export_files
from tests.importers.conftest import FIXTURES, Cli, copy_fixture, mem0_history

AT = datetime(2025, 2, 3, 10, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
FORMATS = ["jsonl", "files", "chatgpt", "mem0", "claude-md", "markdown"]


def _source(fmt: str, tmp_path: Path) -> Path:
    if fmt == "jsonl":
        path = tmp_path / "turns.jsonl"
        lines = [
            {"user": "The plumber fixed the leak", "at": "2025-01-05T09:00:00", "source_id": "a"},
            {"user": "Aiko likes native plants", "assistant": "Noted.", "source_id": "b"},
        ]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
        return path
    if fmt == "files":
        with Kioku.open(tmp_path / "other", clock=FixedClock(AT), env={}) as k:
            k.write_memory("knowledge", "The harbour feed is in UTC", title="feed")
            k.remember("Met Aiko", "She wants native plants", intensity=50, category="casual")
            export_files(k, tmp_path / "export")
        return tmp_path / "export"
    if fmt == "mem0":
        return mem0_history(tmp_path)
    name = {"chatgpt": "chatgpt", "claude-md": "claude/project", "markdown": "notes"}[fmt]
    return copy_fixture(name, tmp_path)


def _snapshot(home: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(home.iterdir()) if p.is_file()}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_dry_run_leaves_the_store_as_it_was_and_predicts_the_import(
    cli: Cli, home: Path, tmp_path: Path, fmt: str
) -> None:
    with Kioku.open(home, clock=FixedClock(AT), env={}) as k:
        k.remember("An entry before the import", "kept", intensity=40, category="casual")
    before = _snapshot(home)
    source = _source(fmt, tmp_path)
    dry = cli("import", "--from", fmt, str(source), "--dry-run", "--json")
    assert dry.code == 0, dry.err
    predicted = dry.json()
    assert predicted["dry_run"] is True
    assert predicted["created"] > 0
    assert 0 < len(predicted["sample"]) <= 5
    assert _snapshot(home) == before  # byte for byte: the database, its log, everything
    text = cli("import", "--from", fmt, str(source), "--dry-run")
    assert text.out.startswith(f"dry run: would import {predicted['created']} (")
    assert "nothing was written" in text.out
    assert _snapshot(home) == before
    done = cli("import", "--from", fmt, str(source), "--json")
    assert done.code == 0, done.err
    report = done.json()
    created = report.get("created", report.get("imported"))
    assert created == predicted["created"]
    with Kioku.open(home, env={}) as k:
        assert k.count(archived=None, kind=None) == 1 + predicted["created"]
    again = cli("import", "--from", fmt, str(source), "--dry-run", "--json")
    assert (again.json()["created"], again.json()["skipped"]) == (0, predicted["created"])


def test_a_dry_run_on_a_new_home_creates_no_store(cli: Cli, home: Path) -> None:
    done = cli("import", "--from", "chatgpt", str(FIXTURES / "chatgpt"), "--dry-run")
    assert done.code == 0, done.err
    assert "would import 3 (3 episodes" in done.out
    assert not (home / "memories.db").exists()


def _nothing_stored(home: Path) -> bool:
    if not (home / "memories.db").exists():
        return True
    with Kioku.open(home, env={}) as k:
        return k.count(archived=None, kind=None) == 0


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _bad(case: str, tmp_path: Path) -> tuple[str, Path, str]:
    """``(format, source, what the error must say)`` for one kind of bad source."""
    if case == "chatgpt-json":
        path = _write(tmp_path / "conversations.json", '[{"mapping": {}, "title": "x",]')
        return "chatgpt", path, f"{path}: line 1 column 31: not JSON"
    if case == "chatgpt-node":
        conv = [{"id": "c1", "mapping": {}, "current_node": "n9"}]
        path = _write(tmp_path / "conversations.json", json.dumps(conv))
        return "chatgpt", path, "conversation 1.mapping: node 'n9' is named but not there"
    if case == "chatgpt-time":
        data = json.loads((FIXTURES / "chatgpt" / "conversations.json").read_text("utf-8"))
        node = data[1]["mapping"]["bbbbbbbb-0000-4000-8000-000000000002"]
        node["message"]["create_time"] = "yesterday"
        path = _write(tmp_path / "conversations.json", json.dumps(data))
        return "chatgpt", path, "'yesterday' is not a time"
    if case == "mem0-memory":
        items = [{"id": "m1", "memory": "Likes tea"}, {"id": "m2", "memory": ""}]
        path = _write(tmp_path / "memories.json", json.dumps({"results": items}))
        return "mem0", path, f"{path}: memory 2.memory: missing"
    if case == "mem0-table":
        tmp_path.mkdir(parents=True, exist_ok=True)
        path = tmp_path / "other.db"
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE notes (id TEXT)")
        conn.close()
        return "mem0", path, f"{path}: has no history table"
    if case == "markdown-yaml":
        notes = copy_fixture("notes", tmp_path)
        bad = _write(notes / "broken.md", "---\ntitle: [unclosed\n---\ntext\n")
        return "markdown", notes, f"{bad}: line 1: front matter is not valid YAML"
    if case == "markdown-future":
        notes = copy_fixture("notes", tmp_path)
        bad = _write(notes / "later.md", "---\ndate: 2999-01-01\n---\nnot yet\n")
        return "markdown", notes, f"{bad}: front matter date"
    if case == "claude-md-empty":
        (tmp_path / "empty").mkdir(parents=True)
        return "claude-md", tmp_path / "empty", "holds no CLAUDE.md"
    path = _write(tmp_path / "CLAUDE.md", "x")
    path.write_bytes(b"- caf\xe9\n")
    return "claude-md", path, f"{path}: byte 6: not UTF-8 text"


@pytest.mark.parametrize(
    "case",
    [
        "chatgpt-json",
        "chatgpt-node",
        "chatgpt-time",
        "mem0-memory",
        "mem0-table",
        "markdown-yaml",
        "markdown-future",
        "claude-md-empty",
        "claude-md-utf8",
    ],
)
def test_a_bad_source_is_refused_whole_naming_the_file_and_the_place(
    cli: Cli, home: Path, tmp_path: Path, case: str
) -> None:
    fmt, source, expected = _bad(case, tmp_path / "src")
    for extra in ((), ("--dry-run",)):
        done = cli("import", "--from", fmt, str(source), *extra)
        assert done.code == 2, done.out
        assert done.err.startswith("kioku: error: ")
        assert expected in done.err
        assert _nothing_stored(home)


def test_options_that_do_not_fit_the_format_are_usage_errors(cli: Cli, tmp_path: Path) -> None:
    source = str(FIXTURES / "chatgpt")
    cases = [
        (("--from", "chatgpt", "--skip-invalid", source), "--skip-invalid is for --from jsonl"),
        (("--from", "chatgpt", "-"), "not stdin"),
        (("--from", "files", "--layout", "jsonl", source), "disagree"),
        (("--from", "chatgpt", str(tmp_path / "nowhere")), "no such file"),
    ]
    for args, expected in cases:
        done = cli("import", *args)
        assert done.code == 2, args
        assert expected in done.err, done.err
