"""The mid-term tier over a real SQLite store (spec 003 §2, §4, §7): when a thread ends, its most
salient turns go to long-term memory and every turn to the thread's mid-term entry."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.ports.analyzer import Analysis, Analyzer, Compressed, Turn
from kioku.service.context.working_memory import WorkingMemory

NOW = datetime.fromisoformat("2026-03-01T10:00:00+09:00")

#: One thread: six emotional or new turns, a plain question, and small talk said three times
#: that long-term memory already holds from earlier sessions.
THREAD = [
    ("My father passed away last night and I cannot stop crying.", "I am so sorry."),
    ("ok thanks", "You're welcome."),
    ("I got the job offer at the robotics lab in Kyoto! I am so excited!", "Congratulations!"),
    ("ok thanks", "You're welcome."),
    ("I was terrified during the earthquake, the whole building shook.", "How frightening."),
    ("ok thanks", "You're welcome."),
    ("Please remember my sister Aiko's wedding is on June 12.", "Noted: June 12."),
    ("I adopted a kitten named Mochi today, I love her so much!", "Mochi is a lovely name."),
    ("We argued badly and I am furious with my brother.", "Arguments with family hurt."),
    ("What time is it?", "It is ten past ten."),
]
SMALL_TALK = (2, 4, 6)  # turn numbers of "ok thanks"


def _open(home: Path, clock: FixedClock, config: str = "", **kw: object) -> Kioku:
    home.mkdir(mode=0o700, exist_ok=True)
    if config:
        (home / "config.toml").write_text(config)
    return Kioku.open(home, env={}, clock=clock, **kw)  # type: ignore[arg-type]


def _seed_small_talk(kioku: Kioku) -> None:
    """Earlier sessions already said it: long-term memory holds five of it."""
    for i in range(5):
        kioku.remember_turn(
            "ok thanks",
            "You're welcome.",
            at=NOW - timedelta(days=3, hours=i),
            session_id=f"old{i}",
        )


def _talk(wm: WorkingMemory, clock: FixedClock, turns: list[tuple[str, str]]) -> None:
    for user, assistant in turns:
        clock.advance(timedelta(minutes=1))
        wm.add("user", user)
        wm.add("assistant", assistant)


def _sources(kioku: Kioku) -> set[str]:
    return {s for m in kioku.list(limit=1000) for s in m.source_ids}


def test_a_thread_of_ten_turns_keeps_seven_long_term_and_all_ten_mid_term(
    tmp_path: Path,
) -> None:
    clock = FixedClock(NOW)
    with _open(tmp_path / "home", clock) as kioku:
        _seed_small_talk(kioku)
        wm = WorkingMemory(kioku=kioku, session_id="chat")
        _talk(wm, clock, THREAD)
        assert kioku.count() == 5  # nothing yet: the thread goes on
        end = clock.now()
        clock.advance(timedelta(minutes=30))  # ten idle minutes end the thread
        wm.add("user", "Good morning again.")
        assert wm.stats().last_thread_end == "idle"

        assert kioku.count() == 5 + 7
        sources = _sources(kioku)
        left_out = {n for n in range(1, 11) if f"chat:{n}" not in sources}
        assert left_out == set(SMALL_TALK)  # the repeated small talk, already known

        decisions = {d.turn: d for d in wm.salience()}
        assert sorted(decisions) == list(range(1, 11))
        assert {n for n, d in decisions.items() if not d.long_term} == set(SMALL_TALK)
        kept_low = min(d.total for d in decisions.values() if d.long_term)
        assert all(decisions[n].total < kept_low for n in SMALL_TALK)
        assert decisions[2].novelty == 0.0  # five near-copies in long-term memory
        assert decisions[1].emotion > 0.9
        assert decisions[1].novelty == 1.0
        assert decisions[1].source_id == "chat:1"
        assert decisions[1].memory_id is not None
        assert decisions[2].memory_id is None

        (entry,) = kioku.midterm()
        assert entry.thread_id == "chat:1"
        assert entry.session_id == "chat"
        assert entry.turn_count == 10
        assert len(entry.turns) == 10
        assert entry.turns[1] == "user: ok thanks\nassistant: You're welcome."
        assert all(user in text for (user, _), text in zip(THREAD, entry.turns, strict=True))
        assert entry.summary
        assert entry.keywords
        assert entry.created == end
        assert entry.hot_until == end + timedelta(hours=24)
        assert entry.expires == end + timedelta(days=7)


def test_long_term_share_one_keeps_every_turn(tmp_path: Path) -> None:
    clock = FixedClock(NOW)
    with _open(tmp_path / "home", clock, "[context]\nlong_term_share = 1.0\n") as kioku:
        _seed_small_talk(kioku)
        wm = WorkingMemory(kioku=kioku, session_id="chat")
        _talk(wm, clock, THREAD)
        assert wm.close() == 10
        assert kioku.count() == 5 + 10
        assert all(d.long_term for d in wm.salience())
        assert kioku.midterm()[0].turn_count == 10


def test_the_argument_wins_over_the_configuration(tmp_path: Path) -> None:
    clock = FixedClock(NOW)
    with _open(tmp_path / "home", clock, "[context]\nlong_term_share = 0.5\n") as kioku:
        wm = WorkingMemory(kioku=kioku, session_id="chat", long_term_share=1.0)
        _talk(wm, clock, THREAD[:4])
        assert wm.flush() == 4
        half = WorkingMemory(kioku=kioku, session_id="other")
        _talk(half, clock, THREAD[4:8])
        assert half.flush() == 2


def test_the_entry_is_hot_for_a_day_and_expires_after_seven_days(tmp_path: Path) -> None:
    clock = FixedClock(NOW)
    with _open(tmp_path / "home", clock) as kioku:
        wm = WorkingMemory(kioku=kioku, session_id="chat")
        _talk(wm, clock, THREAD[:3])
        end = clock.now()
        wm.close()

        clock.advance(timedelta(hours=23, minutes=59))
        (entry,) = kioku.midterm()
        assert clock.now() < entry.hot_until  # hot: within midterm_hot_hours
        clock.advance(timedelta(minutes=1))
        (entry,) = kioku.midterm()
        assert not clock.now() < entry.hot_until  # kept, no longer hot

        clock.advance(timedelta(days=5, hours=23, minutes=59))
        assert [e.thread_id for e in kioku.midterm()] == ["chat:1"]
        assert kioku.store.expire_midterm(clock.now()) == 0
        clock.advance(timedelta(minutes=1))  # seven days after its last turn
        assert clock.now() == end + timedelta(days=7)
        assert kioku.midterm() == []
        assert kioku.store.expire_midterm(clock.now()) == 1
        # gone from the store, not only hidden: not even as of its own time
        assert kioku.store.midterm(kioku.user_id, kioku.agent_id, end) == []
        assert kioku.count() == 2  # long-term memory keeps what it was given


def test_the_tier_times_come_from_the_configuration(tmp_path: Path) -> None:
    clock = FixedClock(NOW)
    config = "[context]\nmidterm_hot_hours = 2\nmidterm_days = 30\n"
    with _open(tmp_path / "home", clock, config) as kioku:
        wm = WorkingMemory(kioku=kioku, session_id="chat")
        _talk(wm, clock, THREAD[:2])
        end = clock.now()
        wm.close()
        (entry,) = kioku.midterm()
        assert entry.hot_until == end + timedelta(hours=2)
        assert entry.expires == end + timedelta(days=30)
        clock.advance(timedelta(days=29, hours=23))
        assert len(kioku.midterm()) == 1
        clock.advance(timedelta(hours=1))
        assert kioku.midterm() == []


def test_a_long_thread_is_filed_in_parts_into_one_entry(tmp_path: Path) -> None:
    clock = FixedClock(NOW)
    with _open(tmp_path / "home", clock) as kioku:
        wm = WorkingMemory(kioku=kioku, session_id="long", max_turns=4)
        _talk(wm, clock, THREAD)
        # turns 1-4 left by the cap and were filed as a part; 5 and 6 wait for the next one
        assert wm.stats().threads == 1
        assert wm.stats().turns_pending == 2
        (entry,) = kioku.midterm()
        assert entry.turn_count == 4
        assert kioku.count() == 2  # floor(4 × 0.7)
        wm.close()
        (entry,) = kioku.midterm()
        assert entry.turn_count == 10
        assert [t.split("\n")[0] for t in entry.turns] == [f"user: {u}" for u, _ in THREAD]
        assert kioku.count() == 2 + 4  # and floor(6 × 0.7) of the rest


def test_a_crash_loses_no_turn(tmp_path: Path) -> None:
    home = tmp_path / "home"
    clock = FixedClock(NOW)
    with _open(home, clock) as kioku:
        wm = WorkingMemory(kioku=kioku, session_id="s-crash", max_turns=3)
        _talk(wm, clock, THREAD[:8])
        before = wm.stats()
        # the cap keeps three turns: 1-3 left and were filed as a part, 4 and 5 wait
        assert before.turns_pending == 2
        assert kioku.midterm()[0].turn_count == 3
        stored = kioku.count()
        decided = len(wm.salience())
    # the process ends without flush() or close()
    with _open(home, clock) as kioku:
        again = WorkingMemory(kioku=kioku, session_id="s-crash", max_turns=3)
        assert again.stats().turns_pending == 2
        assert again.stats().turns_stored == before.turns_stored == stored
        assert len(again.salience()) == decided  # why each filed turn went where it did
        _talk(again, clock, THREAD[8:])
        again.close()
        (entry,) = kioku.midterm()
        assert entry.turn_count == 10
        assert [t.split("\n")[0] for t in entry.turns] == [f"user: {u}" for u, _ in THREAD]
        sources = [s for m in kioku.list(limit=1000) for s in m.source_ids]
        assert len(sources) == len(set(sources)) == kioku.count()  # none written twice
        assert {d.turn for d in again.salience()} == set(range(1, 11))
        long_term = {f"s-crash:{d.turn}" for d in again.salience() if d.long_term}
        assert set(sources) == long_term
    with _open(home, clock) as kioku:
        assert WorkingMemory(kioku=kioku, session_id="s-crash").messages() == []


class _Down:
    """The offline analyzer behind a provider that is down while ``down`` is set."""

    def __init__(self, inner: Analyzer) -> None:
        self.inner = inner
        self.down = True

    @property
    def name(self) -> str:
        return self.inner.name

    def analyze(self, turn: Turn) -> Analysis:
        if self.down:
            raise ConnectionError("provider down")
        return self.inner.analyze(turn)

    def summarize(self, trigger: str, content: str) -> Compressed:
        if self.down:
            raise ConnectionError("provider down")
        return self.inner.summarize(trigger, content)

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        return self.inner.extract_keywords(trigger, content)


def test_a_thread_that_cannot_be_filed_waits_across_a_restart(tmp_path: Path) -> None:
    home = tmp_path / "home"
    clock = FixedClock(NOW)
    with _open(home, clock) as plain:
        down = _Down(plain.analyzer)
    with _open(home, clock, analyzer=down) as kioku:
        wm = WorkingMemory(kioku=kioku, session_id="s-down")
        _talk(wm, clock, THREAD[:3])
        clock.advance(timedelta(minutes=30))
        wm.add("user", "Something else now.")  # the thread ends; it cannot be filed
        assert wm.stats().turns_pending == 3
        assert kioku.count() == 0
        assert kioku.midterm() == []
        with pytest.raises(ConnectionError):
            wm.flush()  # the turn of the new thread is let go too, and waits
        assert wm.stats().turns_pending == 4
    with _open(home, clock) as kioku:  # the provider is back
        again = WorkingMemory(kioku=kioku, session_id="s-down")
        assert again.stats().turns_pending == 4
        assert again.close() == 2 + 1  # floor(3 × 0.7) of thread 1, and thread 2's one turn
        threads = {e.thread_id: e.turn_count for e in kioku.midterm()}
        assert threads == {"s-down:1": 3, "s-down:2": 1}


def test_a_turn_left_out_of_long_term_memory_is_found_on_purpose_until_it_expires(
    tmp_path: Path,
) -> None:
    clock = FixedClock(NOW)
    with _open(tmp_path / "home", clock, "[context]\nlong_term_share = 0.5\n") as kioku:
        wm = WorkingMemory(kioku=kioku, session_id="quiet")
        _talk(
            wm,
            clock,
            [
                ("My father passed away last night and I cannot stop crying.", "I am so sorry."),
                ("The plumber zanzibarquux comes on Thursday.", "Noted."),
            ],
        )
        wm.flush()
        assert not any("zanzibarquux" in m.trigger for m in kioku.list(limit=100))
        found = kioku.search_memory("zanzibarquux plumber")
        assert [h.thread_id for h in found.midterm] == ["quiet:1"]
        assert "zanzibarquux" in found.midterm[0].turn
        knowledge_only = kioku.search_memory("zanzibarquux plumber", kinds=["knowledge"])
        assert knowledge_only.midterm == ()
        clock.advance(timedelta(days=8))
        assert kioku.search_memory("zanzibarquux plumber").midterm == ()
