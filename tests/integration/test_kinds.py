"""Memory kinds and deliberate search through the Python API, on a real home.

Knowledge, procedures and profiles are written, listed, searched, explained, protected and
erased like episodes; the nightly batch leaves them as they are while it compresses
episodes, whose original words stay findable by a search on purpose (unless
``compression.keep_originals`` is off). Reading a memory recalls it. Another user never sees
any of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.kinds import (
    KnowledgeDetails,
    Preference,
    ProcedureDetails,
    ProfileDetails,
    ProfileFact,
)
from kioku.core.kinds_explain import kind_explanation
from kioku.core.model import Kind, Level, Memory, Valence
from kioku.errors import (
    MemoryNotFoundError,
    ProtectedMemoryError,
    ValidationError,
)
from kioku.ports.store import MemoryPatch, Original
from kioku.service.kinds.writing import procedure_text

TZ = ZoneInfo("Asia/Tokyo")
START = datetime(2026, 4, 1, 12, 0, tzinfo=TZ)
_FIXTURES = [HealthCheck.function_scoped_fixture]

#: An episode whose summary (its first sentence) leaves out the marker of its second.
TRIGGER = "We planned the database migration for the billing service"
CONTENT = (
    "I wrote down the steps: back up, migrate, verify the row counts, then switch. "
    "Afterwards we ate at the zanzibarquux noodle bar near the station."
)
MARKER = "zanzibarquux"


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(START)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def kioku(home: Path, clock: FixedClock) -> Iterator[Kioku]:
    with Kioku.open(home, env={}, clock=clock) as k:
        yield k


def fading_episode(k: Kioku, trigger: str = TRIGGER, content: str = CONTENT) -> Memory:
    """A casual episode of low intensity: the first batch summarises it."""
    return k.remember(
        trigger, content, intensity=45, category="casual", valence="neutral", arousal=40
    )


def profile(k: Kioku, person: str = "田中さん") -> Memory:
    """A profile memory (profiles are not written by write_memory)."""
    details = ProfileDetails(
        person=person,
        preferences=(Preference(topic="food", value="sushi", polarity=1, count=2),),
        facts=(ProfileFact(key="residence", value="Osaka", sources=("mem_x",)),),
        mentions=(("alice", 2),),
    )
    return k.remember(
        Memory(
            id="",
            created=k.clock.now(),
            trigger=person,
            content="residence: Osaka\nlikes: sushi",
            emotional_intensity=5,
            emotional_valence=Valence.NEUTRAL,
            emotional_arousal=10,
            category="casual",
            decay_coefficient=0.5,
            retention_score=5.0,
            kind=Kind.PROFILE,
            details=details,
        )
    )


def found_ids(k: Kioku, query: str, **options: object) -> list[str]:
    return [f.memory.id for f in k.search_memory(query, **options).items]  # type: ignore[arg-type]


# -- writing, listing, getting -------------------------------------------------------------


def test_each_kind_is_written_listed_and_got(kioku: Kioku) -> None:
    knowledge = kioku.write_memory(
        "knowledge",
        "  The staging database is db-stg-2  ",
        title="staging   database",
        confidence=0.9,
        source_ids=["mem_20260101_000000_aaaaaaaa"],
        keywords=["staging"],
    )
    procedure = kioku.write_memory(
        "procedure",
        "ask in #ops first",
        title="deploy",
        description="[deploy]  release the web app",
        steps=["run the tests", "   ", " tag   the release "],
    )
    episode = kioku.write_memory(
        "episode", "We moved the staging database to db-stg-2", title="The staging move"
    )

    assert knowledge.kind is Kind.KNOWLEDGE
    assert (knowledge.trigger, knowledge.content) == (
        "staging database",
        "The staging database is db-stg-2",
    )
    assert knowledge.details == KnowledgeDetails(
        confidence=0.9,
        source_episodes=("mem_20260101_000000_aaaaaaaa",),
        valid_from=START,
    )
    assert knowledge.created == START
    assert "staging" in knowledge.keywords

    assert procedure.kind is Kind.PROCEDURE
    assert procedure.details == ProcedureDetails(
        description="[deploy] release the web app",
        steps=("run the tests", "tag the release"),
        confidence=0.5,
    )
    assert procedure.content == (
        procedure_text("[deploy] release the web app", ["run the tests", "tag the release"])
        + "\nask in #ops first"
    )
    assert procedure.content.splitlines()[1:3] == ["1. run the tests", "2. tag the release"]

    assert episode.kind is Kind.EPISODE
    assert episode.details is None
    assert episode.trigger == "The staging move"

    for memory in (knowledge, procedure, episode):
        assert kioku.get(memory.id) == memory
        assert not memory.protected
    assert [m.id for m in kioku.list(kind="knowledge")] == [knowledge.id]
    assert [m.id for m in kioku.list(kind="semantic")] == [knowledge.id]
    assert [m.id for m in kioku.list(kind="procedure")] == [procedure.id]
    assert [m.id for m in kioku.list(kind="episode")] == [episode.id]
    assert kioku.list(kind="profile") == []
    assert {m.id for m in kioku.list()} == {knowledge.id, procedure.id, episode.id}


def test_a_title_defaults_to_the_start_of_the_text(kioku: Kioku) -> None:
    text = "word " * 40
    knowledge = kioku.write_memory("knowledge", text)
    assert knowledge.trigger == " ".join(text.split())[:80]
    procedure = kioku.write_memory("procedure", "restart the queue worker when it hangs")
    assert procedure.trigger == "restart the queue worker when it hangs"
    assert isinstance(procedure.details, ProcedureDetails)
    assert procedure.details.description == "restart the queue worker when it hangs"
    assert procedure.content == "restart the queue worker when it hangs"


def test_written_knowledge_and_procedures_can_start_protected(kioku: Kioku) -> None:
    memory = kioku.write_memory("knowledge", "never deploy on Fridays", protected=True)
    assert memory.protected
    assert kioku.get(memory.id).protected


@pytest.mark.parametrize(
    ("kind", "text", "options", "field"),
    [
        ("profile", "Tanaka likes sushi", {}, "kind"),
        ("memo", "anything", {}, "kind"),
        ("knowledge", "   ", {}, "text"),
        ("knowledge", 42, {}, "text"),
        ("procedure", "", {}, "description"),
        ("procedure", " ", {"description": "  ", "steps": ["a step"]}, "description"),
        ("knowledge", "a fact", {"confidence": 1.5}, "confidence"),
        ("knowledge", "a fact", {"confidence": -0.1}, "confidence"),
        ("procedure", "a procedure", {"confidence": True}, "confidence"),
        ("knowledge", "a fact", {"title": "t" * 201}, "title"),
        ("procedure", "a procedure", {"steps": ["s"] * 101}, "steps"),
    ],
)
def test_bad_writes_are_refused_and_store_nothing(
    kioku: Kioku, kind: str, text: object, options: dict[str, object], field: str
) -> None:
    with pytest.raises(ValidationError) as raised:
        kioku.write_memory(kind, text, **options)  # type: ignore[arg-type]
    assert raised.value.field == field
    assert kioku.count() == 0


def test_a_title_of_the_largest_length_and_steps_of_the_largest_count_are_taken(
    kioku: Kioku,
) -> None:
    memory = kioku.write_memory("procedure", "p", title="t" * 200, steps=["s"] * 100)
    assert len(memory.trigger) == 200
    assert isinstance(memory.details, ProcedureDetails)
    assert len(memory.details.steps) == 100


# -- searching ---------------------------------------------------------------------------------


@pytest.fixture
def gondolas(kioku: Kioku) -> dict[Kind, str]:
    """A memory of each kind that speaks of gondolas, and one that does not."""
    made = {
        Kind.KNOWLEDGE: kioku.write_memory("knowledge", "Gondola lifts close in strong wind").id,
        Kind.PROCEDURE: kioku.write_memory(
            "procedure", "", title="book", description="book a gondola ride", steps=["call"]
        ).id,
        Kind.EPISODE: kioku.remember(
            "We rode the gondola", "the view was great", intensity=60, category="casual"
        ).id,
        Kind.PROFILE: profile(kioku, "Gondola Gianni").id,
    }
    kioku.write_memory("knowledge", "The cafeteria opens at eight")
    return made


def test_search_finds_every_kind_and_filters_by_kind(
    kioku: Kioku, gondolas: dict[Kind, str]
) -> None:
    everything = kioku.search_memory("gondola")
    assert {f.memory.id for f in everything.items} == set(gondolas.values())
    assert everything.kinds == ("episode", "knowledge", "procedure", "profile")
    assert everything.include_archive
    assert everything.query == "gondola"
    scores = [f.score for f in everything.items]
    assert scores == sorted(scores, reverse=True)
    assert all(f.matched_in == ("text",) and f.lexical > 0 for f in everything.items)
    assert max(f.lexical for f in everything.items) == pytest.approx(1.0)

    assert found_ids(kioku, "gondola", kinds=["knowledge"]) == [gondolas[Kind.KNOWLEDGE]]
    assert found_ids(kioku, "gondola", kinds=["procedural"]) == [gondolas[Kind.PROCEDURE]]
    assert found_ids(kioku, "gondola", kinds=["profile"]) == [gondolas[Kind.PROFILE]]
    two = kioku.search_memory("gondola", kinds=["semantic", "episode", "knowledge"])
    assert two.kinds == ("knowledge", "episode")
    assert {f.memory.id for f in two.items} == {gondolas[Kind.KNOWLEDGE], gondolas[Kind.EPISODE]}
    assert {f.memory.id for f in kioku.search_memory("gondola", kinds=[]).items} == set(
        gondolas.values()
    )


def test_search_by_time_bounds(kioku: Kioku, clock: FixedClock) -> None:
    made = []
    for _ in range(4):
        made.append(kioku.write_memory("knowledge", "the gondola timetable changed"))
        clock.advance(timedelta(hours=1))
    t1 = START + timedelta(hours=1)
    t3 = START + timedelta(hours=3)
    assert set(found_ids(kioku, "gondola", since=t1)) == {m.id for m in made[1:]}
    assert set(found_ids(kioku, "gondola", until=t1)) == {made[0].id}
    assert set(found_ids(kioku, "gondola", since=t1, until=t3)) == {made[1].id, made[2].id}
    # Bounds are instants, whatever their offset.
    utc = t1.astimezone(ZoneInfo("UTC"))
    assert set(found_ids(kioku, "gondola", since=utc, until=utc + timedelta(hours=1))) == {
        made[1].id
    }
    assert found_ids(kioku, "gondola", since=t3, until=t1) == []
    assert found_ids(kioku, "gondola", since=START + timedelta(days=1)) == []


def test_a_time_window_finds_its_match_among_better_ones_outside(
    kioku: Kioku, clock: FixedClock
) -> None:
    for n in range(5):
        kioku.write_memory("knowledge", f"gondola gondola gondola timetable {n}")
        clock.advance(timedelta(hours=1))
    late = kioku.write_memory("knowledge", "one gondola among many other words in this note")
    assert found_ids(kioku, "gondola", since=clock.now(), top_k=1) == [late.id]


def test_search_leaves_the_archive_out_only_when_asked(kioku: Kioku) -> None:
    active = kioku.remember("the gondola trip", "fun", intensity=60, category="casual")
    old = kioku.remember("an older gondola trip", "fun too", intensity=60, category="casual")
    kioku.store.update(old.id, MemoryPatch(current_level=Level.ARCHIVED, archived_at=START))
    with_archive = kioku.search_memory("gondola")
    assert {f.memory.id for f in with_archive.items} == {active.id, old.id}
    assert [f.memory.archived for f in with_archive.items if f.memory.id == old.id] == [True]
    without = kioku.search_memory("gondola", include_archive=False)
    assert [f.memory.id for f in without.items] == [active.id]
    assert not without.include_archive


def test_top_k_limits_the_results(kioku: Kioku) -> None:
    for n in range(6):
        kioku.write_memory("knowledge", f"gondola note number {n}")
    assert len(kioku.search_memory("gondola", top_k=1).items) == 1
    assert len(kioku.search_memory("gondola", top_k=4).items) == 4
    assert len(kioku.search_memory("gondola", top_k=1000).items) == 6
    assert len(kioku.search_memory("gondola").items) == 6


@settings(max_examples=40, deadline=None, suppress_health_check=_FIXTURES)
@given(top_k=st.one_of(st.integers(min_value=-3, max_value=3), st.integers(998, 1003)))
def test_top_k_is_checked_at_its_bounds(kioku: Kioku, top_k: int) -> None:
    if 1 <= top_k <= 1000:
        assert kioku.search_memory("gondola", top_k=top_k).items == ()
    else:
        with pytest.raises(ValidationError) as raised:
            kioku.search_memory("gondola", top_k=top_k)
        assert raised.value.field == "top_k"
        assert "1 to 1000" in str(raised.value)


@pytest.mark.parametrize(
    ("query", "options", "field"),
    [
        ("gondola", {"top_k": True}, "top_k"),
        ("gondola", {"top_k": 2.0}, "top_k"),
        ("gondola", {"top_k": "3"}, "top_k"),
        ("", {}, "query"),
        ("   \n\t", {}, "query"),
        (None, {}, "query"),
        ("gondola", {"kinds": ["memo"]}, "kind"),
        ("gondola", {"kinds": ["knowledge", "Knowledge!"]}, "kind"),
        ("gondola", {"since": datetime(2026, 4, 1, 12, 0)}, "since"),
        ("gondola", {"until": datetime(2026, 4, 1, 12, 0)}, "until"),
    ],
)
def test_bad_searches_are_validation_errors(
    kioku: Kioku, query: object, options: dict[str, object], field: str
) -> None:
    kioku.write_memory("knowledge", "gondola")
    with pytest.raises(ValidationError) as raised:
        kioku.search_memory(query, **options)  # type: ignore[arg-type]
    assert raised.value.field == field


# -- explaining, protecting, erasing -------------------------------------------------------------


def test_each_kind_is_explained(kioku: Kioku, gondolas: dict[Kind, str]) -> None:
    knowledge = kind_explanation(kioku.get(gondolas[Kind.KNOWLEDGE]))
    assert knowledge["kind"] == "knowledge"
    assert "spreading activation" in knowledge["lifecycle"]
    assert knowledge["facts"]["confidence"] == pytest.approx(0.7)
    assert knowledge["facts"]["version"] == 1
    assert knowledge["facts"]["valid from"].startswith("2026-04-01T12:00:00")

    procedure = kind_explanation(kioku.get(gondolas[Kind.PROCEDURE]))
    assert "successes / max(1, successes + failures)" in procedure["lifecycle"]
    assert procedure["facts"] == {
        "confidence": 0.5,
        "successes": 0,
        "failures": 0,
        "version": 1,
        "auto distilled": False,
        "steps": 1,
    }
    person = kind_explanation(kioku.get(gondolas[Kind.PROFILE]))
    assert "profile" in person["lifecycle"]
    assert person["facts"]["facts"] == {"residence": "Osaka (from 1 episode(s))"}
    assert person["facts"]["preferences"] == ["likes sushi ×2"]
    assert person["facts"]["mentions"] == {"alice": 2}

    episode = kind_explanation(kioku.get(gondolas[Kind.EPISODE]))
    assert episode["kind"] == "episode"
    assert "retention" in episode["lifecycle"]
    assert episode["facts"] == {}


@pytest.mark.parametrize("kind", list(Kind), ids=lambda k: k.value)
def test_protect_and_unprotect_work_on_every_kind(
    kioku: Kioku, gondolas: dict[Kind, str], kind: Kind
) -> None:
    memory_id = gondolas[kind]
    protected = kioku.protect(memory_id)
    assert protected.protected
    assert protected.kind is kind
    assert [m.id for m in kioku.list(protected=True)] == [memory_id]
    assert kioku.get(memory_id).details == protected.details
    unprotected = kioku.unprotect(memory_id)
    assert not unprotected.protected
    assert kioku.list(protected=True) == []


@pytest.mark.parametrize("kind", list(Kind), ids=lambda k: k.value)
def test_forget_erases_every_kind(kioku: Kioku, gondolas: dict[Kind, str], kind: Kind) -> None:
    memory_id = gondolas[kind]
    listed = {m.id for m in kioku.list(kind=kind.value)}
    assert memory_id in listed
    kioku.protect(memory_id)
    with pytest.raises(ProtectedMemoryError):
        kioku.forget(memory_id)
    assert memory_id in found_ids(kioku, "gondola")
    erased = kioku.forget(memory_id, force=True)
    assert erased.id == memory_id
    assert erased.kind is kind
    with pytest.raises(MemoryNotFoundError):
        kioku.get(memory_id)
    with pytest.raises(MemoryNotFoundError):
        kioku.read_memory(memory_id)
    remaining = set(found_ids(kioku, "gondola"))
    assert remaining == set(gondolas.values()) - {memory_id}
    assert {m.id for m in kioku.list(kind=kind.value)} == listed - {memory_id}


# -- knowledge history and procedure outcomes ----------------------------------------------------


def test_superseded_knowledge_is_kept_as_history(kioku: Kioku, clock: FixedClock) -> None:
    old = kioku.write_memory("knowledge", "The gondola runs until 17:00", confidence=0.8)
    clock.advance(timedelta(days=3))
    new = kioku.write_memory("knowledge", "The gondola runs until 18:00")
    clock.advance(timedelta(hours=2))
    kioku.supersede(old.id, new.id)
    moment = clock.now()

    old_now = kioku.get(old.id)
    new_now = kioku.get(new.id)
    assert old_now.details == KnowledgeDetails(
        confidence=0.8, superseded_by=new.id, valid_from=START, valid_until=moment
    )
    assert new_now.details == KnowledgeDetails(
        supersedes=old.id, version=2, valid_from=moment, valid_until=None
    )
    assert (old_now.content, new_now.content) == (old.content, new.content)
    assert {m.id for m in kioku.list(kind="knowledge")} == {old.id, new.id}
    explained = kind_explanation(old_now)
    assert explained["lifecycle"].startswith(f"superseded by {new.id}")
    assert explained["facts"]["valid until"] is not None

    results = {f.memory.id: f for f in kioku.search_memory("gondola runs").items}
    assert results.keys() == {old.id, new.id}
    assert results[old.id].superseded
    assert not results[new.id].superseded

    clock.advance(timedelta(days=1))
    newest = kioku.write_memory("knowledge", "The gondola runs until 19:00")
    kioku.supersede(new.id, newest.id)
    newest_details = kioku.get(newest.id).details
    assert isinstance(newest_details, KnowledgeDetails)
    assert (newest_details.version, newest_details.supersedes) == (3, new.id)
    assert kioku.get(new.id).details.superseded_by == newest.id  # type: ignore[union-attr]


def test_supersede_takes_knowledge_of_the_caller_only(kioku: Kioku, home: Path) -> None:
    a = kioku.write_memory("knowledge", "fact a")
    b = kioku.write_memory("knowledge", "fact b")
    procedure = kioku.write_memory("procedure", "do a thing")
    with pytest.raises(ValidationError):
        kioku.supersede(a.id, procedure.id)
    with pytest.raises(MemoryNotFoundError):
        kioku.supersede(a.id, "mem_20990101_000000_deadbeef")
    with Kioku.open(home, env={}, user_id="bob") as bob, pytest.raises(MemoryNotFoundError):
        bob.supersede(a.id, b.id)
    assert kioku.get(a.id) == a
    assert kioku.get(b.id) == b


_outcomes = itertools.count()


@settings(max_examples=30, deadline=None, suppress_health_check=_FIXTURES)
@given(
    outcomes=st.lists(st.booleans(), max_size=12),
    initial=st.none() | st.floats(min_value=0.0, max_value=1.0),
)
def test_procedure_confidence_is_successes_over_outcomes(
    kioku: Kioku, outcomes: list[bool], initial: float | None
) -> None:
    procedure = kioku.write_memory("procedure", f"procedure {next(_outcomes)}", confidence=initial)
    start = 0.5 if initial is None else initial
    assert isinstance(procedure.details, ProcedureDetails)
    assert procedure.details.confidence == start
    successes = failures = 0
    for success in outcomes:
        reported = kioku.report_procedure_outcome(procedure.id, success)
        successes += success
        failures += not success
        details = reported.details
        assert isinstance(details, ProcedureDetails)
        assert (details.success_count, details.failure_count) == (successes, failures)
        assert details.confidence == successes / max(1, successes + failures)
    stored = kioku.get(procedure.id).details
    assert isinstance(stored, ProcedureDetails)
    assert stored.confidence == (successes / (successes + failures) if outcomes else start)
    assert (stored.success_count, stored.failure_count) == (successes, failures)
    assert stored.steps == procedure.details.steps


def test_outcomes_are_for_procedures_of_the_caller(kioku: Kioku, home: Path) -> None:
    knowledge = kioku.write_memory("knowledge", "a fact")
    procedure = kioku.write_memory("procedure", "a procedure")
    with pytest.raises(ValidationError):
        kioku.report_procedure_outcome(knowledge.id, True)
    with pytest.raises(MemoryNotFoundError):
        kioku.report_procedure_outcome("mem_20990101_000000_deadbeef", True)
    with Kioku.open(home, env={}, user_id="bob") as bob, pytest.raises(MemoryNotFoundError):
        bob.report_procedure_outcome(procedure.id, False)
    assert kioku.get(procedure.id) == procedure
    assert kioku.get(knowledge.id) == knowledge


# -- the nightly batch and cold storage ----------------------------------------------------------


def test_the_batch_leaves_other_kinds_alone_and_compresses_episodes(
    kioku: Kioku, clock: FixedClock
) -> None:
    others = [
        kioku.write_memory("knowledge", "The gondola closes in wind"),
        kioku.write_memory("procedure", "book a gondola", steps=["call", "pay"]),
        profile(kioku),  # intensity 5, casual: as an episode it would be archived at once
        kioku.remember(
            Memory(
                id="",
                created=START,
                trigger="a fading fact",
                content="something small",
                emotional_intensity=3,
                emotional_valence=Valence.NEUTRAL,
                emotional_arousal=10,
                category="casual",
                decay_coefficient=0.5,
                retention_score=3.0,
                kind=Kind.KNOWLEDGE,
                details=KnowledgeDetails(confidence=0.2),
            )
        ),
    ]
    episode = fading_episode(kioku)
    before = {m.id: kioku.get(m.id) for m in others}
    for _ in range(6):
        clock.advance(timedelta(days=1))
        assert kioku.batch().status == "done"
    for memory_id, memory in before.items():
        after = kioku.get(memory_id)
        assert after == memory
        assert after.updated_at == memory.updated_at
        assert after.current_level == Level.FULL
        assert kioku.lifecycle_log(memory_id=memory_id) == []
    compressed = kioku.get(episode.id)
    assert compressed.current_level > Level.FULL
    assert MARKER not in compressed.trigger + compressed.content
    assert kioku.lifecycle_log(memory_id=episode.id, events=["compress"])


def test_an_episode_is_found_by_the_words_compression_took_out(
    kioku: Kioku, clock: FixedClock
) -> None:
    episode = fading_episode(kioku)
    other = fading_episode(kioku, "We painted the fence", "It took all day. The paint was blue.")
    assert found_ids(kioku, MARKER) == [episode.id]
    assert kioku.store.originals([episode.id]) == {}
    clock.advance(timedelta(days=1))
    kioku.batch()
    summary = kioku.get(episode.id)
    assert summary.current_level == Level.SUMMARY
    assert MARKER not in summary.trigger + summary.content
    assert MARKER not in " ".join(summary.keywords)

    (found,) = kioku.search_memory(MARKER).items
    assert found.memory.id == episode.id
    assert found.matched_in == ("original",)
    assert found.lexical == pytest.approx(1.0)
    assert found_ids(kioku, MARKER, kinds=["knowledge", "procedure"]) == []
    assert found_ids(kioku, MARKER, kinds=["episode"]) == [episode.id]

    original = Original(episode.id, TRIGGER, CONTENT)
    assert kioku.store.originals([episode.id, other.id])[episode.id] == original
    assert kioku.read_memory(episode.id).original == original

    # Later compression keeps the first original: the text as it was first written.
    clock.advance(timedelta(days=6))
    kioku.batch()
    assert kioku.get(episode.id).current_level >= Level.TRACE
    assert kioku.read_memory(episode.id).original == original
    assert found_ids(kioku, MARKER) == [episode.id]

    kioku.forget(episode.id)
    assert found_ids(kioku, MARKER) == []
    assert kioku.store.originals([episode.id]) == {}


def test_without_keep_originals_the_words_are_gone(home: Path, clock: FixedClock) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[compression]\nkeep_originals = false\n")
    with Kioku.open(home, env={}, clock=clock) as kioku:
        assert kioku.config.compression.keep_originals is False
        episode = fading_episode(kioku)
        assert found_ids(kioku, MARKER) == [episode.id]
        clock.advance(timedelta(days=1))
        kioku.batch()
        assert kioku.get(episode.id).current_level == Level.SUMMARY
        assert kioku.store.originals([episode.id]) == {}
        assert found_ids(kioku, MARKER) == []
        assert kioku.read_memory(episode.id).original is None


# -- reading on purpose ------------------------------------------------------------------------


def test_reading_an_active_episode_recalls_it(kioku: Kioku) -> None:
    episode = fading_episode(kioku)
    unmarked = kioku.read_memory(episode.id, mark=False)
    assert unmarked.memory == episode
    assert unmarked.original is None
    assert not kioku.get(episode.id).recalled_since_last_batch
    read = kioku.read_memory(episode.id)
    assert read.memory.id == episode.id
    after = kioku.get(episode.id)
    assert after.recalled_since_last_batch
    assert not after.revival_requested


def test_reading_an_archived_episode_asks_for_its_revival(kioku: Kioku, clock: FixedClock) -> None:
    episode = fading_episode(kioku)
    kioku.store.update(episode.id, MemoryPatch(current_level=Level.ARCHIVED, archived_at=START))
    clock.advance(timedelta(hours=1))
    kioku.read_memory(episode.id, mark=False)
    assert not kioku.get(episode.id).revival_requested
    read = kioku.read_memory(episode.id)
    assert read.memory.archived
    asked = kioku.get(episode.id)
    assert asked.revival_requested
    assert asked.revival_requested_at == START + timedelta(hours=1)
    assert not asked.recalled_since_last_batch
    clock.advance(timedelta(hours=1))
    kioku.read_memory(episode.id)  # already asked: the first request's time stays
    assert kioku.get(episode.id).revival_requested_at == START + timedelta(hours=1)


def test_reading_other_kinds_counts_as_use_and_changes_no_text(
    kioku: Kioku, gondolas: dict[Kind, str], clock: FixedClock
) -> None:
    """Reading on purpose is an access (spec 001 能動的忘却: what is used is not forgotten);
    ``mark=False`` (``kioku show``) leaves no trace."""
    for kind in (Kind.KNOWLEDGE, Kind.PROCEDURE, Kind.PROFILE):
        before = kioku.get(gondolas[kind])
        kioku.read_memory(before.id, mark=False)
        assert kioku.get(before.id).last_access is None
        read = kioku.read_memory(before.id)
        assert read.memory == before
        assert read.original is None
        after = kioku.get(before.id)
        assert (after.trigger, after.content, after.details) == (
            before.trigger,
            before.content,
            before.details,
        )
        assert after.recalled_since_last_batch
        assert after.last_access == clock.now()


def test_reading_an_unknown_id_is_not_found(kioku: Kioku) -> None:
    kioku.write_memory("knowledge", "a fact")
    for bad in ("mem_20990101_000000_deadbeef", "", 42):
        with pytest.raises(MemoryNotFoundError):
            kioku.read_memory(bad)  # type: ignore[arg-type]


# -- scope ---------------------------------------------------------------------------------------


def test_another_user_never_finds_or_reads_them(
    kioku: Kioku, home: Path, clock: FixedClock, gondolas: dict[Kind, str]
) -> None:
    episode = fading_episode(kioku)
    clock.advance(timedelta(days=1))
    kioku.batch()
    assert kioku.store.originals([episode.id])  # its original is kept
    with Kioku.open(home, env={}, clock=clock, user_id="bob") as bob:
        assert bob.search_memory("gondola").items == ()
        assert bob.search_memory(MARKER).items == ()
        assert bob.search_memory("gondola", kinds=["knowledge"], top_k=1000).items == ()
        for memory_id in [*gondolas.values(), episode.id]:
            with pytest.raises(MemoryNotFoundError):
                bob.read_memory(memory_id)
            with pytest.raises(MemoryNotFoundError):
                bob.get(memory_id)
        own = bob.write_memory("knowledge", "bob's gondola note")
        assert found_ids(bob, "gondola") == [own.id]
    assert own.id not in found_ids(kioku, "gondola")
    with pytest.raises(MemoryNotFoundError):
        kioku.read_memory(own.id)
    # Nothing bob did recalled alice's memories.
    assert not kioku.get(episode.id).recalled_since_last_batch
    assert found_ids(kioku, MARKER) == [episode.id]


def test_another_agent_of_the_same_user_is_another_scope(kioku: Kioku, home: Path) -> None:
    mine = kioku.write_memory("knowledge", "the gondola code is 1234")
    with Kioku.open(home, env={}, agent_id="helper") as helper:
        assert helper.search_memory("gondola").items == ()
        with pytest.raises(MemoryNotFoundError):
            helper.read_memory(mine.id)
    assert kioku.get(mine.id) == mine


def test_an_episode_written_on_purpose_can_be_protected(kioku: Kioku) -> None:
    episode = kioku.write_memory("episode", "We signed the lease", title="lease", protected=True)
    assert episode.protected
    assert kioku.get(episode.id).protected
    plain = kioku.write_memory("episode", "We had tea", title="tea")
    assert not plain.protected
