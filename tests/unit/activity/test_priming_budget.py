"""Recent activity for priming within a token budget: what is kept, what is left out."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.core.activity import ActivityEvent, EventType, PrimedActivity, check_event
from kioku.core.sanitize import FORBIDDEN
from kioku.errors import ValidationError
from tests.unit.activity import COUNTER, NEARBY, at, dm, events, show

E = EventType


class SquareCounter:
    """A counter whose count of a joined text far exceeds the sum of its parts."""

    @property
    def name(self) -> str:
        return "square"

    def count(self, text: str) -> int:
        return len(text) ** 2 // 400


DAY = [ActivityEvent(at(9, minute), E.ERROR, f"event number {minute}") for minute in range(30)]


def test_a_zero_budget_shows_nothing() -> None:
    result = show(DAY, 0)
    assert result == PrimedActivity(text="", tokens=0, budget=0, shown=(), omitted=tuple(range(30)))


def test_a_tiny_budget_shows_only_what_fits() -> None:
    one_line = COUNTER.count("[09:29] ERR event number 29")
    assert show(DAY, one_line - 1).text == ""
    assert show(DAY, one_line).text == "[09:29] ERR event number 29"


def test_a_huge_budget_shows_everything() -> None:
    result = show(DAY, 10**9)
    assert result.shown == tuple(range(30))
    assert len(result.text.splitlines()) == 30


def test_the_newest_events_are_kept_and_listed_oldest_first() -> None:
    result = show(DAY, 40)
    assert 0 < len(result.shown) < 30
    assert result.shown == tuple(range(30 - len(result.shown), 30))
    assert result.omitted == tuple(range(30 - len(result.shown)))
    assert result.text.splitlines()[-1] == "[09:29] ERR event number 29"
    assert result.tokens <= 40


def test_a_heartbeat_gets_at_least_its_minimum() -> None:
    assert show(DAY, 50, heartbeat=True).budget == 400
    assert show(DAY, 50, heartbeat=True, min_tokens_heartbeat=120).budget == 120
    assert show(DAY, 900, heartbeat=True).budget == 900
    assert show(DAY, 50).budget == 50
    assert len(show(DAY, 50, heartbeat=True).shown) > len(show(DAY, 50).shown)


def test_a_long_dm_group_keeps_its_newest_messages_and_nothing_older() -> None:
    items = [ActivityEvent(at(8), E.ERROR, "older")]
    items += [dm(at(9, minute), f"message {minute}") for minute in range(20)]
    result = show(items, 60)
    lines = result.text.splitlines()
    assert "earlier)" in lines[0]
    assert lines[0].startswith("[09:")
    assert lines[-2] == "  [09:19] DM> message 19"
    assert 0 not in result.shown
    hidden = 21 - len(result.shown)
    assert lines[0].endswith(f"(+{hidden - 1} earlier)")
    assert result.tokens <= 60


def test_the_budget_holds_for_a_counter_that_is_not_additive() -> None:
    counter = SquareCounter()
    result = show(DAY, 10, counter=counter)
    assert result.tokens == counter.count(result.text) <= 10
    assert result.shown  # something short enough still fits
    assert result.shown == tuple(range(30 - len(result.shown), 30))


def test_invalid_events_are_left_out_not_raised() -> None:
    naive = ActivityEvent(datetime(2026, 2, 17, 9), E.ERROR, "naive")
    result = show([naive, ActivityEvent(at(9), E.ERROR, "fine")])
    assert result.text == "[09:00] ERR fine"
    assert result.omitted == (0,)


@pytest.mark.parametrize(
    ("budget", "options", "field"),
    [
        (-1, {}, "budget_tokens"),
        (10, {"min_tokens_heartbeat": -5}, "min_tokens_heartbeat"),
        (10, {"now": datetime(2026, 2, 17)}, "now"),
        (10, {"line_numbers": {0: 0}}, "line_numbers[0]"),
    ],
)
def test_bad_arguments_are_rejected(budget: int, options: Mapping[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        show(DAY, budget, **options)
    assert caught.value.field == field


# --- properties --------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(events(NEARBY), max_size=25),
    budget=st.integers(min_value=0, max_value=1500),
    heartbeat=st.booleans(),
    numbered=st.booleans(),
)
def test_never_over_budget_always_in_time_order(
    items: list[ActivityEvent], budget: int, heartbeat: bool, numbered: bool
) -> None:
    lines = {index: index + 1 for index in range(len(items))} if numbered else None
    result = show(items, budget, heartbeat=heartbeat, line_numbers=lines)
    limit = max(budget, 400) if heartbeat else budget
    assert result.budget == limit
    assert result.tokens == (COUNTER.count(result.text) if result.text else 0) <= limit
    times = [check_event(items[index]).ts for index in result.shown]
    assert times == sorted(times)
    assert sorted(result.shown + result.omitted) == list(range(len(items)))
    assert not FORBIDDEN.search(result.text.replace("\n", ""))
    if result.shown:  # what is left out is older than what is shown
        assert all(check_event(items[i]).ts <= times[0] for i in result.omitted)


@settings(max_examples=60, deadline=None)
@given(items=st.lists(events(NEARBY), max_size=12), budget=st.integers(0, 300))
def test_never_over_budget_with_a_counter_that_is_not_additive(
    items: list[ActivityEvent], budget: int
) -> None:
    counter = SquareCounter()
    result = show(items, budget, counter=counter)
    assert counter.count(result.text) <= budget
