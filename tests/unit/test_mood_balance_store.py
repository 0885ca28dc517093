"""The mood balance safeguards on a real SQLite store: a user in a low mood is primed no more
negative intense memories in a row than the limiter allows, still finds the memory a prompt
asks for, and the monitor counts what was primed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.config.schema import MoodConfig
from kioku.core.model import Memory, Valence
from kioku.core.priming.budget import Channel
from kioku.errors import ValidationError
from kioku.service.recall.balance import mood_balance
from kioku.service.recall.mood import SessionMood, session_key
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 3, 10, 9, 0, tzinfo=TOKYO)
SESSION = "low"
TOPIC = "lighthouse harbour"
HEAVY = ("gravel", "anchor", "storm", "wreck", "fog", "gale", "rust", "flood")
LIGHT = {"positive": ("sunrise", "picnic", "kites"), "neutral": ("timetable",)}


def _stock(k: Kioku) -> dict[str, Memory]:
    found: dict[str, Memory] = {}
    for n, word in enumerate(HEAVY):
        found[word] = k.remember(
            f"the {TOPIC} and the {word}",
            f"{TOPIC} {word}: I felt crushed and hopeless",
            intensity=80,
            category="emotional",
            valence="negative",
            arousal=30,
            tags=["sadness"],
            at=NOW - timedelta(days=5, hours=n),
        )
    for valence, words in LIGHT.items():
        for n, word in enumerate(words):
            found[word] = k.remember(
                f"the {TOPIC} and the {word}",
                f"{TOPIC} {word}: a plain day",
                intensity=75 if valence == "positive" else 25,
                category="casual",
                valence=valence,
                arousal=40,
                tags=["joy"] if valence == "positive" else [],
                at=NOW - timedelta(days=4, hours=n),
            )
    return found


@pytest.fixture
def low(tmp_path: Path) -> Iterator[tuple[Kioku, dict[str, Memory], FixedClock]]:
    clock = FixedClock(NOW)
    with Kioku.open(tmp_path / "home", clock=clock, env={}) as k:
        yield k, _stock(k), clock


@pytest.fixture(params=["sqlite", "postgres"])
def low_any(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Kioku, dict[str, Memory], FixedClock]]:
    """``low`` on either store: PostgreSQL in a schema of the test's own."""
    env: dict[str, str] = {}
    schema = "mood_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    if request.param == "postgres":
        env = {"KIOKU_STORE_URL": request.getfixturevalue("postgres_url")}
        env["KIOKU_STORE__SCHEMA"] = schema
    clock = FixedClock(NOW)
    try:
        with Kioku.open(tmp_path / "home", clock=clock, env=env) as k:
            yield k, _stock(k), clock
    finally:
        if request.param == "postgres":
            admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _low_mood(k: Kioku, memory: Memory) -> None:
    k.store.set_state(session_key(SESSION), SessionMood.of(memory).to_json())


def _primed_run(k: Kioku, memories: dict[str, Memory], clock: FixedClock, n: int) -> list[str]:
    """``n`` prompts about the topic in a low mood; the ids primed, in order."""
    primed: list[str] = []
    for _ in range(n):
        _low_mood(k, memories["storm"])
        primed += k.prime(f"How is the {TOPIC}?", session_id=SESSION).memory_ids
        clock.advance(timedelta(minutes=10))
    return primed


def _heavy(memories: dict[str, Memory], ids: list[str]) -> list[bool]:
    by_id = {m.id: m for m in memories.values()}
    return [
        by_id[i].emotional_valence is Valence.NEGATIVE and by_id[i].emotional_intensity >= 61
        for i in ids
    ]


def test_a_low_mood_run_stays_within_the_limit_and_the_monitor_counts_it(
    low_any: tuple[Kioku, dict[str, Memory], FixedClock],
) -> None:
    k, memories, clock = low_any
    cfg = k.config.mood
    heavy = _heavy(memories, _primed_run(k, memories, clock, 6))
    assert len(heavy) >= 20
    for end in range(cfg.window, len(heavy) + 1):
        assert sum(heavy[end - cfg.window : end]) <= 3, heavy
    balance = mood_balance(k, 2)
    today = balance.days[-1]
    assert today.day == NOW.date().isoformat()
    assert today.total == len(heavy)
    assert today.heavy == sum(heavy)
    assert balance.days[0].total == 0
    # What was ranked down is still found by deliberate search, and a recall says so.
    _low_mood(k, memories["storm"])
    result = k.recall(f"How is the {TOPIC}?", session_id=SESSION, mark=False)
    assert result.limited
    found = {f.memory.id for f in k.search_memory(TOPIC, top_k=20).items}
    assert set(result.limited) <= found
    again = k.prime(f"How is the {TOPIC}?", session_id=SESSION, mark=False)
    episodes = next(f for f in again.channels if f.channel is Channel.EPISODES)
    assert episodes.reasons
    assert all("mood limiter ranked" in why for why in episodes.reasons)
    # The memory a prompt singles out is primed even when the limit is reached.
    asked = k.prime(f"the {TOPIC} and the gale?", session_id=SESSION, mark=False)
    assert memories["gale"].id in asked.memory_ids


def test_without_the_limiter_the_same_run_goes_past_it(
    low: tuple[Kioku, dict[str, Memory], FixedClock],
) -> None:
    k, memories, clock = low
    k.config = replace(k.config, mood=MoodConfig(limiter=False))
    heavy = _heavy(memories, _primed_run(k, memories, clock, 4))
    assert max(sum(heavy[e - 10 : e]) for e in range(10, len(heavy) + 1)) > 3


def test_the_mood_shift_lets_a_positive_memory_lead(
    low: tuple[Kioku, dict[str, Memory], FixedClock],
) -> None:
    k, memories, _ = low
    k.config = replace(k.config, mood=MoodConfig(limiter=False))
    _low_mood(k, memories["storm"])
    plain = k.recall(f"How is the {TOPIC}?", session_id=SESSION, mark=False)
    shifted = k.recall(f"How is the {TOPIC}?", session_id=SESSION, mark=False, mood_shift=True)
    assert not plain.mood_shifted
    assert shifted.mood_shifted
    assert plain.items[0].memory.emotional_valence is Valence.NEGATIVE
    assert shifted.items[0].memory.emotional_valence is Valence.POSITIVE
    # Off topic stays off topic, whatever the mood.
    assert not k.recall("quantum chromodynamics", session_id=SESSION, mood_shift=True).items
    # With the setting on, a call may still turn it off.
    k.config = replace(k.config, mood=MoodConfig(limiter=False, shift=True))
    again = k.recall(f"How is the {TOPIC}?", session_id=SESSION, mark=False)
    off = k.recall(f"How is the {TOPIC}?", session_id=SESSION, mark=False, mood_shift=False)
    assert again.mood_shifted
    assert not off.mood_shifted


def test_the_monitor_refuses_a_bad_number_of_days(
    low: tuple[Kioku, dict[str, Memory], FixedClock],
) -> None:
    k, _, _ = low
    with pytest.raises(ValidationError, match="days"):
        mood_balance(k, 0)


def test_traces_left_after_a_recall_are_counted_by_the_monitor(
    low: tuple[Kioku, dict[str, Memory], FixedClock],
) -> None:
    k, _, _ = low
    result = k.recall(f"How is the {TOPIC}?", mark=False)
    assert result.items
    assert mood_balance(k, 1).days[-1].total == 0
    k.leave_traces(result)
    assert mood_balance(k, 1).days[-1].total == len(result.items)
