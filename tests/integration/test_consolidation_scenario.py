"""A month of conversation, then a quiet month, consolidated night after night.

``tests/fixtures/consolidation/history.json`` holds the history (English and Japanese): each
day's turns are stored at 10:00, priming is asked before them when the day says so, the session
is finalized in the evening, and the next day's batch (03:30) runs the nightly batch and the
consolidation due. The same history runs twice: with the scripted LLM server (the LLM extracts,
validates, distils, judges conflicts and outcomes) and offline with no provider (everything is
lifted from the episodes and checked lexically). After every batch a second consolidation run
of the same moment must change nothing.
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
from kioku.adapters.analyzers.llm.anthropic import AnthropicAnalyzer
from kioku.adapters.analyzers.llm.fallback import FallbackAnalyzer
from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.adapters.clock import FixedClock
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails
from kioku.core.kinds_explain import kind_explanation
from kioku.core.model import Kind, Memory
from kioku.core.usage import Usage
from kioku.ports.store import MemoryFilter
from tests.fakes.llm_server import FakeLlmServer, Request, default_answer, task_of

FIXTURE = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "consolidation" / "history.json").read_text()
)
TZ = ZoneInfo("Asia/Tokyo")
DAY0 = datetime(2026, 9, 30, tzinfo=TZ)


def moment(day: int, hour: int, minute: int = 0) -> datetime:
    return DAY0 + timedelta(days=day, hours=hour, minutes=minute)


def move(clock: FixedClock, to: datetime) -> None:
    clock.advance(to - clock.now())


def seed(k: Kioku) -> dict[str, str]:
    """The items written before the history; their ids by text."""
    ids: dict[str, str] = {}
    for item in FIXTURE["seeded"]:
        at = datetime.fromisoformat(item["at"])
        memory = k.write_memory(
            item["kind"],
            item.get("text", ""),
            title=item["title"],
            description=item.get("description", ""),
            steps=item.get("steps", ()),
            protected=item.get("protected", False),
            at=at,
        )
        ids[item.get("text") or item["title"]] = memory.id
    return ids


def fingerprint(k: Kioku) -> Any:
    """Everything consolidation could change, to compare before and after a second run."""
    rows = sorted(
        (m.id, m.kind.value, m.content, repr(m.details), m.archived, m.low_activity_since)
        for m in all_memories(k)
    )
    return rows, len(k.store.read_log())


def all_memories(k: Kioku) -> list[Memory]:
    return list(k.store.iter(MemoryFilter(user_id=k.user_id, agent_id=k.agent_id)))


def run_history(k: Kioku, clock: FixedClock) -> list[dict[str, Any]]:
    """Every day of the history, each followed by the next night's batch; the batch reports."""
    by_day = {d["day"]: d for d in FIXTURE["days"]}
    reports = []
    for day in range(1, FIXTURE["quiet_until"] + 1):
        move(clock, moment(day, 3, 30))
        report = k.batch(now=clock.now())
        reports.append(report.to_dict())
        before = fingerprint(k)
        again = k.consolidate(now=clock.now())
        assert again.status == "up_to_date", (day, again.to_dict())
        assert not again.periods
        assert fingerprint(k) == before, f"a second run on day {day} changed something"
        plan = by_day.get(day)
        if plan is None:
            continue
        session = f"s-{day}"
        move(clock, moment(day, 10))
        if "prime" in plan:
            k.prime(plan["prime"], session_id=session)
        for n, (user, assistant) in enumerate(plan["turns"]):
            move(clock, moment(day, 10, n + 1))
            k.remember_turn(user, assistant, at=clock.now(), session_id=session)
        move(clock, moment(day, 22))
        k.finalize_session(session, now=clock.now())
    return reports


def current_knowledge(k: Kioku) -> list[Memory]:
    return [
        m
        for m in all_memories(k)
        if m.kind is Kind.KNOWLEDGE
        and not m.archived
        and not (isinstance(m.details, KnowledgeDetails) and m.details.superseded)
    ]


