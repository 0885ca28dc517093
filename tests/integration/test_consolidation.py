"""Consolidation's rules one by one, on a real store: the validation cascade, procedure
reconsolidation, saved versions, resolution propagation across agents, spec 004's policies,
forgetting that leaves deliberate search intact, and protection."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.adapters.text.lexical import index_terms
from kioku.core.consolidation.model import NliScores
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails
from kioku.core.model import Kind, Level, Memory
from kioku.ports.store import MemoryFilter, MemoryPatch
from kioku.service.consolidation.validate import validate

TZ = ZoneInfo("Asia/Tokyo")
START = datetime(2026, 6, 1, 12, 0, tzinfo=TZ)


class ScoredNli:
    """An NLI model that gives every pair the same scores."""

    def __init__(self, entailment: float, contradiction: float) -> None:
        self.scores = NliScores(entailment, contradiction, 1 - entailment - contradiction)
        self.calls = 0

    @property
    def name(self) -> str:
        return "scored"

    def classify(self, premise: str, hypothesis: str) -> NliScores:
        self.calls += 1
        return self.scores


class Reviewer:
    """The review step of an LLM that answers as told and counts its calls."""

    def __init__(self, supported: bool) -> None:
        self.supported = supported
        self.calls = 0

    @property
    def name(self) -> str:
        return "reviewer"

    def review_knowledge(self, candidate: str, sources: Sequence[str]) -> bool:
        self.calls += 1
        return self.supported


@pytest.mark.parametrize(
    ("entailment", "contradiction", "supported", "accepted", "confidence", "stage", "asked"),
    [
        (0.6, 0.1, False, True, 0.9, "nli", 0),  # entailment ≥ 0.6: accepted, no LLM call
        (0.59, 0.1, True, True, 0.7, "llm", 1),  # just below: the LLM decides
        (0.1, 0.7, True, False, None, "nli", 0),  # contradiction ≥ 0.7: rejected, no call
        (0.1, 0.69, False, False, None, "llm", 1),
    ],
)
def test_the_validation_cascade(
    entailment: float,
    contradiction: float,
    supported: bool,
    accepted: bool,
    confidence: float | None,
    stage: str,
    asked: int,
) -> None:
    nli, llm = ScoredNli(entailment, contradiction), Reviewer(supported)
    verdict = validate(
        "Ken lives in Osaka.",
        ["Ken lives in Osaka."],
        nli=nli,
        llm=llm,
        terms=index_terms,  # type: ignore[arg-type]
    )
    assert (verdict.accepted, verdict.confidence, verdict.stage) == (accepted, confidence, stage)
    assert llm.calls == asked
    assert nli.calls >= 1


def test_without_nli_the_llm_decides_and_offline_the_lexical_check() -> None:
    llm = Reviewer(True)
    verdict = validate("Ken lives in Osaka.", ["x"], nli=None, llm=llm, terms=index_terms)  # type: ignore[arg-type]
    assert (verdict.stage, verdict.confidence, llm.calls) == ("llm", 0.7, 1)
    said = ["My colleague Ken lives in Osaka."]
    offline = validate("Ken lives in Osaka.", said, nli=None, llm=None, terms=index_terms)
    assert (offline.accepted, offline.stage) == (True, "lexical")
    invented = validate("Ken lives in Kyoto.", said, nli=None, llm=None, terms=index_terms)
    assert not invented.accepted
    negated = validate("Ken does not live in Osaka.", said, nli=None, llm=None, terms=index_terms)
    assert not negated.accepted


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def kioku(tmp_path: Path, clock: FixedClock) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", env={}, clock=clock) as k:
        yield k


def at(day: int, hour: int = 10) -> datetime:
    return START.replace(hour=hour) + timedelta(days=day)


def say(k: Kioku, clock: FixedClock, day: int, text: str, session: str | None = None) -> Memory:
    clock.advance(at(day) - clock.now())
    return k.remember_turn(text, "OK.", at=clock.now(), session_id=session).memory


def consolidate(k: Kioku, clock: FixedClock, day: int, *levels: str) -> None:
    clock.advance(at(day, 5) - clock.now())
    report = k.consolidate(list(levels) or None, now=clock.now())
    assert report.status in ("done", "up_to_date"), report.to_dict()


def items(k: Kioku, kind: Kind, agent: str | None = None) -> list[Memory]:
    return list(
        k.store.iter(MemoryFilter(user_id=k.user_id, agent_id=agent or k.agent_id, kind=kind.value))
    )


def test_a_procedure_said_again_with_other_steps_is_reconsolidated(
    kioku: Kioku, clock: FixedClock
) -> None:
    say(kioku, clock, 0, "To deploy the app: 1. run make test 2. push the image with make push")
    consolidate(kioku, clock, 1)
    [proc] = items(kioku, Kind.PROCEDURE)
    assert isinstance(proc.details, ProcedureDetails)
    assert (proc.details.confidence, proc.details.auto_distilled) == (0.4, True)
    kioku.report_procedure_outcome(proc.id, True)
    kioku.report_procedure_outcome(proc.id, True)
    say(
        kioku,
        clock,
        2,
        "To deploy the app: 1. run make lint 2. run the integration suite 3. sign the release "
        "4. upload it to the registry",
    )
    consolidate(kioku, clock, 3)
    [after] = items(kioku, Kind.PROCEDURE)
    details = after.details
    assert isinstance(details, ProcedureDetails)
    assert details.version == 2
    assert (details.success_count, details.failure_count, details.confidence) == (0, 0, 0.5)
    assert "sign the release" in details.steps
    [saved] = kioku.versions(after.id)
    assert saved.version == 1
    assert "make push" in saved.content
    assert kioku.history(after.id)["versions"][0]["version"] == 1
    # The same procedure again, the same steps: skipped, not a second copy.
    say(
        kioku,
        clock,
        4,
        "To deploy the app: 1. run make lint 2. run the integration suite 3. sign the release "
        "4. upload it to the registry",
    )
    consolidate(kioku, clock, 5)
    assert len(items(kioku, Kind.PROCEDURE)) == 1


def test_monthly_keeps_the_newest_five_versions(kioku: Kioku, clock: FixedClock) -> None:
    proc = kioku.write_memory(
        "procedure", "", title="rotate keys", description="rotate keys", steps=["a", "b"]
    )
    for version in range(1, 9):
        details = ProcedureDetails("rotate keys", ("a", "b"), version=version)
        kioku.store.update(proc.id, MemoryPatch(details=details))
        kioku.store.save_version(kioku.get(proc.id), clock.now())
    consolidate(kioku, clock, 1, "monthly")
    assert [v.version for v in kioku.versions(proc.id)] == [4, 5, 6, 7, 8]


def test_a_resolution_reaches_every_agent_of_the_owner(tmp_path: Path, clock: FixedClock) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}, clock=clock, agent_id="planner") as a:
        say(a, clock, 0, "The login bug is still unresolved.")
        consolidate(a, clock, 1)
        [open_item] = items(a, Kind.KNOWLEDGE)
    with Kioku.open(home, env={}, clock=clock, agent_id="coder") as b:
        say(b, clock, 1, "I fixed the login bug today.", session="s-b")
        clock.advance(timedelta(hours=1))
        b.finalize_session("s-b", now=clock.now())
        assert [r.item for r in b.resolutions()] == ["I fixed the login bug today."]
    with Kioku.open(home, env={}, clock=clock, agent_id="planner") as a:
        assert [r.agent_id for r in a.resolutions()] == ["coder"]
        consolidate(a, clock, 2)
        old = a.get(open_item.id)
        assert isinstance(old.details, KnowledgeDetails)
        assert old.details.superseded_by is not None
        new = a.get(old.details.superseded_by)
        assert new.content == "I fixed the login bug today."
        assert new.agent_id == "planner"


def _old_episodes(k: Kioku, clock: FixedClock, n: int) -> list[Memory]:
    made = []
    for i in range(n):
        made.append(say(k, clock, i, f"Note {i}: the garden hose number {i} is in shed {i}."))
    return made


@pytest.mark.parametrize("policy", ["retention", "importance", "capacity"])
def test_spec_004_policies(tmp_path: Path, policy: str) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text(
        f'[lifecycle]\npolicy = "{policy}"\ncapacity = 1000\n'
        "[compression]\nlevel1_ratio = 1.0\nlevel2_ratio = 0.0\nlevel3_ratio = 0.0\n"
    )
    clock = FixedClock(START)
    with Kioku.open(home, env={}, clock=clock) as k:
        episodes = _old_episodes(k, clock, 9)
        k.store.update(episodes[0].id, MemoryPatch(recall_count=6, last_access=at(80)))
        consolidate(k, clock, 10)  # importance 0.5 × 0.95^(weeks): above 0.3 for ten weeks
        levels = {m.id: m.current_level for m in items(k, Kind.EPISODE)}
        assert all(level == Level.FULL for level in levels.values())
        consolidate(k, clock, 100, "daily")
        life = k.lifecycle(now=clock.now())
        levels = {m.id: m.current_level for m in items(k, Kind.EPISODE)}
    compressed = {mid for mid, level in levels.items() if level == Level.SUMMARY}
    if policy == "retention":
        assert not compressed
    else:  # every episode unused for 100 days fell below 0.3; the one used on day 80 did not
        assert compressed == {m.id for m in episodes[1:]}
    assert life["policy"] == policy
    assert life["capacity"]["applies"] == (policy == "capacity")


def test_capacity_compresses_the_least_important_tenth(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text('[lifecycle]\npolicy = "capacity"\ncapacity = 10\n')
    clock = FixedClock(START)
    with Kioku.open(home, env={}, clock=clock) as k:
        episodes = _old_episodes(k, clock, 9)
        for m in episodes[1:]:  # all but the first recently used: it is the least important
            k.store.update(m.id, MemoryPatch(recall_count=2, last_access=at(9)))
        consolidate(k, clock, 10, "daily")
        levels = {m.id: m.current_level for m in items(k, Kind.EPISODE)}
    assert [mid for mid, level in levels.items() if level != Level.FULL] == [episodes[0].id]


def test_forgotten_knowledge_leaves_priming_not_deliberate_search(
    kioku: Kioku, clock: FixedClock
) -> None:
    note = kioku.write_memory(
        "knowledge", "The zanzibar server room code is kept by facilities.", at=at(-200)
    )
    kept = kioku.write_memory(
        "knowledge", "The zanzibar backup tapes are kept offsite.", protected=True, at=at(-200)
    )
    consolidate(kioku, clock, 0)
    assert kioku.get(note.id).low_activity_since is not None
    assert kioku.get(kept.id).low_activity_since is None
    consolidate(kioku, clock, 59, "monthly")
    assert not kioku.get(note.id).archived  # low for 59 days: not yet
    consolidate(kioku, clock, 61, "monthly")
    assert kioku.get(note.id).archived
    assert not kioku.get(kept.id).archived
    found = kioku.search_memory("zanzibar server room code")
    assert note.id in [hit.memory.id for hit in found.items]
    primed = kioku.prime("Where is the zanzibar server room code?", mark=False)
    assert note.id not in primed.memory_ids
    log = [e.event.value for e in kioku.store.read_log(memory_id=note.id)]
    assert log == ["mark_low", "forget"]


def test_mature_and_protected_procedures_are_never_marked(kioku: Kioku, clock: FixedClock) -> None:
    mature = kioku.write_memory(
        "procedure", "", title="backup", description="backup", steps=["a", "b"], at=at(-400)
    )
    kioku.store.update(
        mature.id, MemoryPatch(details=ProcedureDetails("backup", ("a", "b"), version=3))
    )
    failing = kioku.write_memory(
        "procedure", "", title="flush", description="flush", steps=["a", "b"], at=at(-1)
    )
    for _ in range(3):
        kioku.report_procedure_outcome(failing.id, False)
    consolidate(kioku, clock, 1)
    assert kioku.get(mature.id).low_activity_since is None
    assert kioku.get(failing.id).low_activity_since is not None  # utility 0 after 3 failures
    kioku.report_procedure_outcome(failing.id, True)
    consolidate(kioku, clock, 2)
    assert kioku.get(failing.id).low_activity_since is not None  # 1 / 4 = 0.25 < 0.3 still


def test_offline_reorganisation_of_low_items_is_reported_skipped(
    kioku: Kioku, clock: FixedClock
) -> None:
    for text in ("The red lamp in room 4 flickers.", "The red lamp in room 4 needs a new bulb."):
        kioku.write_memory("knowledge", text, at=at(-200))
    consolidate(kioku, clock, 0, "daily")
    report = kioku.consolidate(["weekly"], now=at(0, 6), dry_run=True)
    whys = [a.why for p in report.periods for a in p.actions if a.action == "skipped"]
    assert any("low-activation" in why and "no LLM provider" in why for why in whys)


def _bytes_of(home: Path, word: str) -> list[str]:
    needle = word.encode()
    return [p.name for p in home.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_forgetting_an_episode_erases_what_was_consolidated_from_it(
    tmp_path: Path, clock: FixedClock
) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}, clock=clock) as k:
        secret = say(k, clock, 0, "The zanzibarquux vault code is kept by Ken.")
        twice = say(k, clock, 0, "We decided to use Postgres for billing.")
        again = say(k, clock, 1, "We decided to use Postgres for billing.")
        consolidate(k, clock, 2)
        texts = {m.content: m for m in items(k, Kind.KNOWLEDGE)}
        assert "The zanzibarquux vault code is kept by Ken." in texts
        shared = texts["We decided to use Postgres for billing."]
        report = k.erase(secret.id)
        assert report.erased == 2
        assert texts["The zanzibarquux vault code is kept by Ken."].id in report.memory_ids
        k.erase(twice.id)  # the decision is still said by the other episode: it stays
        kept = k.get(shared.id)
        assert isinstance(kept.details, KnowledgeDetails)
        assert kept.details.source_episodes == (again.id,)
    assert _bytes_of(home, "zanzibarquux") == []


def test_deliberate_search_does_not_show_a_fact_twice(kioku: Kioku, clock: FixedClock) -> None:
    said = say(kioku, clock, 0, "The quokkafarm orchard is in Nagano.")
    other = say(kioku, clock, 0, "The quokkafarm barn needs paint before winter")
    consolidate(kioku, clock, 1)
    [item] = [m for m in items(kioku, Kind.KNOWLEDGE) if "orchard" in m.content]
    found = [f.memory.id for f in kioku.search_memory("quokkafarm orchard Nagano").items]
    assert (item.id in found) != (said.id in found)  # the fact once, as the item or the episode
    assert other.id in found
    written = kioku.write_memory("knowledge", "The quokkafarm orchard is in Nagano, row 4.")
    again = [f.memory.id for f in kioku.search_memory("quokkafarm orchard Nagano").items]
    assert written.id in again  # written on purpose: always shown
