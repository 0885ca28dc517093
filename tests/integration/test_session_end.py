"""Immediate encoding at session boundaries (spec 001, 即時符号化 › セッション境界ベースの差分要約,
解決伝播メカニズム): only turns not finalized yet are summarised, once; a session ends after ten
quiet minutes or when asked; what its turns report resolved becomes ``issue_resolved`` events;
a failure at any point leaves nothing half done."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.adapters.clock import FixedClock
from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.core.model import Memory
from kioku.errors import KiokuError, ValidationError
from kioku.ports.analyzer import Compressed
from kioku.ports.store import ActivityRow, MemoryFilter, Order
from kioku.service.encoding import FinalizeReport
from kioku.service.encoding.session_end import point_key, sweep_key

TZ = ZoneInfo("Asia/Tokyo")
START = datetime(2026, 4, 1, 12, 0, tzinfo=TZ)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def warnings() -> list[str]:
    return []


@pytest.fixture
def kioku(tmp_path: Path, clock: FixedClock, warnings: list[str]) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", env={}, clock=clock, on_warning=warnings.append) as k:
        yield k


def turn(k: Kioku, clock: FixedClock, user: str, assistant: str = "", session: str = "s1") -> str:
    """Remember one turn of ``session`` now, then let a minute pass."""
    memory = k.remember_turn(user, assistant, session_id=session).memory
    clock.advance(timedelta(minutes=1))
    return memory.id


def episodes(k: Kioku, session: str = "s1") -> list[Memory]:
    return k.store.list(
        MemoryFilter(
            user_id=k.user_id,
            agent_id=k.agent_id,
            kind="episode",
            session_id=session,
            order=Order.CREATED_ASC,
        )
    )


def summaries(k: Kioku, session: str = "s1") -> list[Memory]:
    return [m for m in episodes(k, session) if "session-summary" in m.keywords]


def count(k: Kioku) -> int:
    return k.store.count(MemoryFilter(user_id=k.user_id, agent_id=k.agent_id))


def resolved_events(k: Kioku) -> list[tuple[str, tuple[str, ...], str]]:
    return [
        (event.content, event.memory_ids, event.session_id)
        for _, event in k.activity(types=["issue_resolved"])
        if event is not None
    ]


def finalized_index(k: Kioku, session: str = "s1") -> int | None:
    row = k.store.get_state(point_key(k, session))
    return None if row is None else int(json.loads(row)["last_finalized_turn_index"])


# -- finalizing ------------------------------------------------------------------------------


def test_finalizing_summarises_the_new_turns_into_one_episode(
    kioku: Kioku, clock: FixedClock
) -> None:
    ids = [
        turn(kioku, clock, "The login page throws a 500 error.", "Let me check the handler."),
        turn(kioku, clock, "It is the session token.", "Renewing it on every request."),
        turn(kioku, clock, "Thanks!", "Fixed the login bug."),
    ]
    assert finalized_index(kioku) is None
    report = kioku.finalize_session("s1")
    assert (report.first_turn, report.last_turn, report.turn_ids) == (0, 2, tuple(ids))
    assert report.last_finalized_turn_index == 2
    assert not report.already_stored
    [summary] = summaries(kioku)
    assert summary.id == report.summary_id
    assert summary.trigger == "Session s1: turns 0\u20132"
    assert summary.source_ids == ("session:s1:0-2",)
    assert summary.session_id == "s1"
    assert summary.kind == "episode"
    assert summary.created == START + timedelta(minutes=3)
    assert summary.content.endswith("\nResolved: Fixed the login bug.")
    assert finalized_index(kioku) == 2


def test_finalizing_again_without_new_turns_writes_nothing(kioku: Kioku, clock: FixedClock) -> None:
    turn(kioku, clock, "The deploy works now.", "Great.")
    kioku.finalize_session("s1")
    before = (count(kioku), resolved_events(kioku), kioku.store.get_state(point_key(kioku, "s1")))
    clock.advance(timedelta(hours=1))
    again = kioku.finalize_session("s1")
    assert again == FinalizeReport("s1", 0)
    after = (count(kioku), resolved_events(kioku), kioku.store.get_state(point_key(kioku, "s1")))
    assert after == before


def test_a_session_without_turns_is_left_alone(kioku: Kioku) -> None:
    assert kioku.finalize_session("never") == FinalizeReport("never", -1)
    assert kioku.store.get_state(point_key(kioku, "never")) is None


def test_no_turn_is_summarised_twice_across_finalizes_and_new_turns(
    kioku: Kioku, clock: FixedClock
) -> None:
    seen: list[str] = []
    ranges = []
    for batch in (2, 1, 0, 3, 0):
        seen += [turn(kioku, clock, f"question {len(seen) + i}", "answer") for i in range(batch)]
        report = kioku.finalize_session("s1")
        if report.turn_ids:
            ranges.append((report.first_turn, report.last_turn))
    covered = summaries(kioku)
    assert ranges == [(0, 1), (2, 2), (3, 5)]
    assert [m.source_ids for m in covered] == [
        ("session:s1:0-1",),
        ("session:s1:2-2",),
        ("session:s1:3-5",),
    ]
    assert finalized_index(kioku) == 5


def test_each_turn_is_in_exactly_one_report(kioku: Kioku, clock: FixedClock) -> None:
    ids: list[str] = []
    reported: list[str] = []
    for round_ in range(4):
        ids += [turn(kioku, clock, f"round {round_} turn {i}") for i in range(round_ + 1)]
        reported += kioku.finalize_session("s1").turn_ids
        reported += kioku.finalize_session("s1").turn_ids
    assert reported == ids


def test_summaries_never_count_as_turns(kioku: Kioku, clock: FixedClock) -> None:
    turn(kioku, clock, "one")
    kioku.finalize_session("s1")
    clock.advance(timedelta(hours=1))
    assert kioku.finalize_session("s1").turn_ids == ()
    assert kioku.heartbeat() == []
    turn(kioku, clock, "two")
    report = kioku.finalize_session("s1")
    assert (report.first_turn, report.last_turn, report.turns) == (1, 1, 1)


def test_an_erased_turn_does_not_shift_the_others(kioku: Kioku, clock: FixedClock) -> None:
    first = turn(kioku, clock, "one")
    turn(kioku, clock, "two")
    kioku.finalize_session("s1")
    assert kioku.store.delete(first)
    new = turn(kioku, clock, "three")
    report = kioku.finalize_session("s1")
    assert report.turn_ids == (new,)
    assert (report.first_turn, report.last_turn) == (2, 2)


def test_sessions_and_owners_are_finalized_apart(
    kioku: Kioku, clock: FixedClock, tmp_path: Path
) -> None:
    turn(kioku, clock, "in s1")
    other = turn(kioku, clock, "in s2", session="s2")
    kioku.finalize_session("s1")
    assert kioku.finalize_session("s2").turn_ids == (other,)
    with Kioku.open(tmp_path / "home", env={}, clock=clock, agent_id="another") as k2:
        assert k2.finalize_session("s1").turn_ids == ()
        turn(k2, clock, "another agent's s1")
        assert k2.finalize_session("s1").first_turn == 0
    assert finalized_index(kioku) == 0


def test_a_session_with_the_longest_id_is_finalized(kioku: Kioku, clock: FixedClock) -> None:
    session = "x" * 1000
    first = turn(kioku, clock, "one", session=session)
    report = kioku.finalize_session(session)
    assert report.turn_ids == (first,)
    turn(kioku, clock, "two", session=session)
    assert kioku.finalize_session(session).first_turn == 1
    assert len(summaries(kioku, session)) == 2


# -- resolution propagation ------------------------------------------------------------------


def test_resolved_items_become_issue_resolved_events_of_their_turn(
    kioku: Kioku, clock: FixedClock
) -> None:
    asked = turn(kioku, clock, "Is the login bug fixed?", "Not yet, I will fix it tomorrow.")
    fixed = turn(kioku, clock, "ログインのバグが直りました！", "よかったです。")
    works = turn(kioku, clock, "Fixed the cache bug too.", "The deploy works now.")
    report = kioku.finalize_session("s1")
    assert report.resolved == (
        "ログインのバグが直りました！",
        "Fixed the cache bug too.",
        "The deploy works now.",
    )
    assert resolved_events(kioku) == [
        ("ログインのバグが直りました！", (fixed,), "s1"),
        ("Fixed the cache bug too.", (works,), "s1"),
        ("The deploy works now.", (works,), "s1"),
    ]
    assert all(asked not in ids for _, ids, _ in resolved_events(kioku))
    [(_stored, event)] = kioku.activity(types=["issue_resolved"], limit=1)
    assert event is not None
    assert event.ts == START + timedelta(minutes=3)
    kioku.finalize_session("s1")
    assert len(resolved_events(kioku)) == 3


def test_a_session_with_nothing_resolved_logs_no_event(kioku: Kioku, clock: FixedClock) -> None:
    turn(kioku, clock, "まだ直っていない。", "明日修正する予定です。")
    report = kioku.finalize_session("s1")
    assert report.turns == 1
    assert report.resolved == ()
    assert resolved_events(kioku) == []
    assert "Resolved:" not in summaries(kioku)[0].content


# -- the session boundary: ten quiet minutes, the heartbeat ------------------------------------


def test_a_session_ends_after_ten_quiet_minutes_not_before(kioku: Kioku, clock: FixedClock) -> None:
    turn(kioku, clock, "one")  # at 12:00
    last = turn(kioku, clock, "two")  # at 12:01
    clock.advance(timedelta(minutes=8, seconds=59))  # 12:10:59, 9:59 after the last turn
    assert kioku.heartbeat() == []
    assert summaries(kioku) == []
    clock.advance(timedelta(seconds=1))  # 12:11:00
    [report] = kioku.heartbeat()
    assert report.session_id == "s1"
    assert report.turn_ids[-1] == last
    assert len(summaries(kioku)) == 1
    clock.advance(timedelta(hours=1))
    assert kioku.heartbeat() == []


def test_the_heartbeat_finalizes_only_the_quiet_sessions(kioku: Kioku, clock: FixedClock) -> None:
    turn(kioku, clock, "quiet one", session="quiet")
    clock.advance(timedelta(minutes=5))
    turn(kioku, clock, "still talking", session="busy")
    clock.advance(timedelta(minutes=4))  # quiet: 11 minutes; busy: 5
    assert [r.session_id for r in kioku.heartbeat()] == ["quiet"]
    assert summaries(kioku, "busy") == []
    clock.advance(timedelta(minutes=5))
    assert [r.session_id for r in kioku.heartbeat()] == ["busy"]


def test_a_long_session_is_finalized_whole_after_earlier_heartbeats(
    kioku: Kioku, clock: FixedClock
) -> None:
    ids = [turn(kioku, clock, f"turn {i}") for i in range(3)]
    clock.advance(timedelta(minutes=8))
    ids.append(turn(kioku, clock, "still here"))  # 12:11, before the session went quiet
    for _ in range(3):  # heartbeats while the session goes on
        assert kioku.heartbeat() == []
        clock.advance(timedelta(minutes=3))
        ids.append(turn(kioku, clock, "more"))
    clock.advance(timedelta(minutes=30))
    [report] = kioku.heartbeat()
    assert report.turn_ids == tuple(ids)


def test_the_heartbeat_reads_only_episodes_since_its_sweep_point(
    kioku: Kioku, clock: FixedClock
) -> None:
    kioku.heartbeat()
    assert kioku.store.get_state(sweep_key(kioku)) == (START - timedelta(minutes=10)).isoformat()
    turn(kioku, clock, "one")
    clock.advance(timedelta(hours=1))
    assert [r.turns for r in kioku.heartbeat()] == [1]
    swept = datetime.fromisoformat(kioku.store.get_state(sweep_key(kioku)) or "")
    assert swept == clock.now() - timedelta(minutes=10)
    # A turn stored now with a time before the sweep point (an old transcript) is left to an
    # explicit finalize of its session.
    old = kioku.remember_turn("from an old transcript", at=START, session_id="old").memory
    assert kioku.heartbeat() == []
    assert kioku.finalize_session("old").turn_ids == (old.id,)


def test_the_heartbeat_can_wait_longer(kioku: Kioku, clock: FixedClock) -> None:
    turn(kioku, clock, "one")
    clock.advance(timedelta(minutes=20))
    assert kioku.heartbeat(idle_minutes=30) == []
    assert [r.session_id for r in kioku.heartbeat(idle_minutes=21)] == ["s1"]


def test_the_heartbeat_and_finalize_can_run_as_of_a_given_time(
    kioku: Kioku, clock: FixedClock
) -> None:
    turn(kioku, clock, "one")
    assert kioku.heartbeat(now=START + timedelta(minutes=9)) == []
    [report] = kioku.heartbeat(now=START + timedelta(minutes=10))
    assert summaries(kioku)[0].created == START + timedelta(minutes=10)
    assert report.turns == 1


@pytest.mark.parametrize(
    "call",
    [
        lambda k: k.finalize_session(""),
        lambda k: k.finalize_session("s1", now=datetime(2026, 4, 1, 12, 0)),
        lambda k: k.finalize_session("s1", now=START + timedelta(days=2)),
        lambda k: k.heartbeat(idle_minutes=-1),
        lambda k: k.heartbeat(idle_minutes=True),
    ],
)
def test_bad_input_is_refused(kioku: Kioku, call: object) -> None:
    with pytest.raises(ValidationError):
        call(kioku)  # type: ignore[operator]


# -- failures: nothing half done, nothing twice ------------------------------------------------


class FlakyAnalyzer(OfflineAnalyzer):
    """The offline analyzer, except that its first summary fails."""

    def __init__(self) -> None:
        super().__init__(segmenter="script")
        self.failures = 1

    def summarize(self, trigger: str, content: str) -> Compressed:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("the summarizer went away")
        return super().summarize(trigger, content)


def test_a_failed_summary_finalizes_nothing_and_the_retry_does_it_once(
    tmp_path: Path, clock: FixedClock
) -> None:
    analyzer = FlakyAnalyzer()
    with Kioku.open(tmp_path / "home", env={}, clock=clock, analyzer=analyzer) as k:
        ids = [turn(k, clock, "Fixed the login bug."), turn(k, clock, "thanks")]
        with pytest.raises(RuntimeError):
            k.finalize_session("s1")
        assert (summaries(k), resolved_events(k), finalized_index(k)) == ([], [], None)
        report = k.finalize_session("s1")
        assert report.turn_ids == tuple(ids)
        assert len(summaries(k)) == 1
        assert len(resolved_events(k)) == 1
        assert k.finalize_session("s1").turn_ids == ()


class CrashingStore(SqliteStore):
    """A SQLite store that fails once inside finalizing's transaction: when the events are
    appended (after the summary is stored) or when the session's finalized point is written
    (after the events), before the commit either way."""

    crashes = 1
    at = "set_state"

    def _crash(self) -> None:
        if self.crashes:
            self.crashes -= 1
            raise RuntimeError("power cut")

    def set_state(self, key: str, value: str) -> None:
        if self.at == "set_state" and key.startswith("encoding:"):
            self._crash()
        super().set_state(key, value)

    def append_activity(self, rows: Sequence[ActivityRow]) -> list[int]:
        if self.at == "append_activity" and any(r.type == "issue_resolved" for r in rows):
            self._crash()
        return super().append_activity(rows)


@pytest.mark.parametrize("at", ["append_activity", "set_state"])
def test_a_crash_before_the_commit_leaves_nothing_and_the_retry_does_it_once(
    tmp_path: Path, clock: FixedClock, at: str
) -> None:
    store = CrashingStore(tmp_path / "memories.db")
    store.at = at
    with Kioku(store, clock=clock) as k:
        ids = [turn(k, clock, "The deploy works now."), turn(k, clock, "解決しました。")]
        with pytest.raises(RuntimeError, match="power cut"):
            k.finalize_session("s1")
        assert store.crashes == 0  # the crash happened inside finalize
        assert (summaries(k), resolved_events(k), finalized_index(k)) == ([], [], None)
        report = k.finalize_session("s1")
        assert report.turn_ids == tuple(ids)
        assert not report.already_stored
        assert [m.source_ids for m in summaries(k)] == [("session:s1:0-1",)]
        assert [content for content, _, _ in resolved_events(k)] == [
            "The deploy works now.",
            "解決しました。",
        ]


def test_a_lost_finalized_point_never_stores_a_summary_or_event_twice(
    kioku: Kioku, clock: FixedClock
) -> None:
    turn(kioku, clock, "Fixed the login bug.")
    turn(kioku, clock, "two")
    first = kioku.finalize_session("s1")
    assert kioku.store.delete_state("encoding:") == 1
    again = kioku.finalize_session("s1")
    assert again.already_stored
    assert again.summary_id == first.summary_id
    assert again.turn_ids == first.turn_ids
    assert len(summaries(kioku)) == 1
    assert len(resolved_events(kioku)) == 1
    assert finalized_index(kioku) == 1


class DownAnalyzer(OfflineAnalyzer):
    """The offline analyzer, except that its provider is down for the first ``down`` summaries."""

    def __init__(self, down: int) -> None:
        super().__init__(segmenter="script")
        self.down = down

    def summarize(self, trigger: str, content: str) -> Compressed:
        if self.down:
            self.down -= 1
            raise KiokuError("the provider is down")
        return super().summarize(trigger, content)


def test_a_session_that_fails_is_retried_by_later_heartbeats(
    tmp_path: Path, clock: FixedClock
) -> None:
    warned: list[str] = []
    analyzer = DownAnalyzer(down=2)
    with Kioku.open(
        tmp_path / "home", env={}, clock=clock, analyzer=analyzer, on_warning=warned.append
    ) as k:
        failing = turn(k, clock, "one", session="failing")
        clock.advance(timedelta(hours=1))
        assert k.heartbeat() == []
        assert "'failing' was not finalized: the provider is down" in warned[0]
        clock.advance(timedelta(hours=2))
        assert k.heartbeat() == []
        assert len(warned) == 2
        clock.advance(timedelta(hours=3))
        turn(k, clock, "meanwhile", session="other")
        clock.advance(timedelta(minutes=10))
        reports = k.heartbeat()
        assert [r.session_id for r in reports] == ["failing", "other"]
        assert reports[0].turn_ids == (failing,)


class InterleavingAnalyzer(OfflineAnalyzer):
    """While this process asks for its summary, another process finalizes the session."""

    def __init__(self, home: Path, clock: FixedClock) -> None:
        super().__init__(segmenter="script")
        self.home, self.clock, self.calls = home, clock, 0

    def summarize(self, trigger: str, content: str) -> Compressed:
        self.calls += 1
        if self.calls == 1:
            with Kioku.open(self.home, env={}, clock=self.clock) as other:
                assert other.finalize_session("s1").turns == 2
        return super().summarize(trigger, content)


def test_a_session_finalized_meanwhile_by_another_process_is_not_summarised_again(
    tmp_path: Path, clock: FixedClock
) -> None:
    home = tmp_path / "home"
    analyzer = InterleavingAnalyzer(home, clock)
    with Kioku.open(home, env={}, clock=clock, analyzer=analyzer) as k:
        turn(k, clock, "Fixed the login bug.")
        turn(k, clock, "two")
        report = k.finalize_session("s1")
        assert report.turn_ids == ()
        assert report.last_finalized_turn_index == 1
        assert len(summaries(k)) == 1
        assert len(resolved_events(k)) == 1
