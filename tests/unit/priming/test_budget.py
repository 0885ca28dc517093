"""Sharing the priming budget among the channels, and filling a channel with lines."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.core.context.tokens import make_counter
from kioku.core.priming import (
    CHANNEL_BUDGETS,
    TYPE_BUDGETS,
    Channel,
    MessageType,
    allocate,
    fit_lines,
)
from kioku.errors import ValidationError

#: Property tests check logic, not speed: no deadline; the costlier ones draw fewer examples.
QUICK = settings(deadline=None)
SMALL = settings(QUICK, max_examples=40)
A, B, C, D, E = list(Channel)
CAPS = dict(CHANNEL_BUDGETS)
totals = st.integers(min_value=0, max_value=5000)
wants = st.dictionaries(st.sampled_from(list(Channel)), st.integers(min_value=0, max_value=2000))


def ideal(total: int, wanted: dict[Channel, int]) -> dict[Channel, Fraction]:
    """The exact shares: proportional to the caps, limited channels fixed, the rest refilled."""
    limits = {c: min(cap, wanted.get(c, cap)) for c, cap in CAPS.items()}
    left = Fraction(min(total, sum(limits.values())))
    shares = {c: Fraction(0) for c in CAPS}
    active = [c for c in CAPS if limits[c] > 0]
    while active:
        scale = left / sum(CAPS[c] for c in active)
        full = [c for c in active if limits[c] <= scale * CAPS[c]]
        if not full:
            shares.update({c: scale * CAPS[c] for c in active})
            break
        for c in full:
            shares[c] = Fraction(limits[c])
            left -= limits[c]
            active.remove(c)
    return shares


def test_channels_and_budgets_follow_the_spec() -> None:
    assert [c.value for c in Channel] == [
        "sender_profile",
        "recent_activity",
        "related_knowledge",
        "procedures",
        "episodes",
    ]
    assert [c.letter for c in Channel] == ["A", "B", "C", "D", "E"]
    assert CAPS == {A: 500, B: 1300, C: 700, D: 200, E: 800}


def test_a_total_above_the_caps_gives_every_channel_its_cap() -> None:
    assert allocate(10_000) == CAPS
    assert allocate(3500) == CAPS


def test_the_request_budget_is_scaled_down_in_proportion() -> None:
    got = allocate(TYPE_BUDGETS[MessageType.REQUEST])
    assert got == {A: 429, B: 1114, C: 600, D: 171, E: 686}
    assert sum(got.values()) == 3000


def test_a_channel_with_little_to_show_leaves_its_share_to_the_others() -> None:
    plain = allocate(1500)
    quiet = allocate(1500, {B: 100})
    assert quiet[B] == 100
    assert sum(quiet.values()) == 1500
    assert all(quiet[c] > plain[c] for c in (A, C, D, E))
    # In proportion to the caps of the others: A gets 5/7 of C's tokens, to rounding.
    assert quiet[A] == pytest.approx(quiet[C] * 500 / 700, abs=1)


def test_when_nobody_wants_much_the_total_is_not_filled() -> None:
    got = allocate(3000, dict.fromkeys(Channel, 10))
    assert got == dict.fromkeys(Channel, 10)
    assert allocate(0) == dict.fromkeys(Channel, 0)


@settings(QUICK)
@given(totals, wants)
def test_allocation_sums_and_limits(total: int, wanted: dict[Channel, int]) -> None:
    got = allocate(total, wanted)
    assert list(got) == list(Channel)
    limits = {c: min(CAPS[c], wanted.get(c, CAPS[c])) for c in Channel}
    assert all(0 <= got[c] <= limits[c] for c in Channel)
    assert sum(got.values()) == min(total, sum(limits.values()))


@settings(QUICK)
@given(totals, wants)
def test_allocation_is_within_one_token_of_the_exact_share(
    total: int, wanted: dict[Channel, int]
) -> None:
    got = allocate(total, wanted)
    exact = ideal(total, wanted)
    assert all(abs(got[c] - exact[c]) < 1 for c in Channel)


@settings(SMALL)
@given(totals, totals, wants)
def test_more_budget_never_gives_a_channel_less(a: int, b: int, wanted: dict[Channel, int]) -> None:
    small, large = sorted((a, b))
    low, high = allocate(small, wanted), allocate(large, wanted)
    assert all(low[c] <= high[c] for c in Channel)


@settings(SMALL)
@given(totals, wants, st.sampled_from(list(Channel)), st.integers(0, 2000), st.integers(0, 2000))
def test_wanting_more_never_gives_a_channel_less(
    total: int, wanted: dict[Channel, int], channel: Channel, a: int, b: int
) -> None:
    less, more = sorted((a, b))
    low = allocate(total, {**wanted, channel: less})
    high = allocate(total, {**wanted, channel: more})
    assert low[channel] <= high[channel]
    assert all(high[c] <= low[c] for c in Channel if c != channel)


@settings(SMALL)
@given(totals, wants)
def test_allocation_is_deterministic(total: int, wanted: dict[Channel, int]) -> None:
    assert allocate(total, wanted) == allocate(total, dict(reversed(list(wanted.items()))))


@pytest.mark.parametrize(
    ("total", "wanted", "field"),
    [
        (-1, None, "total"),
        (True, None, "total"),
        (10, {A: -5}, "wanted[sender_profile]"),
        (10, {"nope": 5}, "channel"),
    ],
)
def test_allocate_rejects_bad_input(total: object, wanted: object, field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        allocate(total, wanted)  # type: ignore[arg-type]
    assert caught.value.field == field


# -- fit_lines ------------------------------------------------------------------------------

COUNTER = make_counter("estimate")
lines_st = st.lists(st.text(max_size=60), max_size=20)


def test_fit_lines_skips_a_line_that_does_not_fit_and_tries_the_next() -> None:
    short, long = "a short note", "a much longer line " * 20
    budget = COUNTER.count(short) * 2
    assert COUNTER.count(long) > budget
    kept, skipped = fit_lines([short, long, short], budget, COUNTER)
    assert kept == [short, short]
    assert skipped == 1


def test_fit_lines_keeps_everything_that_fits_and_nothing_for_zero() -> None:
    lines = ["one", "two", "三つ目の行"]
    total = sum(COUNTER.count(x) for x in lines)
    assert fit_lines(lines, total, COUNTER) == (lines, 0)
    assert fit_lines(lines, total - 1, COUNTER)[1] == 1
    assert fit_lines(lines, 0, COUNTER) == ([], 3)
    assert fit_lines([], 10, COUNTER) == ([], 0)


@settings(SMALL)
@given(lines_st, st.integers(min_value=0, max_value=200))
def test_fit_lines_never_exceeds_the_budget(lines: list[str], budget: int) -> None:
    kept, skipped = fit_lines(lines, budget, COUNTER)
    assert sum(COUNTER.count(x) for x in kept) <= budget
    assert skipped == len(lines) - len(kept) >= 0
    # The kept lines are the input's, in order (a subsequence).
    rest = iter(lines)
    assert all(any(x == y for y in rest) for x in kept)


@settings(SMALL)
@given(lines_st, st.integers(min_value=0, max_value=200))
def test_fit_lines_skips_only_lines_that_did_not_fit(lines: list[str], budget: int) -> None:
    kept, _ = fit_lines(lines, budget, COUNTER)
    used, position = 0, 0
    for line in lines:
        cost = COUNTER.count(line)
        if position < len(kept) and kept[position] == line and used + cost <= budget:
            used += cost
            position += 1
        else:
            assert used + cost > budget
    assert position == len(kept)


def test_fit_lines_rejects_a_negative_budget() -> None:
    with pytest.raises(ValidationError):
        fit_lines(["x"], -1, COUNTER)