def one(memories: list[Memory], said: str) -> Memory:
    found = [m for m in memories if said in m.content]
    assert len(found) == 1, (said, [m.content for m in found])
    return found[0]


def check_outcome(k: Kioku, seeded: dict[str, str]) -> None:
    expect = FIXTURE["expect"]
    current = current_knowledge(k)
    for said in expect["current_knowledge"]:
        one(current, said)
    everything = all_memories(k)
    knowledge = [m for m in everything if m.kind is Kind.KNOWLEDGE]
    for older, newer in expect["superseded"]:
        old = one([m for m in knowledge if m not in current], older)
        new = one(current, newer)
        details = old.details
        assert isinstance(details, KnowledgeDetails)
        assert details.superseded_by is not None
        assert details.valid_until is not None
        # The chain leads to the current fact (a merge or a second update may sit between).
        assert new.id == details.superseded_by or details.superseded_by in {m.id for m in knowledge}
        assert "superseded" in kind_explanation(old)["lifecycle"]
        history = k.history(new.id)
        if new.id == details.superseded_by:  # what the current fact replaced, and until when
            assert history["replaces"]["id"] == old.id
            assert history["replaces"]["valid_until"] is not None
    a, b = (one(current, said) for said in expect["coexist"])
    for item, other in ((a, b), (b, a)):
        assert isinstance(item.details, KnowledgeDetails)
        assert any(other.id in note for note in item.details.notes), item.details.notes
    for word in expect["never_knowledge"]:
        assert not [m for m in knowledge if word in m.content]
    procedures = [m for m in everything if m.kind is Kind.PROCEDURE and not m.archived]
    for said, want in expect["procedures"].items():
        proc = one(procedures, said)
        details = proc.details
        assert isinstance(details, ProcedureDetails)
        assert (details.success_count, details.failure_count) == (
            want["successes"],
            want["failures"],
        ), said
        if want["successes"]:
            assert details.confidence == 1.0
        assert (proc.low_activity_since is not None) == want["low"], said
    # Forgetting on schedule: the seeded items marked low on day 1 are archived by the
    # monthly run of 2026-12-01 (60 days later), the protected one never.
    by_id = {m.id: m for m in everything}
    for item in FIXTURE["seeded"]:
        memory = by_id[seeded[item.get("text") or item["title"]]]
        if item["expect"] == "forgotten":
            assert memory.archived, item
        else:
            assert not memory.archived, item
            assert memory.low_activity_since is None, item


# -- offline --------------------------------------------------------------------------------


@pytest.fixture
def offline(tmp_path: Path) -> Iterator[tuple[Kioku, FixedClock]]:
    clock = FixedClock(moment(0, 12))
    with Kioku.open(tmp_path / "home", env={}, clock=clock) as k:
        yield k, clock


def test_a_month_offline(offline: tuple[Kioku, FixedClock]) -> None:
    from kioku.adapters.text.lexical import index_terms
    from kioku.core.consolidation.entail import entailment

    k, clock = offline
    seeded = seed(k)
    move(clock, moment(0, 12))
    run_history(k, clock)
    check_outcome(k, seeded)
    # Nothing invented: every knowledge item consolidation wrote is entailed, term for term,
    # by the episodes it names as its sources.
    everything = {m.id: m for m in all_memories(k)}
    written = [
        m
        for m in everything.values()
        if m.kind is Kind.KNOWLEDGE
        and isinstance(m.details, KnowledgeDetails)
        and m.details.auto_consolidated
    ]
    assert written
    for item in written:
        assert isinstance(item.details, KnowledgeDetails)
        sources = [said(k, s) for s in item.details.source_episodes if s in everything]
        assert sources, item
        assert entailment(sources, item.content, index_terms).entailment >= 0.99, item.content


def said(k: Kioku, episode_id: str) -> str:
    """What an episode said: its original words when the batch has compressed it."""
    read = k.read_memory(episode_id, mark=False)
    text = read.original or read.memory
    return f"{text.trigger}\n{text.content}"


