"""Only memories relevant to the prompt are recalled, whatever the session's mood (a real store)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku, Relation, RelationType
from kioku.adapters.clock import FixedClock
from kioku.ports.store import MemoryPatch

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=TOKYO)
OFF_TOPIC = [
    "How do I center a div in CSS?",
    "What is the capital of France?",
    "今日の天気はどうですか？",
    "Pythonでリストをソートするには？",
    "Write a haiku about autumn leaves",
]


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        yield k


@pytest.fixture
def moody(kioku: Kioku) -> dict[str, str]:
    """A store of emotional memories in Japanese and English, and a session whose mood is
    the strongest of them (furious about the build)."""
    ids = {}
    turns = {
        "build": ("ふざけんな！またビルドが壊れた！", "落ち着いて、ログを一緒に見ましょう"),
        "birthday": ("これは覚えておいて：来週の木曜は母の誕生日", "わかりました"),
        "dog": ("I'm heartbroken, my dog Momo died this morning", "I'm so sorry about Momo"),
        "deploy": ("The deploy failed again, I'm so frustrated", "Check the volume permissions"),
        "sushi": ("昨日お寿司を食べた、最高！", "いいですね、どこのお店ですか"),
        "db": ("We chose PostgreSQL for the server, such a relief", "A sound decision"),
    }
    for key, (user, assistant) in turns.items():
        memory, _ = kioku.remember_turn(user, assistant, session_id=f"old-{key}")
        ids[key] = memory.id
    # The session's mood: recalling the angry memory carries its emotion into session s1.
    first = kioku.recall("ビルドが壊れた", session_id="s1")
    assert first.items[0].memory.id == ids["build"]
    return ids


@pytest.mark.parametrize("prompt", OFF_TOPIC)
def test_an_off_topic_prompt_recalls_nothing_in_a_moody_session(
    kioku: Kioku, moody: dict[str, str], prompt: str
) -> None:
    result = kioku.recall(prompt, session_id="s1", mark=False)
    assert result.items == ()
    assert result.block == ""


@pytest.mark.parametrize(
    ("prompt", "key"),
    [
        ("母の誕生日はいつだっけ？", "birthday"),
        ("What happened to Momo?", "dog"),
        ("Which database did we choose for the server?", "db"),
        ("お寿司のお店はどこ？", "sushi"),
    ],
)
def test_an_on_topic_prompt_recalls_the_right_memory(
    kioku: Kioku, moody: dict[str, str], prompt: str, key: str
) -> None:
    result = kioku.recall(prompt, session_id="s1", mark=False)
    assert result.items[0].memory.id == moody[key]
    assert result.items[0].coverage >= result.floor > 0
    for item in result.items:
        assert item.coverage >= result.floor or item.via in ("context", "relation")


def test_the_mood_reorders_but_never_qualifies(kioku: Kioku, moody: dict[str, str]) -> None:
    calm = kioku.recall("deploy build frustrated", mark=False)
    angry = kioku.recall("deploy build frustrated", session_id="s1", mark=False)
    assert {i.memory.id for i in calm.items} == {i.memory.id for i in angry.items}
    assert all(i.coverage >= angry.floor for i in angry.items)


def test_related_memories_come_only_with_a_qualified_one(kioku: Kioku) -> None:
    anchor = kioku.remember("town meeting about roads", "council decided", intensity=50,
                            category="work").id  # fmt: skip
    detail = kioku.remember("zebra crossing repainted", "white stripes", intensity=90,
                            category="work").id  # fmt: skip
    kioku.store.update(anchor, MemoryPatch(relations=(Relation(detail, RelationType.SAME_TOPIC),)))
    assert kioku.recall("the capital of France", mark=False).items == ()
    items = kioku.recall("town meeting roads", mark=False).items
    assert [(i.memory.id, i.via) for i in items] == [(anchor, None), (detail, "relation")]


def test_the_turns_around_a_qualified_memory_come_as_its_context(kioku: Kioku) -> None:
    start = NOW - timedelta(hours=1)
    asked = kioku.remember("What did you cook for the party?", "asked about the menu",
                           intensity=50, category="casual", session_id="p",
                           at=start).id  # fmt: skip
    answer = kioku.remember("A lasagne with spinach", "the dish", intensity=50,
                            category="casual", session_id="p",
                            at=start + timedelta(minutes=1)).id  # fmt: skip
    items = {i.memory.id: i for i in kioku.recall("cook for the party", mark=False).items}
    assert items[asked].via is None
    assert items[answer].via == "context"
    assert items[answer].coverage < items[answer].context + 1  # came by context, not alone
    back = {i.memory.id: i.via for i in kioku.recall("lasagne with spinach", mark=False).items}
    assert back == {answer: None, asked: "context"}


def test_a_floor_of_zero_ranks_every_candidate(tmp_path: Path) -> None:
    env = {
        "KIOKU_RETRIEVAL__MIN_RELEVANCE": "0",
        "KIOKU_RETRIEVAL__REQUIRE_KNOWN_NAMES": "false",
    }
    with Kioku.open(tmp_path / "h", clock=FixedClock(NOW), env=env) as k:
        k.remember("Kyoto trip planning", "temples and tea", intensity=50, category="casual")
        assert len(k.recall("trip to Osaka next spring", mark=False).items) == 1


def test_a_prompt_naming_only_unknown_names_recalls_nothing(kioku: Kioku) -> None:
    trip = kioku.remember("Trip planning with Aiko", "temples and tea in Kyoto", intensity=60,
                          category="casual").id  # fmt: skip
    kioku.remember("田中さんと東京で寿司", "楽しかった", intensity=60, category="casual")
    unknown = kioku.recall("What did Caroline plan for the trip?", mark=False)
    assert unknown.items == ()
    assert unknown.unknown_names == ("caroline",)
    # One known name is enough; a prompt without names is judged by its words alone.
    for prompt in ("Did Caroline or Aiko plan the trip?", "Who planned the trip?"):
        result = kioku.recall(prompt, mark=False)
        assert [i.memory.id for i in result.items] == [trip], prompt
        assert result.unknown_names == ()
    assert kioku.recall("大阪の寿司", mark=False).unknown_names == ("大阪",)
    assert kioku.recall("東京の寿司", mark=False).items != ()


def test_names_known_only_to_another_owner_do_not_count(tmp_path: Path) -> None:
    with Kioku.open(tmp_path / "h", clock=FixedClock(NOW), env={}, user_id="alice") as alice:
        alice.remember("Caroline's trip", "to Kyoto", intensity=60, category="casual")
    with Kioku.open(tmp_path / "h", clock=FixedClock(NOW), env={}, user_id="bob") as bob:
        bob.remember("my trip plans", "somewhere warm", intensity=60, category="casual")
        result = bob.recall("What about Caroline's trip?", mark=False)
        assert result.items == ()
        assert result.unknown_names == ("caroline",)
