"""Working memory over a real SQLite store: the budget holds, threads end, no turn is lost."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kioku import Kioku
from kioku.core.context import EstimateCounter, message_tokens
from kioku.core.context import Message as Msg
from kioku.ports.analyzer import Analysis, Analyzer, Compressed, Turn
from kioku.ports.store_records import MidTermEntry
from kioku.service.context.working_memory import WorkingMemory
from tests.cli.conftest import clean_env

T0 = datetime.fromisoformat("2026-03-01T10:00:00+09:00")
_SYLLABLES = ("ka", "zu", "mo", "ri", "te", "po", "xa", "vi", "qu", "ne", "do", "shi")


def _codeword(rng: random.Random, taken: set[str]) -> str:
    while True:
        word = "zq" + "".join(rng.choice(_SYLLABLES) for _ in range(4))
        if word not in taken:
            taken.add(word)
            return word


def _tokens(wm: WorkingMemory) -> int:
    counter = EstimateCounter()
    return sum(message_tokens(counter, Msg(m["role"], m["content"])) for m in wm.messages())


def test_every_turn_that_leaves_working_memory_can_be_recalled(tmp_path: Path) -> None:
    """Spec 002 + 003: a 500-turn session in a 2,000-token window. The window never exceeds
    its budget, and every turn that left it is found by recall of the word only it holds.
    Every turn goes to long-term memory here (``long_term_share=1.0``); a turn that leaves in
    mid-thread waits for its thread's part of ``max_turns`` turns, so a few may be pending."""
    home = tmp_path / "home"
    rng = random.Random(5)
    words: set[str] = set()
    with Kioku.open(home) as kioku:
        wm = WorkingMemory(
            max_tokens=2000, kioku=kioku, session_id="long-session", long_term_share=1.0
        )
        wm.add("system", "You are a helpful assistant who remembers what the user says.")
        codes: list[str] = []
        for i in range(500):
            code = _codeword(rng, words)
            codes.append(code)
            at = T0 + timedelta(minutes=2 * i)
            filler = " ".join(rng.choice(("plan", "garden", "train", "budget", "music"))
                              for _ in range(rng.randint(30, 90)))  # fmt: skip
            wm.add("user", f"Please note the project name {code}. {filler}", at=at)
            assert _tokens(wm) <= 2000
            wm.add("assistant", f"Noted: {code} is the project name. {filler}", at=at)
            assert _tokens(wm) <= 2000
        stats = wm.stats()
        assert stats.prunes > 10
        assert stats.turns_stored > 400  # most left the window already, by pruning or the cap
        assert stats.turns_pending < wm.threads_policy.max_turns  # the next part, waiting
        in_window = {c for c in codes if any(c in m["content"] for m in wm.messages())}
        left = [c for c in codes if c not in in_window]
        # a turn leaves when any of its messages does, so some stored turns still show a part
        assert len(left) <= stats.turns_stored + stats.turns_pending
        missing = [c for c in left if not _found(kioku, c)]
        assert len(missing) == stats.turns_pending
        # The session ends: the turns still in the window are remembered too.
        wm.flush()
        assert kioku.count() == 500
        assert [c for c in sorted(in_window) if not _found(kioku, c)] == []
    # and through the command line, as a user would look
    for code in (codes[0], codes[250], codes[-1]):
        done = subprocess.run(
            [sys.executable, "-m", "kioku", "--home", str(home), "recall", code, "--json"],
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert code in done.stdout


def _found(kioku: Kioku, code: str) -> bool:
    result = kioku.recall(code, mark=False)
    return any(code in (item.memory.trigger + item.memory.content) for item in result.items)


def _midterm(kioku: Kioku) -> list[MidTermEntry]:
    """The mid-term tier as of the conversation's day."""
    return kioku.store.midterm(kioku.user_id, kioku.agent_id, T0)


def _turn(wm: WorkingMemory, text: str, at: datetime) -> None:
    wm.add("user", text, at=at)
    wm.add("assistant", f"reply to: {text}", at=at + timedelta(seconds=5))


def test_a_thread_ends_after_ten_idle_minutes(tmp_path: Path) -> None:
    with Kioku.open(tmp_path / "home") as kioku:
        wm = WorkingMemory(kioku=kioku)
        _turn(wm, "Which rice cooker should I buy?", T0)
        _turn(wm, "The cheaper one, I think.", T0 + timedelta(minutes=3))
        # exactly ten minutes after the last message: still the same thread
        _turn(wm, "Does it have a timer?", T0 + timedelta(minutes=3, seconds=5 + 600))
        assert kioku.count() == 0
        _turn(wm, "Now something else entirely.", T0 + timedelta(minutes=40))
        assert wm.stats().last_thread_end == "idle"
        # the first thread ended: the two most salient of its three turns (spec 003 §7's 70 %)
        assert kioku.count() == 2
        (entry,) = _midterm(kioku)
        assert entry.turn_count == 3  # every turn in the mid-term tier
        assert [m["content"] for m in wm.messages()] == [
            "Now something else entirely.",
            "reply to: Now something else entirely.",
        ]


def test_a_topic_phrase_ends_the_thread_but_system_messages_stay(tmp_path: Path) -> None:
    with Kioku.open(tmp_path / "home") as kioku:
        wm = WorkingMemory(kioku=kioku)
        wm.add("system", "Be brief.", at=T0)
        _turn(wm, "インセプションみたいな映画ある？", T0)
        _turn(wm, "ところで、明日の天気は？", T0 + timedelta(minutes=1))
        assert wm.stats().last_thread_end == "topic"
        assert kioku.count() == 1
        assert wm.messages()[0] == {"role": "system", "content": "Be brief."}
        assert "インセプション" not in str(wm.messages())
        (memory,) = kioku.list()
        assert "インセプション" in memory.trigger + memory.content


def test_the_turn_cap_lets_the_oldest_turn_go(tmp_path: Path) -> None:
    with Kioku.open(tmp_path / "home") as kioku:
        wm = WorkingMemory(kioku=kioku, max_turns=3)
        for i in range(5):
            _turn(wm, f"step number {i} of the recipe", T0 + timedelta(minutes=i))
        assert wm.stats().last_thread_end == "cap"
        window = " ".join(m["content"] for m in wm.messages())
        assert "number 0" not in window
        assert "number 1" not in window
        assert all(f"number {i}" in window for i in (2, 3, 4))
        # turns 0 and 1 left in mid-thread: they wait for their thread
        assert kioku.count() == 0
        assert wm.stats().turns_pending == 2
        assert wm.close() == 3  # the thread's five turns: the three most salient
        assert kioku.count() == 3
        assert _midterm(kioku)[0].turn_count == 5


class _Topics:
    """A deterministic 'semantic' embedder: one axis per topic word (a fake provider)."""

    model_id = "test:topics-v1"
    dim = 8
    _axes = ("cat", "tax", "rain", "guitar")

    def embed(self, texts: Sequence[str]) -> Any:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for axis, word in enumerate(self._axes):
                if word in text.lower():
                    out[row, axis] = 1.0
            out[row, 7] = 0.2  # everything shares a little
            out[row] /= np.linalg.norm(out[row])
        return out


def test_a_drop_in_similarity_ends_the_thread_with_a_semantic_embedder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text("[embedding]\ndimensions = 8\n")
    with Kioku.open(home, embedder=_Topics()) as kioku:  # type: ignore[arg-type]
        wm = WorkingMemory(kioku=kioku)
        assert wm.threads_policy.similarity_threshold == 0.75
        _turn(wm, "My cat sleeps all day", T0)
        _turn(wm, "Is it normal for a cat to sleep that much?", T0 + timedelta(minutes=1))
        assert kioku.count() == 0
        _turn(wm, "How do I file my tax return?", T0 + timedelta(minutes=2))
        assert wm.stats().last_thread_end == "similarity"
        assert kioku.count() == 1  # the more salient of the thread's two turns
    with Kioku.open(tmp_path / "offline") as kioku:
        # the offline embedder hashes words: the rule would end every thread, so it is off
        assert WorkingMemory(kioku=kioku).threads_policy.similarity_threshold is None


class _Flaky:
    """The offline analyzer, failing while ``fail`` is set (a provider that is down)."""

    def __init__(self, inner: Analyzer) -> None:
        self.inner = inner
        self.fail = True

    @property
    def name(self) -> str:
        return self.inner.name

    def analyze(self, turn: Turn) -> Analysis:
        if self.fail:
            raise ConnectionError("provider down")
        return self.inner.analyze(turn)

    def summarize(self, trigger: str, content: str) -> Compressed:
        raise ConnectionError("provider down")

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        return self.inner.extract_keywords(trigger, content)


def test_a_turn_that_cannot_be_written_stays_pending_until_it_is(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home) as plain:
        flaky = _Flaky(plain.analyzer)
    with Kioku.open(home, analyzer=flaky) as kioku:  # type: ignore[arg-type]
        wm = WorkingMemory(kioku=kioku, max_turns=1, long_term_share=1.0)
        _turn(wm, "first thing to remember about the garden", T0)
        _turn(wm, "second thing about the garden", T0 + timedelta(minutes=1))
        assert wm.stats().turns_pending == 1
        assert kioku.count() == 0
        with pytest.raises(ConnectionError):
            wm.flush()
        flaky.fail = False
        assert wm.flush() == 2
        assert wm.stats().turns_pending == 0
        assert kioku.count() == 2


def _aggressive(kioku: Kioku) -> tuple[WorkingMemory, int]:
    """A window filled to 95 % of its budget: spec 002's stage of pruning with summaries."""
    chat = [
        Msg(role, f"{role} message {i} about the weather and the plans for the weekend trip")
        for i in range(40)
        for role in ("user", "assistant")
    ]
    total = sum(message_tokens(EstimateCounter(), m) for m in chat)
    budget = int(total / 0.95) + 1
    wm = WorkingMemory(max_tokens=budget, kioku=kioku, auto_prune=False, max_turns=1000)
    for m in chat:
        wm.add(m.role, m.content, at=T0)
    return wm, budget


def test_gaps_are_summarised_by_the_analyzer_in_the_aggressive_stage(tmp_path: Path) -> None:
    with Kioku.open(tmp_path / "home") as kioku:
        wm, budget = _aggressive(kioku)
        _, stats = wm.prune()
        assert stats.stage.value == "aggressive"
        assert stats.summaries >= 1
        assert stats.final_tokens <= budget
        assert any(m["content"].startswith("[Summary of") for m in wm.messages())


def test_a_failing_summarizer_leaves_notices_and_the_budget_holds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home) as plain:
        flaky = _Flaky(plain.analyzer)
    flaky.fail = False  # analyze works, summarize raises
    with Kioku.open(home, analyzer=flaky) as kioku:  # type: ignore[arg-type]
        wm, budget = _aggressive(kioku)
        _, stats = wm.prune()
        assert stats.stage.value == "aggressive"
        assert stats.summaries == 0
        assert stats.notices >= 1
        assert stats.final_tokens <= budget
        assert not any(m["content"].startswith("[Summary of") for m in wm.messages())


