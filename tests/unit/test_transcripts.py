"""Reading Claude Code session transcripts into turns, and ingesting them as memories."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kioku.interfaces.claude_code.ingest import ingest_transcript
from kioku.interfaces.claude_code.transcripts import (
    find_claude_transcripts,
    is_command,
    parse_transcript,
)
from kioku.service.kioku import Kioku

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "claude"


def _write(path: Path, entries: list[dict[str, Any] | str]) -> Path:
    lines = [e if isinstance(e, str) else json.dumps(e, ensure_ascii=False) for e in entries]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **extra}


def _assistant(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": content}, **extra}


# -- the golden fixtures -----------------------------------------------------------------


def test_normal_session_has_one_turn_per_user_input() -> None:
    parsed = parse_transcript(FIXTURES / "normal.jsonl")
    assert parsed.session_id == "5d1c2a7e-3f4b-4c8e-9a21-7b6e0d4f1a23"
    assert parsed.skipped_lines == 0
    assert [t.user for t in parsed.turns] == [
        "The test for parse_date fails on CI but passes on my machine. Can you look into it?",
        "Great, thanks! Please remember that our CI always runs in UTC.",
        "Now add a changelog entry for the fix.",
    ]
    assert [t.turn_id for t in parsed.turns] == [
        "2ff7e58d-c4ee-41c9-ad40-3e86c442651e",
        "d7c2a9f5-4e8b-4163-8c0a-f2b6e1d9a547",
        "e2d6b0a8-9c4f-4b75-8d1e-3f7a5c2b9d64",
    ]


def test_assistant_reply_spans_entries_with_tool_markers_only() -> None:
    first = parse_transcript(FIXTURES / "normal.jsonl").turns[0]
    assert first.assistant == (
        "Let me run the test first to see the failure.\n\n"
        "[tool: Bash]\n\n"
        "The expected value is built with datetime.now() in local time, but parse_date works "
        "in UTC, so the test breaks whenever the two dates differ. Let me check for other "
        "places with the same pattern.\n\n"
        "[tool: Task] [tool: Edit]\n\n"
        "Fixed: the test now builds the expected date in UTC, like parse_date, and passes in "
        "any timezone."
    )
    # Tool input and output, thinking and the sub-agent's conversation are left out.
    for absent in ("pytest", "AssertionError", "expected date is computed", "line 12"):
        assert absent not in first.assistant


def test_slash_commands_their_replies_meta_and_compact_summary_are_not_turns() -> None:
    parsed = parse_transcript(FIXTURES / "normal.jsonl")
    text = " ".join(t.user + " " + t.assistant for t in parsed.turns)
    assert parsed.commands == 3  # /clear, /review and /compact
    for absent in ("Caveat", "command-name", "/review", "Reviewing", "continued from"):
        assert absent not in text


def test_turn_time_is_the_user_entry_timestamp() -> None:
    turns = parse_transcript(FIXTURES / "normal.jsonl").turns
    assert turns[0].at == datetime(2026, 1, 18, 22, 54, 39, 48000, tzinfo=UTC)
    assert turns[2].at == datetime(2026, 1, 19, 0, 15, 3, 120000, tzinfo=UTC)


def test_turns_before_a_compaction_are_kept() -> None:
    # The compact boundary has no parentUuid; logicalParentUuid links the chain across.
    turns = parse_transcript(FIXTURES / "normal.jsonl").turns
    assert turns[0].line == 5
    assert len(turns) == 3


def test_corrupt_lines_are_skipped_and_counted() -> None:
    parsed = parse_transcript(FIXTURES / "corrupt.jsonl")
    assert parsed.skipped_lines == 2
    assert [t.user for t in parsed.turns] == [
        "What does the --dry-run flag of sync do?",
        "Does it also report conflicts?",
    ]


def test_edited_prompt_keeps_only_the_continued_branch() -> None:
    parsed = parse_transcript(FIXTURES / "branched.jsonl")
    assert [t.user for t in parsed.turns] == [
        "Suggest a quick dinner with what I have: eggs, rice, spinach.",
        "Make it mild, it is for two children.",
        "Thanks, what can I serve on the side?",
    ]
    assert "chili oil" not in " ".join(t.assistant for t in parsed.turns)


def test_japanese_session() -> None:
    parsed = parse_transcript(FIXTURES / "japanese.jsonl")
    assert parsed.commands == 1
    assert [t.user for t in parsed.turns] == [
        "家計簿アプリの月次集計がマイナスになるバグを直したい。",
        "ありがとう！本当に助かった。金額は必ず円の整数で扱うこと、覚えておいて。",
    ]
    assert parsed.turns[0].assistant == (
        "まず集計処理を確認します。\n\n[tool: Read]\n\n"
        "支出の合計に収入も含まれていたのが原因です。支出だけを引くように修正しました。"
    )
    assert "Opened memory file" not in parsed.turns[1].assistant


# -- edge cases --------------------------------------------------------------------------


def test_without_uuids_file_order_and_line_ids(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "plain.jsonl",
        [
            _user("first", timestamp="2026-05-01T10:00:00Z"),
            _assistant("one"),
            "",
            _user([{"type": "text", "text": "second"}]),
            _assistant([{"type": "text", "text": "two"}]),
        ],
    )
    parsed = parse_transcript(path)
    assert [(t.turn_id, t.user, t.assistant) for t in parsed.turns] == [
        ("line 1", "first", "one"),
        ("line 4", "second", "two"),
    ]
    assert parsed.turns[1].at is None
    assert parsed.session_id == "plain"  # no sessionId: the file name


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[1, 2]",
        '{"message": {"role": "user", "content": "no type"}}',
        '{"type": "user", "message": {"role": "user"}}',
        '{"type": "assistant", "message": {"content": [1, 2]}}',
        '{"type": "user", "message": {"content": 5}}',
    ],
)
def test_wrong_shapes_are_skipped(tmp_path: Path, line: str) -> None:
    path = _write(tmp_path / "t.jsonl", [_user("hello"), line, _assistant("hi")])
    parsed = parse_transcript(path)
    assert parsed.skipped_lines == 1
    assert [(t.user, t.assistant) for t in parsed.turns] == [("hello", "hi")]


def test_other_entry_types_are_not_counted_as_corrupt(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "t.jsonl",
        [
            {"type": "file-history-snapshot", "messageId": "x", "snapshot": {}},
            {"type": "queue-operation", "operation": "enqueue"},
            _user("hello"),
            {"type": "system", "subtype": "informational", "content": "hook ran"},
            _assistant("hi"),
        ],
    )
    parsed = parse_transcript(path)
    assert parsed.skipped_lines == 0
    assert [(t.user, t.assistant) for t in parsed.turns] == [("hello", "hi")]


def test_noise_inside_user_entries(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "t.jsonl",
        [
            _user(
                [
                    {"type": "text", "text": "What is in this picture?"},
                    {"type": "image", "source": {"type": "base64", "data": "iVBORw0KGgo="}},
                ]
            ),
            _assistant([{"type": "text", "text": "A cat on a keyboard."}]),
            _user([{"type": "text", "text": "[Request interrupted by user]"}]),
            _assistant(
                [{"type": "text", "text": "No response requested."}],
                message={"role": "assistant", "model": "<synthetic>", "content": "x"},
            ),
            _user("Thanks<system-reminder>internal note</system-reminder>"),
            _assistant("You're welcome."),
            _user("  /model opus"),
            _assistant("Set model to opus."),
        ],
    )
    turns = parse_transcript(path).turns
    assert [(t.user, t.assistant) for t in turns] == [
        ("What is in this picture?\n\n[image]", "A cat on a keyboard."),
        ("Thanks", "You're welcome."),
    ]


def test_duplicate_entries_count_once(tmp_path: Path) -> None:
    user = _user("hello", uuid="u1", parentUuid=None)
    reply = _assistant("hi", uuid="a1", parentUuid="u1")
    path = _write(tmp_path / "t.jsonl", [user, reply, reply])
    assert [t.assistant for t in parse_transcript(path).turns] == ["hi"]


def test_turn_without_reply_is_kept(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [_user("are you there?")])
    assert [(t.user, t.assistant) for t in parse_transcript(path).turns] == [("are you there?", "")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/clear", True),
        ("  /compact keep the notes", True),
        ("<command-name>/memory</command-name>", True),
        ("<local-command-stdout>ok</local-command-stdout>", True),
        ("use a/b paths", False),
        ("hello", False),
    ],
)
def test_is_command(text: str, expected: bool) -> None:
    assert is_command(text) is expected


def test_missing_file_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="missing"):
        parse_transcript(tmp_path / "missing.jsonl")


def test_find_claude_transcripts(tmp_path: Path) -> None:
    for name in ("-home-aki-src-a/one.jsonl", "-home-aki-src-b/two.jsonl", "top.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "-home-aki-src-b" / "notes.txt").write_text("", encoding="utf-8")
    assert [p.name for p in find_claude_transcripts(tmp_path)] == ["one.jsonl", "two.jsonl"]
    assert find_claude_transcripts(tmp_path / "nowhere") == []


# -- ingestion ---------------------------------------------------------------------------


@pytest.fixture
def kioku(tmp_path: Path) -> Kioku:
    return Kioku.open(tmp_path / "home", env={})


def test_ingest_is_idempotent_and_keeps_turn_times(kioku: Kioku) -> None:
    with kioku:
        first = ingest_transcript(kioku, FIXTURES / "normal.jsonl")
        again = ingest_transcript(kioku, FIXTURES / "normal.jsonl")
        memories = sorted(kioku.list(), key=lambda m: m.created)
    assert (first.turns, first.added, first.already) == (3, 3, 0)
    assert (again.added, again.already) == (0, 3)
    assert len(memories) == 3
    session = "5d1c2a7e-3f4b-4c8e-9a21-7b6e0d4f1a23"
    assert memories[0].source_ids == (f"{session}:2ff7e58d-c4ee-41c9-ad40-3e86c442651e",)
    assert memories[0].created == datetime(2026, 1, 18, 22, 54, 39, tzinfo=UTC)  # whole seconds
    assert memories[0].session_id == session


def test_ingest_grown_transcript_adds_only_new_turns(kioku: Kioku, tmp_path: Path) -> None:
    lines = (FIXTURES / "normal.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "growing.jsonl"
    path.write_text("".join(lines[:18]), encoding="utf-8")
    with kioku:
        first = ingest_transcript(kioku, path, batch_size=1)
        path.write_text("".join(lines), encoding="utf-8")
        grown = ingest_transcript(kioku, path)
        assert kioku.count() == 3
    assert (first.turns, first.added) == (2, 2)
    assert (grown.turns, grown.added, grown.already) == (3, 1, 2)


def test_ingest_with_session_override(kioku: Kioku) -> None:
    with kioku:
        result = ingest_transcript(kioku, FIXTURES / "corrupt.jsonl", session_id="s-1")
        sources = sorted(s for m in kioku.list() for s in m.source_ids)
    assert result.session_id == "s-1"
    assert result.skipped_lines == 2
    assert sources == [
        "s-1:a1b2c3d4-0001-4e5f-8a9b-1c2d3e4f5a61",
        "s-1:a1b2c3d4-0004-4e5f-8a9b-1c2d3e4f5a64",
    ]


def test_ingest_shares_a_snapshot_of_stored_ids(kioku: Kioku) -> None:
    known: set[str] = set()
    with kioku:
        first = ingest_transcript(kioku, FIXTURES / "branched.jsonl", known=known)
        assert len(known) == 3
        again = ingest_transcript(kioku, FIXTURES / "branched.jsonl", known=known)
        # A stale snapshot is checked again inside the transaction: nothing is stored twice.
        stale = ingest_transcript(kioku, FIXTURES / "branched.jsonl", known=set())
        assert kioku.count() == 3
    assert (first.added, again.already, stale.already) == (3, 3, 3)
