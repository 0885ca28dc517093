"""Activity events: the spec's types and labels, kioku's extensions, and the checks."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given, settings

from kioku.core.activity import (
    EXTENSION_TYPES,
    LABELS,
    MAX_CONTENT_CHARS,
    SPEC_TYPES,
    ActivityEvent,
    EventType,
    check_event,
)
from kioku.core.sanitize import FORBIDDEN
from kioku.errors import KiokuError, ValidationError
from tests.unit.activity import TOKYO, at, events

SPEC_LABELS = {
    "message_received": "MSG<",
    "response_sent": "MSG>",
    "dm_sent": "DM>",
    "dm_received": "DM<",
    "channel_post": "CH.W",
    "channel_read": "CH.R",
    "human_notify": "NTFY",
    "tool_use": "TOOL",
    "heartbeat_start": "HB",
    "heartbeat_end": "HB",
    "cron_executed": "CRON",
    "memory_write": "MEM",
    "error": "ERR",
    "issue_resolved": "RSLV",
}
EXTENSION_LABELS = {"memory_recall": "RCL", "priming": "PRIM", "memory_erased": "DEL"}


def test_the_spec_types_and_the_extensions_are_all_there_is() -> None:
    assert {t.value for t in SPEC_TYPES} == set(SPEC_LABELS)
    assert {t.value for t in EXTENSION_TYPES} == set(EXTENSION_LABELS)
    assert {t.value for t in EventType} == set(SPEC_LABELS) | set(EXTENSION_LABELS)
    assert len(EventType) == 17


def test_every_type_has_its_ascii_label() -> None:
    assert {t.value: label for t, label in LABELS.items()} == SPEC_LABELS | EXTENSION_LABELS
    assert all(label.isascii() and 2 <= len(label) <= 4 for label in LABELS.values())


def test_labels_cannot_be_changed() -> None:
    with pytest.raises(TypeError):
        LABELS[EventType.ERROR] = "E"  # type: ignore[index]


def test_an_event_is_a_frozen_hashable_record() -> None:
    event = ActivityEvent(at(14, 30), EventType.TOOL_USE, tool="web_search")
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.content = "x"  # type: ignore[misc]
    same = ActivityEvent(at(14, 30), EventType.TOOL_USE, tool="web_search")
    assert event == same
    assert hash(event) == hash(same)
    assert event != dataclasses.replace(event, tool="grep")


def test_a_valid_event_passes_unchanged() -> None:
    event = ActivityEvent(
        at(14, 30),
        EventType.MESSAGE_RECEIVED,
        "明日の会議は何時から?\n資料も送ってください",
        from_="user",
        channel="chat",
        exit_code=0,
        memory_ids=("m1",),
        meta=(("lang", "ja"), ("score", 0.5), ("ok", True), ("n", 3)),
    )
    assert check_event(event) == event


def test_a_naive_time_is_rejected() -> None:
    with pytest.raises(ValidationError) as caught:
        check_event(ActivityEvent(datetime(2026, 2, 17, 14, 30), EventType.ERROR))
    assert caught.value.field == "ts"
    assert isinstance(caught.value, KiokuError)


@pytest.mark.parametrize("when", [datetime(1960, 1, 1, tzinfo=TOKYO), "2026-02-17T14:30"])
def test_a_time_out_of_range_or_not_a_datetime_is_rejected(when: object) -> None:
    with pytest.raises(ValidationError, match="ts"):
        check_event(ActivityEvent(when, EventType.ERROR))  # type: ignore[arg-type]


def test_sub_seconds_are_dropped() -> None:
    event = ActivityEvent(at(14, 30).replace(microsecond=123456), EventType.ERROR)
    assert check_event(event).ts == at(14, 30)


def test_a_type_given_as_its_name_is_converted_and_an_unknown_one_rejected() -> None:
    checked = check_event(ActivityEvent(at(9), "dm_sent"))  # type: ignore[arg-type]
    assert checked.type is EventType.DM_SENT
    with pytest.raises(ValidationError) as caught:
        check_event(ActivityEvent(at(9), "dm_lost"))  # type: ignore[arg-type]
    assert caught.value.field == "type"
    assert "message_received" in caught.value.allowed


def test_content_is_limited_to_twenty_thousand_characters() -> None:
    assert MAX_CONTENT_CHARS == 20_000
    check_event(ActivityEvent(at(9), EventType.ERROR, "あ" * 20_000))
    with pytest.raises(ValidationError) as caught:
        check_event(ActivityEvent(at(9), EventType.ERROR, "あ" * 20_001))
    assert caught.value.field == "content"
    assert "20001" in str(caught.value)  # the length is named, not the whole text


def test_control_characters_are_neutralised_not_rejected() -> None:
    event = ActivityEvent(
        at(9),
        EventType.MESSAGE_RECEIVED,
        "hi\x1b[2J there\x07\r\nnext\tline",
        from_="eve\nmallory",
        summary="s\x00",
        memory_ids=("id\x1b]0;title\x07",),
        meta=(("k", "v\x9b31m"),),
    )
    checked = check_event(event)
    assert checked.content == "hi there\ufffd\nnext\tline"  # line breaks stay in content
    assert checked.from_ == "eve mallory"  # names are one line
    assert checked.summary == "s\ufffd"
    assert checked.memory_ids == ("id",)
    assert checked.meta == (("k", "v"),)


def test_a_lone_surrogate_becomes_a_replacement_character() -> None:
    checked = check_event(ActivityEvent(at(9), EventType.ERROR, "a\ud800b", tool="t\udfff"))
    assert checked.content == "a\ufffdb"
    assert checked.tool == "t\ufffd"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"exit_code": True}, "exit"),
        ({"exit_code": 2**60}, "exit"),
        ({"exit_code": "0"}, "exit"),
        ({"content": None}, "content"),
        ({"from_": 3}, "from"),
        ({"to": "x" * 201}, "to"),
        ({"session_id": "s" * 1001}, "session"),
        ({"summary": "s" * 2001}, "summary"),
        ({"memory_ids": ["m1"]}, "memory_ids"),
        ({"memory_ids": ("m1", "")}, "memory_ids"),
        ({"memory_ids": (1,)}, "memory_ids"),
        ({"meta": {"a": 1}}, "meta"),
        ({"meta": (("a", 1, 2),)}, "meta"),
        ({"meta": (("a", 1), ("a", 2))}, "meta key"),
        ({"meta": (("", 1),)}, "meta key"),
        ({"meta": (("a", float("nan")),)}, "meta.a"),
        ({"meta": (("a", [1]),)}, "meta.a"),
        ({"meta": (("a", None),)}, "meta.a"),
        ({"meta": (("a", -(2**53) - 1),)}, "meta.a"),
    ],
)
def test_values_that_cannot_be_stored_faithfully_are_rejected(
    changes: dict[str, Any], field: str
) -> None:
    event = dataclasses.replace(ActivityEvent(at(9), EventType.CRON_EXECUTED), **changes)
    with pytest.raises(ValidationError) as caught:
        check_event(event)
    assert caught.value.field == field


def test_meta_keys_that_clash_once_cleaned_are_rejected() -> None:
    with pytest.raises(ValidationError, match="meta key"):
        check_event(ActivityEvent(at(9), EventType.ERROR, meta=(("a\n", 1), ("a\t", 2))))


def test_not_an_event_is_rejected() -> None:
    with pytest.raises(ValidationError, match="event"):
        check_event("message_received")  # type: ignore[arg-type]


@settings(max_examples=150, deadline=None)
@given(events())
def test_checking_is_idempotent_and_leaves_nothing_a_terminal_obeys(event: ActivityEvent) -> None:
    checked = check_event(event)
    assert check_event(checked) == checked
    # A checked event is given back as it is, not copied (the activity log checks each line
    # again when it writes it).
    assert check_event(checked) is checked
    texts = [checked.content, checked.summary, checked.from_, checked.to, checked.session_id]
    texts += [value for _, value in checked.meta if isinstance(value, str)]
    assert not any(FORBIDDEN.search(text) for text in texts)
    assert not any("\n" in name for name in (checked.from_, checked.to, checked.task))