# -- with the scripted LLM ----------------------------------------------------------------


def _texts(request: Request, tag: str) -> list[str]:
    import html

    return [html.unescape(t) for t in re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", request.user, re.S)]


def scripted(request: Request) -> dict[str, Any] | str:
    """The scripted model: it answers each consolidation task as the fixture says."""
    from tests.fakes.llm_server import episodes_of

    llm = FIXTURE["llm"]
    task = task_of(request)
    if task == "extract_knowledge":
        items = [
            {"title": fact["text"][:30], "text": fact["text"], "sources": [ident]}
            for ident, text in episodes_of(request)
            for fact in llm["knowledge"]
            if fact["said"] in text
        ]
        return {"knowledge": items}
    if task == "distil_procedures":
        return {
            "procedures": [
                {**{k: p[k] for k in ("title", "description", "steps")}, "sources": [ident]}
                for ident, text in episodes_of(request)
                for p in llm["procedures"]
                if p["said"] in text
            ]
        }
    if task == "review_knowledge":
        statement = " ".join(_texts(request, "statement"))
        bad = any(word in statement for word in llm["unsupported"])
        return {"reason": "checked", "supported": not bad}
    if task == "judge_conflict":
        older, newer = _texts(request, "knowledge")[:2]
        for c in llm["conflicts"]:
            if c["older"] in older and c["newer"] in newer:
                return {
                    "contradicts": True,
                    "strategy": c["strategy"],
                    "merged_text": None,
                    "condition": c.get("condition"),
                    "reason": "scripted",
                }
        return {
            "contradicts": False,
            "strategy": None,
            "merged_text": None,
            "condition": None,
            "reason": "scripted",
        }
    if task == "reconsolidate":
        return {"update": False, "text": None}
    if task == "merge_texts":
        return {"text": " ".join(_texts(request, "text"))}
    if task == "judge_outcome":
        session = " ".join(_texts(request, "session"))
        outcome = (
            "failure" if "failed" in session else "success" if "worked" in session else "unknown"
        )
        return {"outcome": outcome}
    if "List the claims the speaker" in request.user + request.system:
        return {"claims": []}
    answer = default_answer(request)
    turn = re.search(r"<turn>\n(.*?)\n</turn>", request.user, re.S)
    if turn is not None:  # the model's reading of a turn keeps the turn's own words
        said = json.loads(turn.group(1))
        answer = {**answer, "trigger": said["user"], "content": said["assistant"] or "-"}
    return answer


class Sink:
    """Where the provider records the tokens of every call."""

    def __init__(self, into: list[Usage]) -> None:
        self.into = into

    def record_usage(self, usage: Usage) -> None:
        self.into.append(usage)


def test_a_month_with_the_scripted_llm(tmp_path: Path) -> None:
    clock = FixedClock(moment(0, 12))
    with FakeLlmServer(scripted) as server:
        used: list[Usage] = []
        primary = AnthropicAnalyzer(
            api_key="sk-test",
            base_url=server.url,
            max_retries=0,
            sleep=lambda _s: None,
            usage_sink=Sink(used),
        )
        analyzer = FallbackAnalyzer(primary, OfflineAnalyzer(), lambda _w: None)
        with Kioku.open(tmp_path / "home", env={}, clock=clock, analyzer=analyzer) as k:
            seeded = seed(k)
            reports = run_history(k, clock)
            check_outcome(k, seeded)
            tasks = [task_of(r) for r in server.requests]
            for task in ("extract_knowledge", "distil_procedures", "review_knowledge"):
                assert task in tasks, task
            assert "judge_conflict" in tasks
            assert "judge_outcome" in tasks
            calls = [u for u in used if u.purpose == "consolidate"]
            assert len(calls) == sum(1 for t in tasks if t is not None)
            assert all(u.input_tokens > 0 for u in calls)
    assert all(r["status"] == "done" for r in reports)
