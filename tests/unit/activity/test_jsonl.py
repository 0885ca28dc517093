"""Activity events as JSON lines: the spec's shape, strict reading, the day file, round trips."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings

from kioku.core.activity import (
    KEYS,
    ActivityEvent,
    EventType,
    check_event,
    day_file_name,
    from_jsonl,
    to_jsonl,
)
from kioku.errors import ValidationError
from tests.unit.activity import TOKYO, at, events

SPEC_LINES = [
    '{"ts":"2026-02-17T14:30:00","type":"message_received","content":"...","from":"user",'
    '"channel":"chat"}',
    '{"ts":"2026-02-17T14:30:05","type":"response_sent","content":"...","to":"user",'
    '"channel":"chat"}',
    '{"ts":"2026-02-17T15:00:00","type":"tool_use","tool":"web_search","summary":"検索実行"}',
]
SPEC_EVENTS = [
    ActivityEvent(at(14, 30), EventType.MESSAGE_RECEIVED, "...", from_="user", channel="chat"),
    ActivityEvent(at(14, 30, second=5), EventType.RESPONSE_SENT, "...", to="user", channel="chat"),
    ActivityEvent(at(15), EventType.TOOL_USE, tool="web_search", summary="検索実行"),
]


def _with_offset(line: str, offset: str = "+09:00") -> str:
    return line.replace('","type"', f'{offset}","type"', 1)


@pytest.mark.parametrize(("line", "event"), list(zip(SPEC_LINES, SPEC_EVENTS, strict=True)))
def test_the_spec_examples_are_written_with_the_same_keys_in_the_same_order(
    line: str, event: ActivityEvent
) -> None:
    assert to_jsonl(event) == _with_offset(line)


@pytest.mark.parametrize(("line", "event"), list(zip(SPEC_LINES, SPEC_EVENTS, strict=True)))
def test_the_spec_examples_without_offset_are_read_in_the_given_zone(
    line: str, event: ActivityEvent
) -> None:
    read = from_jsonl(line, TOKYO)
    assert read == event
    assert read.ts.utcoffset() == timedelta(hours=9)
    assert list(json.loads(to_jsonl(read))) == list(json.loads(line))


def test_a_time_without_offset_needs_a_default_zone() -> None:
    with pytest.raises(ValidationError) as caught:
        from_jsonl(SPEC_LINES[0])
    assert caught.value.field == "ts"
    assert "default_tz" in str(caught.value)


def test_utc_written_as_z_is_read() -> None:
    event = from_jsonl('{"ts":"2026-02-17T05:30:00Z","type":"error","content":"boom"}')
    assert event.ts == at(14, 30)
    assert to_jsonl(event) == '{"ts":"2026-02-17T05:30:00+00:00","type":"error","content":"boom"}'


def test_every_key_in_order_and_kiokus_keys_after_the_specs() -> None:
    event = ActivityEvent(
        at(15),
        EventType.CRON_EXECUTED,
        "ran",
        from_="scheduler",
        to="rin",
        channel="ops",
        tool="sh",
        via="slack",
        summary="nightly",
        task="backup",
        exit_code=1,
        session_id="s-1",
        memory_ids=("m1", "m2"),
        user_id="u",
        agent_id="a",
        meta=(("attempt", 2), ("dry", False), ("load", 0.25), ("host", "kumo")),
    )
    line = to_jsonl(event)
    record = json.loads(line)
    assert tuple(record) == KEYS
    assert KEYS[:9] == ("ts", "type", "content", "from", "to", "channel", "tool", "via", "summary")
    assert record["exit"] == 1
    assert record["memory_ids"] == ["m1", "m2"]
    assert record["meta"] == {"attempt": 2, "dry": False, "load": 0.25, "host": "kumo"}
    assert ", " not in line
    assert ": " not in line
    assert from_jsonl(line) == event


def test_empty_fields_are_left_out_but_an_exit_code_of_zero_is_kept() -> None:
    bare = to_jsonl(ActivityEvent(at(9), EventType.HEARTBEAT_START))
    assert bare == '{"ts":"2026-02-17T09:00:00+09:00","type":"heartbeat_start"}'
    ran = to_jsonl(ActivityEvent(at(9), EventType.CRON_EXECUTED, task="backup", exit_code=0))
    assert json.loads(ran) == {
        "ts": "2026-02-17T09:00:00+09:00",
        "type": "cron_executed",
        "task": "backup",
        "exit": 0,
    }


def test_null_counts_as_absent_when_reading() -> None:
    line = (
        '{"ts":"2026-02-17T09:00:00+09:00","type":"error","content":null,"exit":null,"meta":null}'
    )
    assert from_jsonl(line) == ActivityEvent(at(9), EventType.ERROR)


def test_japanese_is_written_as_it_is_and_a_line_break_escaped() -> None:
    line = to_jsonl(ActivityEvent(at(9), EventType.MESSAGE_RECEIVED, "おはよう\nございます"))
    assert "おはよう\\nございます" in line
    assert "\n" not in line


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85", "\x7f"])
def test_a_line_is_one_line_for_every_line_splitter(char: str) -> None:
    line = to_jsonl(ActivityEvent(at(9), EventType.ERROR, f"a{char}b", meta=(("k", char),)))
    assert len(line.splitlines()) == 1
    line.encode("utf-8")
    read = from_jsonl(line)
    assert read == check_event(
        ActivityEvent(at(9), EventType.ERROR, f"a{char}b", meta=(("k", char),))
    )


def test_a_separator_character_survives_the_round_trip() -> None:
    event = ActivityEvent(at(9), EventType.ERROR, "a\u2028b\\\u2029")
    line = to_jsonl(event)
    assert "\\u2028" in line
    assert from_jsonl(line) == event


def test_writing_checks_the_event() -> None:
    with pytest.raises(ValidationError, match="ts"):
        to_jsonl(ActivityEvent(datetime(2026, 2, 17, 9), EventType.ERROR))
    assert "\\u001b" not in to_jsonl(ActivityEvent(at(9), EventType.ERROR, "\x1b[2Jx"))


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("", "empty"),
        ("   \n", "empty"),
        ("not json", "not valid"),
        ('{"ts":"2026-02-17T09:00:00+09:00","type":"error"', "not valid"),
        ('{"ts":"2026-02-17T09:00:00+09:00","type":"error"}{}', "not valid"),
        ("[]", "list"),
        ('"error"', "str"),
        ('{"type":"error"}', "ts is missing"),
        ('{"ts":"2026-02-17T09:00:00+09:00"}', "type is missing"),
        ('{"ts":"2026-02-17T09:00:00+09:00","type":"error","colour":"red"}', "colour"),
        ('{"ts":"2026-02-17T09:00:00+09:00","type":"error","from_":"x"}', "from_"),
        ('{"ts":"2026-02-17T09:00:00+09:00","type":"error","type":"tool_use"}', "twice"),
        ('{"ts":"2026-02-17T09:00:00+09:00","type":"error","meta":{"a":1,"a":2}}', "twice"),
        ('{"ts":"2026-02-17T09:00:00+09:00","type":"error","meta":{"a":NaN}}', "NaN"),
    ],
)
def test_a_malformed_line_is_rejected_with_the_reason(line: str, reason: str) -> None:
    with pytest.raises(ValidationError) as caught:
        from_jsonl(line)
    assert caught.value.field == "activity line"
    assert reason in str(caught.value)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ('"ts":"2026-02-17","type":"error"', "ts"),
        ('"ts":"yesterday","type":"error"', "ts"),
        ('"ts":1771286400,"type":"error"', "ts"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"coffee_break"', "type"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":7', "type"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","content":5', "content"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","from":["a"]', "from"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","exit":"0"', "exit"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","exit":true', "exit"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","exit":1.5', "exit"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","memory_ids":"m1"', "memory_ids"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","memory_ids":[1]', "memory_ids"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","meta":[]', "meta"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","meta":{"a":[1]}', "meta.a"),
        ('"ts":"2026-02-17T09:00:00+09:00","type":"error","meta":{"a":null}', "meta.a"),
    ],
)
def test_a_field_of_the_wrong_kind_is_rejected(fields: str, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        from_jsonl("{" + fields + "}", TOKYO)
    assert caught.value.field == field


def test_a_trailing_line_feed_is_allowed() -> None:
    assert from_jsonl(_with_offset(SPEC_LINES[2]) + "\r\n") == SPEC_EVENTS[2]


def test_the_day_file_follows_the_events_own_date() -> None:
    late = ActivityEvent(datetime(2026, 2, 17, 23, 59, 59, tzinfo=TOKYO), EventType.ERROR)
    early = ActivityEvent(datetime(2026, 2, 18, 5, tzinfo=TOKYO), EventType.ERROR)
    assert day_file_name(late) == "2026-02-17.jsonl"
    assert day_file_name(early) == "2026-02-18.jsonl"
    assert day_file_name(early, UTC) == "2026-02-17.jsonl"
    west = ActivityEvent(datetime(2026, 2, 17, 20, tzinfo=timezone(timedelta(hours=-5))), "error")  # type: ignore[arg-type]
    assert day_file_name(west) == "2026-02-17.jsonl"
    assert day_file_name(west, TOKYO) == "2026-02-18.jsonl"


@settings(max_examples=200, deadline=None)
@given(events())
def test_what_is_written_reads_back_as_the_checked_event(event: ActivityEvent) -> None:
    line = to_jsonl(event)
    assert len(line.splitlines()) == 1
    line.encode("utf-8")  # never a lone surrogate
    read = from_jsonl(line)
    assert read == check_event(event)
    assert read.ts.utcoffset() == event.ts.utcoffset()
    assert to_jsonl(read) == line