def test_without_a_store_it_only_prunes() -> None:
    wm = WorkingMemory(max_tokens=300)
    assert wm.kioku is None
    for i in range(60):
        wm.add("user", f"question {i}: how do I configure the proxy on this machine?")
        wm.add("assistant", f"answer {i}: set the environment variable and restart")
        assert _tokens(wm) <= 300
    assert wm.stats().prunes > 0
    assert wm.messages()[-1]["content"].startswith("answer 59")


def test_prune_returns_the_window_and_its_statistics() -> None:
    wm = WorkingMemory(max_tokens=400, auto_prune=False)
    wm.add("user", "a short question")
    messages, stats = wm.prune()
    assert messages == [{"role": "user", "content": "a short question"}]
    assert stats.pruned is False
    assert stats.stage.value == "none"
    for i in range(30):
        wm.add(
            "assistant", f"a long answer number {i} with several words in it, to fill the window"
        )
    messages, stats = wm.prune()
    assert stats.pruned is True
    assert messages == wm.messages()
    assert stats.final_tokens <= 400
    assert stats.original_count == 31
    assert stats.final_count == len(messages)


def test_a_session_continues_after_a_restart_and_close_ends_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home) as kioku:
        wm = WorkingMemory(kioku=kioku, session_id="s-restart", max_turns=2, long_term_share=1.0)
        wm.add("system", "Be brief.", at=T0)
        for i in range(3):
            _turn(wm, f"question {i} about the garden", T0 + timedelta(minutes=i))
        before = wm.messages()
        stats = wm.stats()
        assert kioku.count() == 0
        assert stats.turns_pending == 1  # the cap let turn 0 go: it waits for its thread
    # the process ends without close(): a crash, as far as the window is concerned
    with Kioku.open(home) as kioku:
        again = WorkingMemory(kioku=kioku, session_id="s-restart", max_turns=2, long_term_share=1.0)
        assert again.messages() == before
        assert again.stats().turns_stored == stats.turns_stored
        assert again.stats().turns_pending == 1
        assert again.stats().turns_seen == 3
        _turn(again, "question 3 about the garden", T0 + timedelta(minutes=3))
        # the cap goes on counting the restored thread: turns 0 and 1 wait, a part of 2
        assert kioku.count() == 2
        assert again.close() == 2
        assert kioku.count() == 4
        assert [m.trigger + m.content for m in kioku.list()].count("") == 0
    with Kioku.open(home) as kioku:
        assert WorkingMemory(kioku=kioku, session_id="s-restart").messages() == []
        other = WorkingMemory(kioku=kioku, session_id="s-other", durable=False)
        other.add("user", "not kept")
    with Kioku.open(home) as kioku:
        assert WorkingMemory(kioku=kioku, session_id="s-other").messages() == []


def test_a_turn_written_just_before_a_crash_is_not_written_twice(tmp_path: Path) -> None:
    import json

    home = tmp_path / "home"
    with Kioku.open(home) as kioku:
        wm = WorkingMemory(kioku=kioku, session_id="s-crash", max_turns=1)
        _turn(wm, "first thing about the garden", T0)
        _turn(wm, "second thing about the garden", T0 + timedelta(minutes=1))
        assert kioku.count() == 1
        # the crash came after the memory of turn 1 was written and before the window was
        # kept: the kept state still says turn 1 is waiting to be remembered
        key = "working_memory:default:default:s-crash"
        state = json.loads(kioku.store.get_state(key) or "{}")
        assert [t["n"] for t in state["turns"]] == [2]  # turn 1 is remembered and gone
        state["turns"].insert(
            0,
            {
                "n": 1,
                "thread": 1,
                "at": T0.isoformat(),
                "parts": [["user", "first thing about the garden"]],
                "left": True,
                "stored": False,
            },
        )
        kioku.store.set_state(key, json.dumps(state))
    with Kioku.open(home) as kioku:
        again = WorkingMemory(kioku=kioku, session_id="s-crash", max_turns=1)
        assert again.flush() == 1  # only turn 2
        assert kioku.count() == 2
