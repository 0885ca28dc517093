"""When a thread of working memory ends (spec 003 §3.2 スレッド判定)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kioku.core.context import ThreadEnd, ThreadPolicy, thread_end, topic_change
from kioku.errors import ValidationError

POLICY = ThreadPolicy()
NOW = datetime(2026, 1, 18, 12, 0, tzinfo=UTC)


def end(
    *,
    seconds_since: float | None = 60.0,
    similarity: float | None = 0.9,
    text: str = "それで、どうなったの？",
    turns: int = 3,
    policy: ThreadPolicy = POLICY,
) -> ThreadEnd | None:
    previous = None if seconds_since is None else NOW - timedelta(seconds=seconds_since)
    return thread_end(
        previous_at=previous,
        now=NOW,
        similarity=similarity,
        text=text,
        turns=turns,
        policy=policy,
    )


def test_defaults_of_the_spec() -> None:
    assert POLICY.similarity_threshold == 0.75
    assert POLICY.idle_seconds == 600.0
    assert POLICY.max_turns == 12
    assert "ところで" in POLICY.topic_phrases
    assert "by the way" in POLICY.topic_phrases


def test_a_continuing_thread() -> None:
    assert end() is None
    assert end(seconds_since=None, turns=0) is None  # the first message of a thread


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [(599.999, None), (600.0, None), (600.001, ThreadEnd.IDLE), (86400.0, ThreadEnd.IDLE)],
)
def test_idle_ends_the_thread_after_ten_minutes(seconds: float, expected: ThreadEnd | None) -> None:
    assert end(seconds_since=seconds) is expected


def test_clock_going_backwards_is_not_idle() -> None:
    assert end(seconds_since=-3600.0) is None


@pytest.mark.parametrize(
    ("similarity", "expected"),
    [(0.9, None), (0.75, None), (0.7499, ThreadEnd.SIMILARITY), (0.1, ThreadEnd.SIMILARITY)],
)
def test_low_similarity_ends_the_thread(similarity: float, expected: ThreadEnd | None) -> None:
    assert end(similarity=similarity) is expected


def test_similarity_needs_a_thread_and_a_value() -> None:
    assert end(similarity=0.1, turns=0) is None
    assert end(similarity=None) is None
    assert end(similarity=0.1, policy=ThreadPolicy(similarity_threshold=None)) is None


@pytest.mark.parametrize(
    ("turns", "expected"), [(11, None), (12, ThreadEnd.CAP), (30, ThreadEnd.CAP)]
)
def test_turn_cap(turns: int, expected: ThreadEnd | None) -> None:
    assert end(turns=turns) is expected
    assert end(turns=turns, policy=ThreadPolicy(max_turns=40)) is None


@pytest.mark.parametrize(
    "text",
    [
        "ところで、明日の予定は？",
        "  「ところで」って言いたかっただけ",
        "あ、ところで映画見た？",
        "話は変わるけど、新しいカフェができたらしい",
        "話は変わるが、例の件はどうなった？",
        "By the way, did you see the game?",
        "by the way did you see the game",
        "Anyway, let's talk about the trip.",
        "anyway",
        "...anyway!",
        "Oh, by the way, I moved to Tokyo.",
        "BTW the build is green again",
        "Changing the subject: what about dinner?",
    ],
)
def test_topic_change_phrases(text: str) -> None:
    assert topic_change(text, POLICY)
    assert end(text=text) is ThreadEnd.TOPIC


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "I did not mean it in any way.",
        "I did it anyway",
        "anywayz is my username",
        "It was, by the way, a good movie.",
        "そのところでは問題なかった",
        "ところてんが食べたい",
        "btwn the lines",
        "Hello there, how are you doing today? By the way",
    ],
)
def test_not_a_topic_change(text: str) -> None:
    assert not topic_change(text, POLICY)


def test_custom_topic_phrases() -> None:
    policy = ThreadPolicy(topic_phrases=("Speaking of which",))
    assert topic_change("speaking of which, the train was late", policy)
    assert not topic_change("ところで、元気？", policy)


def test_rules_are_checked_in_order() -> None:
    # idle wins over everything, then the topic phrase, then similarity, then the cap
    assert end(seconds_since=700, similarity=0.1, text="ところで", turns=12) is ThreadEnd.IDLE
    assert end(similarity=0.1, text="ところで", turns=12) is ThreadEnd.TOPIC
    assert end(similarity=0.1, turns=12) is ThreadEnd.SIMILARITY
    assert end(turns=12) is ThreadEnd.CAP


def test_naive_and_aware_datetimes_do_not_mix() -> None:
    with pytest.raises(ValidationError):
        thread_end(
            previous_at=datetime(2026, 1, 18, 11, 0),
            now=NOW,
            similarity=None,
            text="",
            turns=1,
            policy=POLICY,
        )
    naive_now = datetime(2026, 1, 18, 12, 0)
    assert (
        thread_end(
            previous_at=naive_now - timedelta(minutes=10, seconds=1),
            now=naive_now,
            similarity=None,
            text="",
            turns=1,
            policy=POLICY,
        )
        is ThreadEnd.IDLE
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"similarity_threshold": 1.5},
        {"similarity_threshold": "high"},
        {"idle_seconds": 0},
        {"idle_seconds": -1.0},
        {"max_turns": 0},
        {"max_turns": 2.5},
        {"topic_phrases": ("ところで", "")},
        {"topic_phrases": ["ところで"]},
    ],
)
def test_invalid_thread_policy(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError) as excinfo:
        ThreadPolicy(**kwargs)  # type: ignore[arg-type]
    assert excinfo.value.hint


def test_thread_end_values_are_strings() -> None:
    assert ThreadEnd.IDLE == "idle"
    assert {e.value for e in ThreadEnd} == {"similarity", "idle", "cap", "topic"}
