"""Tests of the unified activity log, and the event builders and strategies they share."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import strategies as st

from kioku.core.activity import ActivityEvent, EventType, PrimedActivity, format_for_priming
from kioku.core.context.tokens import make_counter

TOKYO = ZoneInfo("Asia/Tokyo")
COUNTER = make_counter("estimate")


def at(hour: int, minute: int = 0, day: int = 17, *, second: int = 0) -> datetime:
    """A moment of February 2026 on the Tokyo clock."""
    return datetime(2026, 2, day, hour, minute, second, tzinfo=TOKYO)


# Zones whose offset never depends on the date (fold), so equal instants compare equal.
ZONES = st.sampled_from(
    [
        UTC,
        TOKYO,
        timezone(timedelta(hours=9)),
        timezone(timedelta(hours=-5, minutes=-30)),
        timezone(timedelta(hours=5, minutes=45)),
    ]
)
#: Any text at all: controls, escape sequences, lone surrogates, line separators.
ANY_TEXT = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(exclude_categories=()), max_size=8),
        st.sampled_from(["\x1b[2J", "\x1b]0;t\x07", "\r\n", "\u2028", "\x85", "\ud800"]),
    ),
    max_size=5,
).map("".join)
LONG_TEXT = st.one_of(ANY_TEXT, st.text(min_size=190, max_size=420), st.just("検索" * 130))
NAMES = st.one_of(st.sampled_from(["", "rin", "sora", "ユーザー", "backup"]), ANY_TEXT)
META_VALUES = st.one_of(
    ANY_TEXT,
    st.integers(min_value=-(2**53), max_value=2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)
META = st.dictionaries(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10),
    META_VALUES,
    max_size=3,
).map(lambda mapping: tuple(mapping.items()))


def events(
    times: st.SearchStrategy[datetime] | None = None,
) -> st.SearchStrategy[ActivityEvent]:
    """Valid events with any text in them; ``times`` defaults to any moment of 2020–2030."""
    moments = (
        times
        if times is not None
        else st.datetimes(
            min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1), timezones=ZONES
        )
    )
    return st.builds(
        ActivityEvent,
        ts=moments,
        type=st.sampled_from(list(EventType)),
        content=LONG_TEXT,
        from_=NAMES,
        to=NAMES,
        channel=NAMES,
        tool=NAMES,
        via=NAMES,
        summary=LONG_TEXT,
        task=NAMES,
        exit_code=st.one_of(st.none(), st.integers(min_value=-3, max_value=300)),
        session_id=NAMES,
        memory_ids=st.lists(
            st.text(alphabet="abcdefghij-0123456789", min_size=1, max_size=12), max_size=3
        ).map(tuple),
        user_id=NAMES,
        agent_id=NAMES,
        meta=META,
    )


#: Moments bunched within three days around 2026-02-17, so groups and day changes occur.
NEARBY = st.builds(
    lambda minutes, zone: (at(0) + timedelta(minutes=minutes)).astimezone(zone),
    st.integers(min_value=-2 * 24 * 60, max_value=24 * 60),
    ZONES,
)


NOW = at(18, 30)


def show(items: Sequence[ActivityEvent], budget: int = 1300, **options: Any) -> PrimedActivity:
    """The priming text of ``items`` at 18:30 with the estimate counter, unless told otherwise."""
    options.setdefault("now", NOW)
    return format_for_priming(items, budget, options.pop("counter", COUNTER), **options)


def dm(when: datetime, text: str, peer: str = "rin", *, sent: bool = True) -> ActivityEvent:
    """A direct message to ``peer`` (or from, when not ``sent``)."""
    if sent:
        return ActivityEvent(when, EventType.DM_SENT, text, to=peer)
    return ActivityEvent(when, EventType.DM_RECEIVED, text, from_=peer)
