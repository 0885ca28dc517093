"""The rules every input boundary applies: empty turns, timestamps, provenance ids, and the
checks of an import file line by line."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from kioku.core.ids import ID_PATTERN, make_memory_id
from kioku.core.validate import (
    check_created,
    check_provenance_id,
    check_turn,
    is_blank,
)
from kioku.errors import KiokuError, ValidationError
from kioku.service.remember.imports import ImportTurn, InvalidLine, read_import

TOKYO = timezone(timedelta(hours=9))
NOW = datetime(2026, 1, 18, 18, 0, tzinfo=TOKYO)


@pytest.mark.parametrize(
    "text", ["", " ", "\n\t\r", "\x00", "\x01\x7f", "\u200b\ufeff", "\u3000", "\ud800"]
)
def test_blank_text_shows_nothing(text: str) -> None:
    assert is_blank(text)


@pytest.mark.parametrize("text", ["a", " x ", "寿司", "😀", "\x01a", "\ue000"])
def test_text_with_something_visible_is_not_blank(text: str) -> None:
    assert not is_blank(text)


def test_a_turn_needs_text_on_one_side() -> None:
    assert check_turn("hi", "") == ("hi", "")
    assert check_turn("", "Welcome back") == ("", "Welcome back")
    with pytest.raises(ValidationError) as caught:
        check_turn(" \x01", "\u200b")
    assert caught.value.field == "user"
    assert caught.value.exit_code == 2
    assert "empty turn" in str(caught.value)
    assert isinstance(caught.value, KiokuError)


@pytest.mark.parametrize("bad", [None, 12, ["a"], {"a": 1}, b"bytes"])
def test_turn_text_must_be_a_string(bad: object) -> None:
    with pytest.raises(ValidationError):
        check_turn(bad, "")
    with pytest.raises(ValidationError):
        check_turn("x", bad)


def test_turn_text_has_a_length_limit() -> None:
    with pytest.raises(ValidationError, match="at most"):
        check_turn("x" * 1_048_577, "")


@pytest.mark.parametrize(
    "moment",
    [
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(2026, 1, 18, 18, 0, tzinfo=TOKYO),
        NOW + timedelta(hours=23),
    ],
)
def test_times_from_1970_to_a_day_ahead_are_accepted(moment: datetime) -> None:
    assert check_created("at", moment, NOW) == moment


@pytest.mark.parametrize(
    "moment",
    [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime(1970, 1, 1, 8, 59, tzinfo=TOKYO),  # 1969 in UTC
        NOW + timedelta(days=1, seconds=1),
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-12))),
    ],
)
def test_times_out_of_range_are_refused_with_the_range(moment: datetime) -> None:
    with pytest.raises(ValidationError) as caught:
        check_created("at", moment, NOW)
    assert "1970-01-01" in str(caught.value)


def test_naive_and_non_datetime_times_are_refused() -> None:
    with pytest.raises(ValidationError, match="timezone-aware"):
        check_created("at", datetime(2026, 1, 1), NOW)
    with pytest.raises(ValidationError):
        check_created("at", "2026-01-01", NOW)


@pytest.mark.parametrize("bad", ["", "  ", "a\x00b", "a\nb", "\udc80", "x" * 1001, 5, None])
def test_provenance_ids_are_non_blank_storable_text(bad: object) -> None:
    with pytest.raises(ValidationError):
        check_provenance_id("source_ids", bad)


def test_ids_keep_their_shape_for_every_year() -> None:
    for year in (1, 999, 1970, 2026, 9999):
        memory_id = make_memory_id(datetime(year, 1, 2, 3, 4, 5, tzinfo=UTC), "0123abcd")
        assert ID_PATTERN.match(memory_id), memory_id
    assert make_memory_id(datetime(1, 1, 2, 3, 4, 5, tzinfo=UTC), "0123abcd") == (
        "mem_00010102_030405_0123abcd"
    )


def _lines(*rows: object) -> bytes:
    return b"\n".join(r if isinstance(r, bytes) else json.dumps(r).encode() for r in rows)


def _errors(data: bytes) -> dict[int, str]:
    plan = read_import(data, tz=TOKYO, now=NOW)
    return {i.line: i.error for i in plan.invalid}


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"user": "x", "at": 12345}, "at"),
        ({"user": "x", "at": "9999-12-31T23:59:59"}, "at"),
        ({"user": "x", "at": "0001-01-01T00:00:00"}, "at"),
        ({"user": "x", "at": "2025-02-30T10:00:00"}, "at"),
        ({"user": "x", "at": "2025-01-01T10:00:00+25:00"}, "at"),
        ({"user": "x", "at": float("nan")}, "at"),
        ({"user": "x", "at": {"y": 2025}}, "at"),
        ({"user": 12}, "user"),
        ({"user": None}, "user"),
        ({"user": ["a"]}, "user"),
        ({"user": ""}, "user"),
        ({"user": " \t"}, "user"),
        ({"user": "\u0000"}, "user"),
        ({"assistant": "only the reply"}, "user"),
        ({"user": "x", "assistant": 1.5}, "assistant"),
        ({"user": "x", "assistant": {"text": "y"}}, "assistant"),
        ({"user": "x", "session": 1.5}, "session"),
        ({"user": "x", "session": ""}, "session"),
        ({"user": "x", "session": True}, "session"),
        ({"user": "x", "source_id": {"a": 1}}, "source_id"),
        ({"user": "x", "source_id": "\ud800"}, "source_id"),
        ({"user": "x", "source_id": -(10**30) * 1.0}, "source_id"),
        (["user", "x"], "line"),
        ("just a string", "line"),
        (None, "line"),
    ],
)
def test_each_bad_line_is_named_with_its_field(row: object, field: str) -> None:
    data = _lines({"user": "good"}, row, {"user": "also good"})
    errors = _errors(data)
    assert list(errors) == [2], errors
    assert errors[2].startswith(f"line 2: {field} "), errors[2]


@pytest.mark.parametrize(
    ("raw", "what"),
    [
        (b'{"user": "x"', "not JSON"),
        (b'{"user": "\xff\xfe"}', "not UTF-8"),
        (b'{"user": "a\x00b"}', "not JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "JSON"),
        (b'{"user": "x", "at": ' + b"9" * 5000 + b"}", "JSON"),
    ],
)
def test_unreadable_lines_are_reported_not_raised(raw: bytes, what: str) -> None:
    errors = _errors(_lines({"user": "good"}, raw))
    assert what in errors[2], errors


def test_bom_crlf_blank_lines_and_null_fields_are_fine() -> None:
    data = (
        b"\xef\xbb\xbf"
        + _lines(
            {"user": "first", "assistant": None, "at": None, "session": None},
            b"",
            b"   ",
            {"user": "second", "source_id": 42, "session": 7, "extra": [1, 2]},
        ).replace(b"\n", b"\r\n")
        + b"\r\n"
    )
    plan = read_import(data, tz=TOKYO, now=NOW)
    assert plan.invalid == ()
    assert [(t.line, t.user, t.source_id, t.session_id) for t in plan.turns] == [
        (1, "first", None, None),
        (4, "second", "42", "7"),
    ]


def test_naive_and_aware_times_are_both_read() -> None:
    plan = read_import(
        _lines(
            {"user": "a", "at": "2025-01-15T14:30:52"},
            {"user": "b", "at": "2025-01-15T05:30:52Z"},
        ),
        tz=TOKYO,
        now=NOW,
    )
    first, second = plan.turns
    assert first.at == second.at == datetime(2025, 1, 15, 14, 30, 52, tzinfo=TOKYO)


def test_a_huge_value_gives_a_short_message() -> None:
    errors = _errors(_lines({"user": "x", "session": "s" * 2_000_000}))
    assert len(errors[1]) <= 300


def test_a_plan_lists_turns_and_invalid_lines_in_order() -> None:
    plan = read_import(_lines({"user": "a"}, {"user": 1}, {"user": "c"}), tz=TOKYO, now=NOW)
    assert [type(x) for x in (*plan.turns, *plan.invalid)] == [
        ImportTurn,
        ImportTurn,
        InvalidLine,
    ]
    assert [t.line for t in plan.turns] == [1, 3]
