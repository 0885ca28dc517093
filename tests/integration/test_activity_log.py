"""The unified activity log (spec 001, 統一アクティビティログ) on a real SQLite home.

Remembering a turn logs what was said (``message_received``) and replied (``response_sent``);
the log is read back in time order with filters; erasing a memory takes its text out of every
event that quoted it, and erasing a person deletes their events. Each event is one JSON line
in spec 001's shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.errors import ValidationError
from kioku.service.erasure.erasure import ErasureTokenError

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=TOKYO)
T0 = NOW - timedelta(hours=6)

#: Spec 001's keys in their order, then kioku's own.
KEYS = (
    "ts", "type", "content", "from", "to", "channel", "tool", "via", "summary",
    "task", "exit", "session", "memory_ids", "user", "agent", "meta",
)  # fmt: skip
TYPES = {
    "message_received", "response_sent", "dm_sent", "dm_received", "channel_post",
    "channel_read", "human_notify", "tool_use", "heartbeat_start", "heartbeat_end",
    "cron_executed", "memory_write", "error", "issue_resolved",
    "memory_recall", "priming", "memory_erased",
}  # fmt: skip
TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def kioku(home: Path) -> Iterator[Kioku]:
    with Kioku.open(home, clock=FixedClock(NOW), env={}) as k:
        yield k


def _records(k: Kioku, **criteria: Any) -> list[dict[str, Any]]:
    return [json.loads(stored.line) for stored, _ in k.activity(**criteria)]


def _turns(k: Kioku) -> list[str]:
    """Four turns an hour apart (T0 … T0+3h), in two sessions; their memory ids."""
    ids = []
    for hour in range(4):
        ids.append(
            k.remember_turn(
                f"Question {hour} about the garden roses",
                f"Answer {hour}: water them every morning",
                at=T0 + timedelta(hours=hour),
                session_id=f"garden-{hour % 2}",
            ).memory.id
        )
    return ids


# -- what a turn logs -----------------------------------------------------------------------------


def test_a_turn_logs_what_was_said_and_what_was_replied(kioku: Kioku) -> None:
    first = kioku.remember_turn(
        "Where should we go in spring?", "Kyoto in April", at=T0, session_id="trip"
    ).memory
    second = kioku.remember_turn(
        "予算はいくら？", "五万円です", at=T0 + timedelta(minutes=5), session_id="money"
    ).memory
    events = [event for _, event in kioku.activity()]
    assert all(event is not None for event in events)
    summary = [
        (e.type.value, e.content, e.from_, e.to, e.session_id, e.memory_ids, e.ts)
        for e in events
        if e is not None
    ]
    assert summary == [
        ("message_received", first.trigger, "default", "", "trip", (first.id,), T0),
        ("response_sent", first.content, "", "default", "trip", (first.id,), T0),
        (
            "message_received",
            second.trigger,
            "default",
            "",
            "money",
            (second.id,),
            T0 + timedelta(minutes=5),
        ),
        (
            "response_sent",
            second.content,
            "",
            "default",
            "money",
            (second.id,),
            T0 + timedelta(minutes=5),
        ),
    ]
    assert [first.trigger, first.content] == ["Where should we go in spring?", "Kyoto in April"]
    assert [second.trigger, second.content] == ["予算はいくら？", "五万円です"]
    assert {(e.user_id, e.agent_id) for e in events if e is not None} == {("default", "default")}


LONG_NOTE = (
    "Just noting that the roses bloomed in the garden this morning. The tulips by the wall "
    "are late this year, and the lavender needs cutting back before the summer heat arrives."
)
_REPLY_BUG = (
    "whether a reply was sent is guessed from content != trigger; the analyzer stores a turn "
    "without a reply with the user's text as content and its gist as trigger"
)


@pytest.mark.parametrize(
    ("user", "assistant", "expected"),
    [
        pytest.param("Just noting that the roses bloomed", "", ["message_received"], id="no-reply"),
        pytest.param(
            LONG_NOTE,
            "",
            ["message_received"],
            id="long-no-reply",
        ),
        pytest.param(
            "Thanks",
            "Thanks",
            ["message_received", "response_sent"],
            id="reply-equal-to-message",
        ),
    ],
)
def test_a_response_is_logged_exactly_when_there_was_one(
    kioku: Kioku, user: str, assistant: str, expected: list[str]
) -> None:
    kioku.remember_turn(user, assistant, at=T0, session_id="s")
    records = _records(kioku)
    assert [r["type"] for r in records] == expected
    assert records[0]["from"] == "default"
    if assistant:
        assert records[1]["content"] == assistant


def test_remembering_the_same_turn_again_logs_nothing_more(kioku: Kioku) -> None:
    kioku.remember_turn("The roses bloomed", "Lovely", at=T0, session_id="s")
    before = _records(kioku)
    assert [r["type"] for r in before] == ["message_received", "response_sent"]
    again = kioku.remember_turn("The roses bloomed", "Lovely", at=T0, session_id="s")
    assert again.known
    assert _records(kioku) == before


def test_a_turn_without_a_session_has_no_session_key(kioku: Kioku) -> None:
    kioku.remember_turn("A turn outside any session", "noted", at=T0)
    for record in _records(kioku):
        assert "session" not in record


def test_the_log_is_read_oldest_first_with_filters(kioku: Kioku) -> None:
    ids = _turns(kioku)

    def picked(**criteria: Any) -> list[tuple[str, str]]:
        return [(r["type"], r["memory_ids"][0]) for r in _records(kioku, **criteria)]

    every = picked()
    assert every == [(t, i) for i in ids for t in ("message_received", "response_sent")]
    # since is inclusive, until exclusive
    assert picked(since=T0 + timedelta(hours=1)) == every[2:]
    assert picked(until=T0 + timedelta(hours=2)) == every[:4]
    assert picked(since=T0 + timedelta(hours=1), until=T0 + timedelta(hours=3)) == every[2:6]
    assert picked(since=T0 + timedelta(hours=1, seconds=1)) == every[4:]
    assert picked(types=["response_sent"]) == every[1::2]
    assert picked(types=["response_sent", "message_received"]) == every
    assert picked(types=["priming"]) == []
    # limit keeps the newest, still oldest first
    assert picked(limit=3) == every[-3:]
    assert picked(types=["message_received"], limit=2) == every[4::2]
    assert picked(since=NOW) == []


def test_the_log_belongs_to_its_owner(home: Path) -> None:
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="dana") as dana:
        dana.remember_turn("Dana's private question", "Dana's answer", at=T0)
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="erin") as erin:
        erin.remember_turn("Erin asks about tea", "Green tea", at=T0)
        assert [r["content"] for r in _records(erin)] == ["Erin asks about tea", "Green tea"]
        assert {r["user"] for r in _records(erin)} == {"erin"}
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="dana", agent_id="other") as k:
        assert _records(k) == []  # another agent of the same person has its own log


# -- erasure --------------------------------------------------------------------------------------


def test_forgetting_a_memory_takes_its_text_out_of_every_event(kioku: Kioku) -> None:
    kept = kioku.remember_turn("The tulips need shade", "Plant them by the wall", at=T0).memory
    secret = kioku.remember_turn(
        "My locker code is zebra 4471", "I will remember the zebra code", at=T0, session_id="s"
    ).memory
    fact = kioku.write_memory("knowledge", "The zebra locker is in hall B", title="zebra locker")
    primed = kioku.prime("Where is the zebra locker?", mark=True)
    assert fact.id in primed.memory_ids
    before = _records(kioku)
    kioku.forget(secret.id)
    kioku.forget(fact.id)
    after = kioku.activity()
    assert len(after) == len(before)
    for (stored, event), old in zip(after, before, strict=True):
        record = json.loads(stored.line)
        mentions = set(old.get("memory_ids", ())) & {secret.id, fact.id}
        if not mentions:
            assert record == old
            assert event is not None
            continue
        assert record["redacted"] is True
        assert (record["ts"], record["type"]) == (old["ts"], old["type"])
        assert not {"content", "summary", "meta"} & set(record)
        assert event is None
        for text in ("zebra", "4471", "hall B", "locker"):
            assert text not in stored.line
    assert {r["type"] for r in before if secret.id in r.get("memory_ids", ())} >= {
        "message_received",
        "response_sent",
    }
    assert any(
        kept.id in r.get("memory_ids", ()) and "tulips" in r["content"] for r in _records(kioku)
    )
    assert sum("zebra" in json.dumps(r, ensure_ascii=False) for r in before) >= 3
    everything = "\n".join(stored.line for stored, _ in kioku.activity())
    for text in ("zebra", "4471", "hall B", "locker"):
        assert text not in everything


def test_forgetting_a_turn_also_erases_the_prompt_it_was_primed_for(kioku: Kioku) -> None:
    kioku.remember_turn("The zebra firmware rollout is planned", "Noted", at=T0)
    prompt = "My zebra firmware password hint is purple giraffe"
    kioku.prime(prompt, mark=True)  # the hook primes the prompt first
    turn = kioku.remember_turn(prompt, "I will keep that in mind").memory  # then stores it
    kioku.forget(turn.id)
    for stored, _ in kioku.activity():
        assert "purple giraffe" not in stored.line


def test_erasing_a_person_deletes_their_events_for_every_agent(home: Path) -> None:
    for agent in ("a1", "a2"):
        with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="dana", agent_id=agent) as k:
            k.remember_turn(f"Dana tells {agent} a secret", "kept", at=T0)
            k.write_memory("knowledge", f"Dana's note for {agent}", title="dana note")
            k.prime(f"Dana asks {agent} about the secret", mark=True)
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="erin") as erin:
        erin.remember_turn("Erin asks about tea", "Green tea", at=T0)
        erin_lines = [stored.line for stored, _ in erin.activity()]
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="dana", agent_id="a1") as dana:
        plan = dana.plan_erasure()
        assert plan.memories == 4
        assert len(_records(dana)) == 4  # planning deletes nothing
        dana.remember_turn("One more thing from Dana", "ok", at=T0)
        with pytest.raises(ErasureTokenError):
            dana.erase_user("dana", plan.token)  # the token was for four memories
        assert len(_records(dana)) == 6
        report = dana.erase_user("dana", dana.plan_erasure().token)
        assert report.erased == 5
        assert _records(dana) == []
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="dana", agent_id="a2") as k:
        assert _records(k) == []
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="erin") as erin:
        assert [stored.line for stored, _ in erin.activity()] == erin_lines
        assert len(erin_lines) == 2


# -- the JSONL shape -------------------------------------------------------------------------------


def test_every_line_has_spec_001_shape(kioku: Kioku) -> None:
    kioku.remember_turn("予算の会議は明日？", "はい、\n明日の10時です", at=T0, session_id="予算")
    kioku.remember_turn("Where do the roses go?", "By the\u2028wall", at=T0 + timedelta(minutes=1))
    kioku.write_memory("knowledge", "Roses need morning water", title="roses")
    kioku.write_memory("procedure", "", title="Water roses", description="[water] the roses")
    message = "How often do the roses need water?\u2028Every day?"
    kioku.prime(message, mark=True, session_id="予算")
    lines = [stored.line for stored, _ in kioku.activity()]
    records = [json.loads(line) for line in lines]
    assert {r["type"] for r in records} >= {
        "message_received",
        "response_sent",
        "memory_write",
        "priming",
    }
    for line, record in zip(lines, records, strict=True):
        assert "\n" not in line
        assert "\u2028" not in line
        assert isinstance(record, dict)
        assert list(record) == [key for key in KEYS if key in record], "keys out of order"
        assert TS.match(record["ts"]), record["ts"]
        assert record["type"] in TYPES
        for key, value in record.items():
            assert value not in ("", [], {}, None), f"empty {key} written"
        assert isinstance(record.get("memory_ids", []), list)
        assert record["user"] == "default"
        assert record["agent"] == "default"
    said, replied = records[0], records[1]
    assert (said["type"], replied["type"]) == ("message_received", "response_sent")
    assert said["ts"] == "2026-03-02T06:00:00+09:00"
    assert said["content"] == "予算の会議は明日？"
    assert "予算の会議は明日？" in lines[0]
    assert said["from"] == "default"
    assert "to" not in said
    assert replied["to"] == "default"
    assert "from" not in replied
    assert replied["content"].startswith("はい、\n明日の10時です")
    assert said["session"] == replied["session"] == "予算"
    alone = records[2]
    assert alone["type"] == "message_received"
    assert "session" not in alone
    assert alone["ts"] == "2026-03-02T06:01:00+09:00"
    primed = records[-1]
    assert primed["type"] == "priming"
    assert "content" not in primed  # the prompt is its turn's event, not the priming's
    # A line separator is escaped, never written raw.
    assert any("\\u2028" in line for line in lines)
    assert primed["session"] == "予算"
    assert "from" not in primed
    assert "to" not in primed


def test_an_agent_logs_its_own_events_and_bad_ones_are_refused(kioku: Kioku) -> None:
    kioku.log_event("tool_use", tool="web_search", summary="looked up the rota", session_id="s")
    kioku.log_event("dm_sent", "the rota is out", to="mika")
    (tool,), (dm,) = _records(kioku, types=["tool_use"]), _records(kioku, types=["dm_sent"])
    assert (tool["tool"], tool["summary"], tool["session"]) == (
        "web_search",
        "looked up the rota",
        "s",
    )
    assert (dm["content"], dm["to"]) == ("the rota is out", "mika")
    with pytest.raises(ValidationError, match="one of message_received"):
        kioku.log_event("gossip")
    with pytest.raises(ValidationError, match="one of channel"):
        kioku.log_event("tool_use", colour="red")  # type: ignore[arg-type]
    assert len(kioku.activity()) == 2


def test_a_marked_recall_names_what_it_recalled_and_keeps_the_query_out(kioku: Kioku) -> None:
    memory = kioku.remember_turn("The plum tree needs pruning in March", "Noted", at=T0).memory
    kioku.recall("When does the plum tree need pruning?", mark=False)
    assert _records(kioku, types=["memory_recall"]) == []
    kioku.recall("When does the plum tree need pruning?")
    (event,) = _records(kioku, types=["memory_recall"])
    assert memory.id in event["memory_ids"]
    assert event["tool"] == "recall"
    assert "content" not in event  # the query is the turn's own event, redacted with it


def test_a_provider_that_failed_is_an_error_event_of_the_turn(home: Path) -> None:
    from dataclasses import replace

    from kioku.adapters.analyzers.offline import OfflineAnalyzer
    from kioku.ports.analyzer import Analysis, Turn

    class StandIn(OfflineAnalyzer):
        """The offline analyzer standing in for a provider that failed (as the fallback does)."""

        def analyze(self, turn: Turn) -> Analysis:
            found = super().analyze(turn)
            return replace(found, warnings=("the provider timed out; analysed offline",))

    with Kioku.open(home, clock=FixedClock(NOW), env={}, analyzer=StandIn()) as k:
        memory = k.remember_turn("The cello lesson moved to Friday", "Noted", at=T0).memory
        (error,) = _records(k, types=["error"])
    assert error["content"] == "the provider timed out; analysed offline"
    assert error["memory_ids"] == [memory.id]


def test_erasing_a_person_takes_their_session_encoding_state_too(home: Path) -> None:
    with Kioku.open(home, clock=FixedClock(NOW), env={}, user_id="erin") as erin:
        erin.remember_turn("Fixed the flaky login test", "Great", at=T0, session_id="s1")
        erin.finalize_session("s1")
        assert erin.store.get_state('encoding:["erin", "default", "s1"]') is not None
        erin.erase_user("erin", erin.plan_erasure().token)
        assert erin.store.get_state('encoding:["erin", "default", "s1"]') is None
        assert erin.activity() == []


def test_logged_lines_are_checked_whether_or_not_make_event_made_them(kioku: Kioku) -> None:
    """make_event's events are written without a second check, to the same line as
    to_jsonl writes; an event built by hand, with characters a line must not hold, is still
    checked when it is logged."""
    from kioku.core.activity.events import ActivityEvent, EventType
    from kioku.core.activity.jsonl import to_jsonl
    from kioku.service.activity.log import log_events, make_event

    made = make_event(kioku, EventType.MEMORY_WRITE, "made\u2028here", session_id="s1")
    by_hand = ActivityEvent(
        ts=NOW, type=EventType.MEMORY_WRITE, content="by\x85hand\u2029", session_id="s1"
    )
    log_events(kioku, [made, by_hand])
    lines = [stored.line for stored, _ in kioku.activity(types=["memory_write"])]
    assert lines == [to_jsonl(made), to_jsonl(by_hand)]
    for line in lines:
        assert not {"\u2028", "\u2029", "\x85"} & set(line)
