"""The rules of remembering a turn through the Python API: empty turns are refused, times
are checked, ids keep their shape, and an exact duplicate is stored once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku, ValidationError
from kioku.adapters.clock import FixedClock
from kioku.core.ids import ID_PATTERN
from kioku.errors import HomeNotFoundError, KiokuError

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 1, 18, 18, 0, tzinfo=TOKYO)


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        yield k


@pytest.mark.parametrize(("user", "assistant"), [("", ""), ("  ", "\n"), ("\x00\x01", "\u200b")])
def test_an_empty_turn_is_refused_and_nothing_is_stored(
    kioku: Kioku, user: str, assistant: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        kioku.remember_turn(user, assistant)
    assert isinstance(caught.value, KiokuError)
    assert caught.value.field == "user"
    assert kioku.count() == 0


def test_a_turn_with_only_a_reply_is_stored(kioku: Kioku) -> None:
    memory, _ = kioku.remember_turn("", "Good morning! Shall we continue the migration?")
    assert memory.content.startswith("Good morning")


@pytest.mark.parametrize(
    "at",
    [
        datetime(1, 1, 1, tzinfo=TOKYO),
        datetime(1969, 12, 31, tzinfo=TOKYO),
        datetime(9999, 12, 31, tzinfo=TOKYO),
        NOW + timedelta(days=2),
    ],
)
def test_times_out_of_range_are_refused_everywhere(kioku: Kioku, at: datetime) -> None:
    with pytest.raises(ValidationError, match="1970-01-01"):
        kioku.remember_turn("hello", "hi", at=at)
    with pytest.raises(ValidationError, match="1970-01-01"):
        kioku.remember("t", "c", intensity=40, category="work", at=at)
    with pytest.raises(ValidationError):
        kioku.remember_turn("hello", "hi", source_timestamps=[at])
    assert kioku.count() == 0


def test_the_earliest_time_gives_a_well_formed_id(kioku: Kioku) -> None:
    at = datetime(1970, 1, 1, 9, 0, tzinfo=TOKYO)  # 00:00 UTC
    memory, _ = kioku.remember_turn("an old note", at=at)
    assert ID_PATTERN.match(memory.id), memory.id
    assert memory.id.startswith("mem_19700101_090000_")


def test_a_naive_time_is_local_time(kioku: Kioku) -> None:
    memory, _ = kioku.remember_turn("lunch", at=datetime(2026, 1, 18, 12, 0))
    assert memory.created == datetime(2026, 1, 18, 12, 0, tzinfo=TOKYO)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"session_id": ""},
        {"session_id": "a\x00b"},
        {"source_ids": ["ok", ""]},
        {"source_ids": "one-string"},
        {"source_ids": ["\udc80"]},
    ],
)
def test_bad_provenance_is_refused(kioku: Kioku, kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        kioku.remember_turn("hello", **kwargs)  # type: ignore[arg-type]
    assert kioku.count() == 0


def test_the_same_turn_twice_is_stored_once(kioku: Kioku) -> None:
    first = kioku.remember_turn("The deploy failed again", "Let's check the volume", at=NOW)
    again = kioku.remember_turn(
        "The deploy failed again", "Let's check the volume", at=NOW + timedelta(seconds=30)
    )
    assert first.known is False
    assert again.known is True
    assert again.memory.id == first.memory.id
    memory, analysis = again  # still unpacks as (memory, analysis)
    assert memory == first.memory
    assert analysis.trigger == first.analysis.trigger
    assert kioku.count() == 1


def test_same_source_id_and_text_is_a_duplicate(kioku: Kioku) -> None:
    kioku.remember_turn("hello", "hi", at=NOW, source_ids=["chat:1"])
    assert kioku.remember_turn("hello", "hi", at=NOW, source_ids=["chat:1"]).known
    assert kioku.count() == 1


@pytest.mark.parametrize(
    "change",
    [
        {"at": NOW + timedelta(seconds=60)},
        {"at": NOW - timedelta(minutes=5)},
        {"session_id": "other"},
        {"source_ids": ["chat:2"]},
        {"assistant": "a different reply"},
    ],
)
def test_a_turn_that_differs_is_a_new_memory(kioku: Kioku, change: dict[str, object]) -> None:
    base: dict[str, object] = {"assistant": "hi", "at": NOW, "session_id": "s", "source_ids": []}
    kioku.remember_turn("hello", **base)  # type: ignore[arg-type]
    second = kioku.remember_turn("hello", **{**base, **change})  # type: ignore[arg-type]
    assert not second.known
    assert kioku.count() == 2


def test_duplicates_are_scoped_by_owner(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="alice") as alice:
        alice.remember_turn("hello", "hi", at=NOW)
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="bob") as bob:
        assert not bob.remember_turn("hello", "hi", at=NOW).known
        assert bob.count() == 1


def test_open_without_create_refuses_a_missing_store(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    with Kioku.open(missing, env={}, create=False) as k:
        with pytest.raises(HomeNotFoundError) as caught:
            k.count()
        assert caught.value.exit_code == 2
        assert str(missing) in str(caught.value)
        assert "kioku init" in str(caught.value)
    assert not missing.exists()
