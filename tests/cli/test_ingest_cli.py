"""``kioku ingest``: Claude Code transcripts in, one memory per turn, idempotently."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.cli.conftest import Run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude"
NORMAL = FIXTURES / "normal.jsonl"
NORMAL_SESSION = "5d1c2a7e-3f4b-4c8e-9a21-7b6e0d4f1a23"


def _memories(kioku: Run) -> list[dict[str, Any]]:
    result = kioku("list", "--json")
    assert result.code == 0, result.err
    items: list[dict[str, Any]] = result.json()
    return items


def _sources(kioku: Run) -> list[str]:
    return sorted(s for m in _memories(kioku) for s in m["source_ids"])


def test_ingesting_twice_stores_each_turn_once(kioku: Run) -> None:
    first = kioku("ingest", str(NORMAL))
    assert first.code == 0, first.err
    assert first.out == f"{NORMAL}: added 3, 0 already stored, 0 corrupt line(s) skipped\n"
    again = kioku("ingest", str(NORMAL), "--json")
    assert again.code == 0, again.err
    data = again.json()
    assert (data["added"], data["already"], data["turns"]) == (0, 3, 3)
    assert data["files"][0]["session_id"] == NORMAL_SESSION
    assert len(_memories(kioku)) == 3


def test_grown_transcript_adds_only_new_turns(kioku: Run, tmp_path: Path) -> None:
    lines = NORMAL.read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    path.write_text("".join(lines[:18]), encoding="utf-8")
    assert kioku("ingest", str(path), "--json").json()["added"] == 2
    path.write_text("".join(lines), encoding="utf-8")
    grown = kioku("ingest", str(path), "--json").json()
    assert (grown["added"], grown["already"]) == (1, 2)
    assert _sources(kioku) == sorted(
        f"{NORMAL_SESSION}:{turn}"
        for turn in (
            "2ff7e58d-c4ee-41c9-ad40-3e86c442651e",
            "d7c2a9f5-4e8b-4163-8c0a-f2b6e1d9a547",
            "e2d6b0a8-9c4f-4b75-8d1e-3f7a5c2b9d64",
        )
    )


def test_corrupt_lines_are_skipped_and_reported(kioku: Run) -> None:
    path = FIXTURES / "corrupt.jsonl"
    result = kioku("ingest", str(path))
    assert result.code == 0, result.err
    assert result.out == f"{path}: added 2, 0 already stored, 2 corrupt line(s) skipped\n"
    triggers = sorted(m["trigger"] for m in _memories(kioku))
    assert len(triggers) == 2
    assert any("dry-run" in t for t in triggers)
    data = kioku("ingest", str(path), "--json").json()
    assert data["files"][0]["skipped_lines"] == 2
    assert data["skipped_lines"] == 2


def test_slash_commands_are_not_remembered(kioku: Run) -> None:
    assert kioku("ingest", str(NORMAL), str(FIXTURES / "japanese.jsonl")).code == 0
    memories = _memories(kioku)
    assert len(memories) == 5
    text = " ".join(f"{m['trigger']} {m['content']}" for m in memories)
    for absent in ("/clear", "/review", "/compact", "/memory", "command-name", "Reviewing"):
        assert absent not in text


def test_created_times_come_from_the_turns(kioku: Run) -> None:
    assert kioku("ingest", str(FIXTURES / "branched.jsonl")).code == 0
    created = sorted(m["created"] for m in _memories(kioku))
    # The user entries' times (UTC) in the local time zone (Asia/Tokyo).
    assert created == [
        "2026-03-11T03:00:00+09:00",
        "2026-03-11T03:02:30+09:00",
        "2026-03-11T03:04:00+09:00",
    ]


def test_claude_projects_folder(kioku: Run, tmp_path: Path) -> None:
    root = tmp_path / "projects"
    for project, name in (("-home-aki-src-datekit", "normal"), ("-home-yuki-kakeibo", "japanese")):
        (root / project).mkdir(parents=True)
        shutil.copy(FIXTURES / f"{name}.jsonl", root / project / f"{name}.jsonl")
    result = kioku("ingest", "--claude-projects", str(root))
    assert result.code == 0, result.err
    assert result.out.splitlines()[-1] == (
        "ingested 2 transcript(s): added 5, 0 already stored, 0 corrupt line(s) skipped, 0 error(s)"
    )
    data = kioku("ingest", "--claude-projects", str(root), "--json").json()
    assert [Path(f["path"]).name for f in data["files"]] == ["normal.jsonl", "japanese.jsonl"]
    assert (data["added"], data["already"]) == (0, 5)


def test_unreadable_file_exits_1_and_the_others_are_ingested(kioku: Run, tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    result = kioku("ingest", str(missing), str(NORMAL))
    assert result.code == 1
    assert f"kioku: error: cannot read {missing}" in result.err
    assert "added 3" in result.out
    assert len(_memories(kioku)) == 3


def test_missing_projects_folder_exits_1(kioku: Run, tmp_path: Path) -> None:
    result = kioku("ingest", "--claude-projects", str(tmp_path / "nowhere"))
    assert result.code == 1
    assert "no such folder" in result.err


def test_bad_usage_exits_2(kioku: Run) -> None:
    assert kioku("ingest").code == 2
    result = kioku("ingest", "--session-id", "s", str(NORMAL), str(NORMAL))
    assert result.code == 2
    assert "--session-id" in result.err
