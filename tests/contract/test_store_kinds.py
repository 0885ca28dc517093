"""The Store contract for memory kinds, cold storage of originals and the activity log.

Every kind (episode, knowledge, procedure, profile) is a memory row with its details; the
kind filters of list/count/iter and of both searches accept the old names (episodic,
semantic, procedural). Originals are kept once, searched only in scope, and go with their
memory; activity events are filtered, limited to the newest, deleted per user and redacted
when a memory they quote is erased. The last tests read the raw bytes of the store's files.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.text.lexical import index_terms
from kioku.core.kinds import (
    Details,
    KnowledgeDetails,
    Preference,
    ProcedureDetails,
    ProfileDetails,
    ProfileFact,
)
from kioku.core.model import Embedding, Kind, Memory
from kioku.errors import ValidationError
from kioku.ports.store import (
    ActivityQuery,
    ActivityRow,
    MemoryFilter,
    MemoryPatch,
    Original,
    Store,
)
from tests.contract.conftest import BASE_TIME, TOKYO, MakeMemory, archived, build_memory
from tests.postgres_server import data_directory

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
MODEL = "test:kinds"
_FIXTURES = [HealthCheck.function_scoped_fixture]
#: Ids for memories made inside hypothesis examples, which share one store per test.
_ids = itertools.count(50_000)

KNOWLEDGE = KnowledgeDetails(
    confidence=0.9,
    source_episodes=("mem_20250101_000000_aaaaaaaa", "mem_20250102_000000_bbbbbbbb"),
    auto_consolidated=True,
    version=3,
    supersedes="mem_20240101_000000_cccccccc",
    superseded_by=None,
    valid_from=datetime(2025, 1, 10, 9, 0, 0, tzinfo=TOKYO),
    valid_until=datetime(2025, 2, 1, 0, 0, 0, tzinfo=UTC),
)
PROCEDURE = ProcedureDetails(
    description="[deploy] release the web app",
    steps=("run the tests", "tag the release", "push the tag 🚀"),
    confidence=0.75,
    success_count=3,
    failure_count=1,
    version=2,
    auto_distilled=True,
    source_episodes=("mem_20250101_000000_aaaaaaaa",),
)
PROFILE = ProfileDetails(
    person="田中さん",
    aliases=("Tanaka", "たなか"),
    preferences=(
        Preference(
            topic="food",
            value="寿司",
            polarity=1,
            count=4,
            sources=("mem_a", "mem_b"),
            last_said=datetime(2025, 1, 12, 20, 0, 0, tzinfo=TOKYO),
        ),
        Preference(topic="weather", value="rain", polarity=-1),
    ),
    facts=(
        ProfileFact(
            key="residence",
            value="Osaka",
            sources=("mem_c",),
            confidence=0.8,
            first_said=datetime(2024, 12, 1, 10, 0, 0, tzinfo=TOKYO),
            last_said=datetime(2025, 1, 2, 10, 0, 0, tzinfo=TOKYO),
        ),
    ),
    mentions=(("alice", 3), ("bob", 1)),
)
DETAILS: dict[Kind, Details | None] = {
    Kind.EPISODE: None,
    Kind.KNOWLEDGE: KNOWLEDGE,
    Kind.PROCEDURE: PROCEDURE,
    Kind.PROFILE: PROFILE,
}
OLD_NAMES = {"episodic": Kind.EPISODE, "semantic": Kind.KNOWLEDGE, "procedural": Kind.PROCEDURE}


def of_kind(make_memory: MakeMemory, kind: Kind, **fields: object) -> Memory:
    """A memory of ``kind`` with its kind's details (unless ``details`` is given)."""
    fields.setdefault("details", DETAILS[kind])
    return make_memory(kind=kind, **fields)


def ids(memories: list[Memory]) -> set[str]:
    return {m.id for m in memories}


def lexical(store: Store, query: str, flt: MemoryFilter, limit: int = 10) -> list[str]:
    terms = index_terms(query)
    assert terms, query
    return [i for i, _ in store.search_lexical(terms, flt, limit)]


def in_originals(store: Store, query: str, flt: MemoryFilter, limit: int = 10) -> list[str]:
    terms = index_terms(query)
    assert terms, query
    return [i for i, _ in store.search_originals(terms, flt, limit)]


def nearest(
    store: Store, query: tuple[float, ...], flt: MemoryFilter, limit: int = 10
) -> list[str]:
    return [i for i, _ in store.vector_search(MODEL, query, flt, limit)]


# -- round trips -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(Kind), ids=lambda k: k.value)
def test_each_kind_round_trips_with_its_details(
    store: Store, make_memory: MakeMemory, kind: Kind
) -> None:
    memory = of_kind(make_memory, kind)
    store.add(memory)
    got = store.get(memory.id)
    assert got == memory
    assert got is not None
    assert got.kind is kind
    assert got.details == DETAILS[kind]
    assert type(got.details) is type(DETAILS[kind])


@pytest.mark.parametrize("kind", list(Kind), ids=lambda k: k.value)
def test_each_kind_round_trips_without_details(
    store: Store, make_memory: MakeMemory, kind: Kind
) -> None:
    memory = of_kind(make_memory, kind, details=None)
    store.add(memory)
    got = store.get(memory.id)
    assert got == memory
    assert got is not None
    assert got.kind is kind
    assert got.details is None


def test_details_keep_their_instants_and_offsets(store: Store, make_memory: MakeMemory) -> None:
    memory = of_kind(make_memory, Kind.KNOWLEDGE)
    store.add(memory)
    got = store.get(memory.id)
    assert got is not None
    assert isinstance(got.details, KnowledgeDetails)
    assert got.details.valid_from == KNOWLEDGE.valid_from
    assert got.details.valid_until == KNOWLEDGE.valid_until
    assert got.details.superseded is False
    listed = store.get_many([memory.id])
    assert [m.details for m in listed] == [KNOWLEDGE]


def test_the_old_kind_names_are_the_new_kinds(store: Store, make_memory: MakeMemory) -> None:
    for old, new in OLD_NAMES.items():
        memory = of_kind(make_memory, Kind(old))
        store.add(memory)
        got = store.get(memory.id)
        assert got is not None
        assert got.kind is new
        assert got.kind.value == new.value


_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=40,
)
_TEXTS = st.lists(_TEXT, max_size=4).map(tuple)
_UNIT = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
_COUNT = st.integers(min_value=0, max_value=2**31)
_MOMENT = st.none() | st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from([UTC, TOKYO, timezone(timedelta(hours=-5, minutes=-30))]),
).map(lambda d: d.replace(microsecond=0))

_KNOWLEDGE = st.builds(
    KnowledgeDetails,
    confidence=_UNIT,
    source_episodes=_TEXTS,
    auto_consolidated=st.booleans(),
    version=st.integers(min_value=1, max_value=2**31),
    supersedes=st.none() | _TEXT,
    superseded_by=st.none() | _TEXT,
    valid_from=_MOMENT,
    valid_until=_MOMENT,
)
_PROCEDURE = st.builds(
    ProcedureDetails,
    description=_TEXT,
    steps=_TEXTS,
    confidence=_UNIT,
    success_count=_COUNT,
    failure_count=_COUNT,
    version=st.integers(min_value=1, max_value=2**31),
    auto_distilled=st.booleans(),
    source_episodes=_TEXTS,
)
_PROFILE = st.builds(
    ProfileDetails,
    person=_TEXT,
    aliases=_TEXTS,
    preferences=st.lists(
        st.builds(
            Preference,
            topic=_TEXT,
            value=_TEXT,
            polarity=st.sampled_from([1, -1]),
            count=st.integers(min_value=1, max_value=10_000),
            sources=_TEXTS,
            last_said=_MOMENT,
        ),
        max_size=3,
    ).map(tuple),
    facts=st.lists(
        st.builds(
            ProfileFact,
            key=_TEXT,
            value=_TEXT,
            sources=_TEXTS,
            confidence=_UNIT,
            first_said=_MOMENT,
            last_said=_MOMENT,
        ),
        max_size=3,
    ).map(tuple),
    # Stored as an object of speaker: count, so speakers are unique and read back sorted.
    mentions=st.dictionaries(_TEXT, st.integers(min_value=0, max_value=10_000), max_size=3).map(
        lambda d: tuple(sorted(d.items()))
    ),
)
_ANY_DETAILS = st.one_of(
    _KNOWLEDGE.map(lambda d: (Kind.KNOWLEDGE, d)),
    _PROCEDURE.map(lambda d: (Kind.PROCEDURE, d)),
    _PROFILE.map(lambda d: (Kind.PROFILE, d)),
)


@settings(max_examples=60, deadline=None, suppress_health_check=_FIXTURES)
@given(case=_ANY_DETAILS)
def test_any_details_round_trip(store: Store, case: tuple[Kind, Details]) -> None:
    kind, details = case
    memory = build_memory(next(_ids), kind=kind, details=details)
    store.add(memory)
    got = store.get(memory.id)
    assert got is not None
    assert got.details == details
    patched = replace(memory, details=None)
    assert store.update(memory.id, MemoryPatch(details=None))
    assert store.get(memory.id) == patched
    assert store.update(memory.id, MemoryPatch(details=details))
    assert store.get(memory.id) == memory


def test_an_episode_with_details_is_refused(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory(kind=Kind.EPISODE, details=KNOWLEDGE)
    with pytest.raises(ValidationError):
        store.add(memory)
    assert store.list(MemoryFilter()) == []


def test_details_of_another_kind_are_refused(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory(kind=Kind.KNOWLEDGE, details=PROCEDURE)
    with pytest.raises(ValidationError):
        store.add(memory)
    assert store.count(MemoryFilter()) == 0


# -- list, count and iter by kind ----------------------------------------------------------


@pytest.fixture
def population(store: Store, make_memory: MakeMemory) -> dict[tuple[str, Kind], Memory]:
    """Two memories of every kind for alice, one of every kind for bob, keyed
    ``(owner + index, kind)``."""
    made: dict[tuple[str, Kind], Memory] = {}
    for owner in ("alice0", "alice1", "bob0"):
        for kind in Kind:
            made[(owner, kind)] = of_kind(make_memory, kind, user_id=owner[:-1])
    store.add_many(list(made.values()))
    return made


def _expected(
    population: dict[tuple[str, Kind], Memory], kinds: set[Kind], user: str | None = None
) -> set[str]:
    return {
        m.id
        for (owner, kind), m in population.items()
        if kind in kinds and (user is None or owner.startswith(user))
    }


KIND_FILTERS: list[tuple[str, MemoryFilter, set[Kind]]] = [
    ("kind episode", MemoryFilter(kind="episode"), {Kind.EPISODE}),
    ("kind knowledge", MemoryFilter(kind=Kind.KNOWLEDGE), {Kind.KNOWLEDGE}),
    ("kind procedure", MemoryFilter(kind="procedure"), {Kind.PROCEDURE}),
    ("kind profile", MemoryFilter(kind="profile"), {Kind.PROFILE}),
    ("old episodic", MemoryFilter(kind="episodic"), {Kind.EPISODE}),
    ("old semantic", MemoryFilter(kind="semantic"), {Kind.KNOWLEDGE}),
    ("old procedural", MemoryFilter(kind="procedural"), {Kind.PROCEDURE}),
    ("kinds two", MemoryFilter(kinds=("knowledge", "procedure")), {Kind.KNOWLEDGE, Kind.PROCEDURE}),
    (
        "kinds old names",
        MemoryFilter(kinds=("semantic", "episodic")),
        {Kind.KNOWLEDGE, Kind.EPISODE},
    ),
    ("kinds repeated", MemoryFilter(kinds=("profile", "profile")), {Kind.PROFILE}),
    ("kinds all", MemoryFilter(kinds=tuple(k.value for k in Kind)), set(Kind)),
    ("kinds none", MemoryFilter(kinds=()), set()),
    (
        "kind and kinds",
        MemoryFilter(kind="knowledge", kinds=("semantic", "profile")),
        {Kind.KNOWLEDGE},
    ),
    ("kind outside kinds", MemoryFilter(kind="episode", kinds=("knowledge",)), set()),
]


@pytest.mark.parametrize(
    ("flt", "kinds"), [c[1:] for c in KIND_FILTERS], ids=[c[0] for c in KIND_FILTERS]
)
def test_list_count_and_iter_by_kind(
    store: Store,
    population: dict[tuple[str, Kind], Memory],
    flt: MemoryFilter,
    kinds: set[Kind],
) -> None:
    expected = _expected(population, kinds)
    listed = store.list(flt)
    assert ids(listed) == expected
    assert len(listed) == len(expected)
    assert store.count(flt) == len(expected)
    assert ids(list(store.iter(flt, batch_size=2))) == expected
    assert all(m.details == DETAILS[m.kind] for m in listed)
    scoped = replace(flt, user_id="alice")
    assert ids(store.list(scoped)) == _expected(population, kinds, "alice")
    assert store.count(scoped) == len(_expected(population, kinds, "alice"))


def test_an_unknown_kind_is_a_validation_error(
    store: Store, population: dict[tuple[str, Kind], Memory]
) -> None:
    for flt in (MemoryFilter(kind="memo"), MemoryFilter(kinds=("knowledge", "memo"))):
        with pytest.raises(ValidationError, match="kind"):
            store.list(flt)
        with pytest.raises(ValidationError, match="kind"):
            store.count(flt)


# -- updates -------------------------------------------------------------------------------


def test_details_are_updated_and_nothing_else(store: Store, make_memory: MakeMemory) -> None:
    memory = of_kind(make_memory, Kind.PROCEDURE)
    store.add(memory)
    counted = replace(PROCEDURE, success_count=4, confidence=0.8)
    assert store.update(memory.id, MemoryPatch(details=counted))
    assert store.get(memory.id) == replace(memory, details=counted)
    assert store.update(memory.id, MemoryPatch(details=None))
    assert store.get(memory.id) == replace(memory, details=None)
    # Other fields leave the details as they are.
    assert store.update(memory.id, MemoryPatch(details=counted))
    assert store.update(memory.id, MemoryPatch(protected=True, content="new notes"))
    got = store.get(memory.id)
    assert got is not None
    assert got.details == counted
    assert (got.protected, got.content) == (True, "new notes")
    assert not store.update("mem_20990101_000000_deadbeef", MemoryPatch(details=counted))


def test_a_patch_of_details_that_are_not_details_is_refused(
    store: Store, make_memory: MakeMemory
) -> None:
    memory = of_kind(make_memory, Kind.KNOWLEDGE)
    store.add(memory)
    with pytest.raises(ValidationError, match="details"):
        store.update(memory.id, MemoryPatch(details={"confidence": 0.1}))  # type: ignore[arg-type]
    assert store.get(memory.id) == memory


# -- lexical and vector search by kind --------------------------------------------------------


@pytest.fixture
def gondolas(store: Store, make_memory: MakeMemory) -> dict[Kind, Memory]:
    """One memory of each kind that says "gondola", each with a vector a little further from
    (1, 0) in the order of Kind; the same for bob, and one that says neither."""
    made: dict[Kind, Memory] = {}
    for n, kind in enumerate(Kind):
        made[kind] = of_kind(
            make_memory,
            kind,
            content=f"the gondola of kind {kind.value}",
            embedding=Embedding(MODEL, (1.0, 0.1 * n)),
        )
    others = [
        of_kind(
            make_memory,
            kind,
            user_id="bob",
            content="bob's gondola",
            embedding=Embedding(MODEL, (1.0, 0.0)),
        )
        for kind in Kind
    ]
    unrelated = of_kind(make_memory, Kind.KNOWLEDGE, content="a canal without boats")
    store.add_many([*made.values(), *others, unrelated])
    return made


SEARCH_KINDS: list[tuple[str, MemoryFilter, set[Kind]]] = [
    ("every kind", MemoryFilter(), set(Kind)),
    ("kind knowledge", MemoryFilter(kind="knowledge"), {Kind.KNOWLEDGE}),
    ("kind semantic", MemoryFilter(kind="semantic"), {Kind.KNOWLEDGE}),
    ("kind episodic", MemoryFilter(kind="episodic"), {Kind.EPISODE}),
    (
        "kinds procedural+profile",
        MemoryFilter(kinds=("procedural", "profile")),
        {Kind.PROCEDURE, Kind.PROFILE},
    ),
    ("kinds none", MemoryFilter(kinds=()), set()),
    ("kind and kinds", MemoryFilter(kind="profile", kinds=("profile", "episode")), {Kind.PROFILE}),
    ("kind outside kinds", MemoryFilter(kind="profile", kinds=("episode",)), set()),
]


@pytest.mark.parametrize(
    ("flt", "kinds"), [c[1:] for c in SEARCH_KINDS], ids=[c[0] for c in SEARCH_KINDS]
)
def test_lexical_search_honours_kinds(
    store: Store, gondolas: dict[Kind, Memory], flt: MemoryFilter, kinds: set[Kind]
) -> None:
    alice = replace(flt, user_id="default")
    assert set(lexical(store, "gondola", alice)) == {gondolas[k].id for k in kinds}
    everyone = lexical(store, "gondola", flt)
    assert len(everyone) == 2 * len(kinds)


@pytest.mark.parametrize(
    ("flt", "kinds"), [c[1:] for c in SEARCH_KINDS], ids=[c[0] for c in SEARCH_KINDS]
)
def test_vector_search_honours_kinds(
    store: Store, gondolas: dict[Kind, Memory], flt: MemoryFilter, kinds: set[Kind]
) -> None:
    alice = replace(flt, user_id="default")
    found = nearest(store, (1.0, 0.0), alice)
    # Best first: the kinds' vectors are further from (1, 0) in the order of Kind.
    assert found == [gondolas[k].id for k in Kind if k in kinds]
    if kinds:
        (best,) = nearest(store, (1.0, 0.0), alice, limit=1)
        assert best == found[0]


def test_vector_search_by_kind_with_only_that_kind_in_scope(
    store: Store, make_memory: MakeMemory
) -> None:
    items = [
        of_kind(make_memory, Kind.KNOWLEDGE, user_id="solo", embedding=Embedding(MODEL, (1.0, n)))
        for n in (0.0, 0.5, 2.0)
    ]
    store.add_many(items)
    flt = MemoryFilter(user_id="solo", kinds=("semantic",))
    assert nearest(store, (1.0, 0.0), flt, limit=2) == [items[0].id, items[1].id]
    assert nearest(store, (1.0, 0.0), replace(flt, kinds=("procedure",))) == []


def test_lexical_search_by_kind_finds_a_weak_match_among_many_better_ones(
    store: Store, make_memory: MakeMemory
) -> None:
    loud = [make_memory(content="gondola gondola gondola") for _ in range(120)]
    quiet = of_kind(
        make_memory, Kind.KNOWLEDGE, content="one gondola among many other plain words today"
    )
    store.add_many([*loud, quiet])
    assert lexical(store, "gondola", MemoryFilter(kinds=("knowledge",)), limit=1) == [quiet.id]


def test_vector_search_by_kind_finds_a_far_match_among_many_nearer_ones(
    store: Store, make_memory: MakeMemory
) -> None:
    near = [make_memory(embedding=Embedding(MODEL, (1.0, 0.01 * n))) for n in range(30)]
    far = of_kind(make_memory, Kind.KNOWLEDGE, embedding=Embedding(MODEL, (0.0, 1.0)))
    store.add_many([*near, far])
    assert nearest(store, (1.0, 0.0), MemoryFilter(kinds=("knowledge",)), limit=1) == [far.id]


# -- originals (cold storage) -----------------------------------------------------------------


def test_the_first_original_kept_wins(store: Store, make_memory: MakeMemory) -> None:
    a, b = make_memory(), make_memory()
    store.add_many([a, b])
    first = Original(a.id, "the first trigger", "the first content")
    assert store.put_originals([first], NOW) == 1
    assert store.put_originals([Original(a.id, "later", "later text")], NOW) == 0
    both = [Original(b.id, "b1", "one"), Original(b.id, "b2", "two")]
    assert store.put_originals(both, NOW) == 1
    assert store.put_originals([], NOW) == 0
    kept = store.originals([a.id, b.id, a.id, "mem_20990101_000000_deadbeef"])
    assert kept == {a.id: first, b.id: Original(b.id, "b1", "one")}
    assert store.originals([]) == {}


def test_an_original_keeps_any_text(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory()
    store.add(memory)
    text = "SQLite移行について議論した 🧠 \"quoted\" 'single' \\ back\nslash\t" + "長文" * 5000
    original = Original(memory.id, "記憶 — trigger ✓", text)
    store.put_originals([original], NOW)
    assert store.originals([memory.id]) == {memory.id: original}


def test_originals_are_found_by_their_own_words(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory(trigger="a short summary", content="we talked")
    plain = make_memory(trigger="another", content="nothing kept")
    store.add_many([memory, plain])
    store.put_originals(
        [Original(memory.id, "a long evening", "we ate at the zanzibarquux noodle bar")], NOW
    )
    assert in_originals(store, "zanzibarquux", MemoryFilter()) == [memory.id]
    assert in_originals(store, "noodle bars", MemoryFilter()) == [memory.id]
    assert lexical_misses(store, "zanzibarquux")
    assert in_originals(store, "nothing kept", MemoryFilter()) == []
    assert in_originals(store, "zanzibarquux", MemoryFilter(), limit=0) == []
    with pytest.raises(ValidationError):
        store.search_originals(["zanzibarquux"], MemoryFilter(), -1)


def lexical_misses(store: Store, query: str) -> bool:
    """The current-text index does not know the original's words."""
    return lexical(store, query, MemoryFilter()) == []


def test_originals_are_searched_in_scope_only(store: Store, make_memory: MakeMemory) -> None:
    mine = make_memory(user_id="alice", agent_id="a1")
    other_user = make_memory(user_id="bob", agent_id="a1")
    other_agent = make_memory(user_id="alice", agent_id="a2")
    store.add_many([mine, other_user, other_agent])
    store.put_originals(
        [
            Original(m.id, "evening", "the zanzibarquux bar")
            for m in (mine, other_user, other_agent)
        ],
        NOW,
    )
    assert in_originals(store, "zanzibarquux", MemoryFilter(user_id="alice", agent_id="a1")) == [
        mine.id
    ]
    assert set(in_originals(store, "zanzibarquux", MemoryFilter(user_id="alice"))) == {
        mine.id,
        other_agent.id,
    }
    assert in_originals(store, "zanzibarquux", MemoryFilter(user_id="bob")) == [other_user.id]
    assert in_originals(store, "zanzibarquux", MemoryFilter(user_id="carol")) == []


def test_originals_are_searched_by_kind_and_archive(store: Store, make_memory: MakeMemory) -> None:
    active = make_memory()
    old = archived(make_memory())
    knowledge = of_kind(make_memory, Kind.KNOWLEDGE)
    store.add_many([active, old, knowledge])
    store.put_originals(
        [Original(m.id, "evening", "the zanzibarquux bar") for m in (active, old, knowledge)], NOW
    )

    def found(flt: MemoryFilter) -> set[str]:
        return set(in_originals(store, "zanzibarquux", flt))

    assert found(MemoryFilter()) == {active.id, old.id, knowledge.id}
    assert found(MemoryFilter(kinds=("episodic",))) == {active.id, old.id}
    assert found(MemoryFilter(kind="semantic")) == {knowledge.id}
    assert found(MemoryFilter(kinds=("procedure", "profile"))) == set()
    assert found(MemoryFilter(archived=False)) == {active.id, knowledge.id}
    assert found(MemoryFilter(archived=True, kind="episode")) == {old.id}


@pytest.mark.parametrize("how", ["delete", "delete_many"])
def test_an_original_goes_with_its_memory(store: Store, make_memory: MakeMemory, how: str) -> None:
    gone, kept = make_memory(), make_memory()
    store.add_many([gone, kept])
    store.put_originals(
        [
            Original(gone.id, "evening", "the zanzibarquux bar"),
            Original(kept.id, "evening", "the zanzibarquux cafe"),
        ],
        NOW,
    )
    if how == "delete":
        assert store.delete(gone.id)
    else:
        assert store.delete_many([gone.id]) == 1
    assert store.originals([gone.id, kept.id]).keys() == {kept.id}
    assert in_originals(store, "zanzibarquux bar", MemoryFilter()) == [kept.id]
    assert in_originals(store, "bar", MemoryFilter()) == []


# -- the activity log -----------------------------------------------------------------------


def event(
    at: datetime,
    kind: str = "recall",
    *,
    user: str = "alice",
    agent: str = "a1",
    session: str | None = "s1",
    memories: tuple[str, ...] = (),
    **extra: object,
) -> ActivityRow:
    line = {"ts": at.isoformat(), "type": kind, **extra}
    return ActivityRow(
        at=at,
        type=kind,
        user_id=user,
        agent_id=agent,
        line=json.dumps(line, ensure_ascii=False),
        session_id=session,
        memory_ids=memories,
    )


def lines(store: Store, query: ActivityQuery) -> list[dict[str, object]]:
    return [json.loads(a.line) for a in store.read_activity(query)]


@pytest.fixture
def activity(store: Store) -> list[ActivityRow]:
    t = BASE_TIME
    rows = [
        event(t, "remember", n=0),
        event(t + timedelta(minutes=1), "recall", n=1),
        event(t + timedelta(minutes=2), "recall", n=2, session="s2"),
        event(t + timedelta(minutes=3), "write", n=3, agent="a2"),
        event(t + timedelta(minutes=4), "recall", n=4, user="bob"),
        event(t + timedelta(minutes=5), "remember", n=5, session=None),
    ]
    seqs = store.append_activity(rows)
    assert len(seqs) == len(rows)
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)
    return rows


ACTIVITY_QUERIES: list[tuple[str, ActivityQuery, list[int]]] = [
    ("everything", ActivityQuery(), [0, 1, 2, 3, 4, 5]),
    ("user", ActivityQuery(user_id="alice"), [0, 1, 2, 3, 5]),
    ("other user", ActivityQuery(user_id="bob"), [4]),
    ("nobody", ActivityQuery(user_id="carol"), []),
    ("agent", ActivityQuery(agent_id="a2"), [3]),
    ("user and agent", ActivityQuery(user_id="alice", agent_id="a1"), [0, 1, 2, 5]),
    ("session", ActivityQuery(session_id="s2"), [2]),
    ("types", ActivityQuery(types=("remember", "write")), [0, 3, 5]),
    ("since is inclusive", ActivityQuery(since=BASE_TIME + timedelta(minutes=4)), [4, 5]),
    ("until is exclusive", ActivityQuery(until=BASE_TIME + timedelta(minutes=2)), [0, 1]),
    (
        "window in UTC",
        ActivityQuery(
            since=(BASE_TIME + timedelta(minutes=1)).astimezone(UTC),
            until=(BASE_TIME + timedelta(minutes=3)).astimezone(UTC),
        ),
        [1, 2],
    ),
    ("newest limit", ActivityQuery(limit=2), [4, 5]),
    ("limit zero", ActivityQuery(limit=0), []),
    ("limit past the end", ActivityQuery(limit=100), [0, 1, 2, 3, 4, 5]),
    ("newest of a user", ActivityQuery(user_id="alice", types=("recall",), limit=1), [2]),
]


@pytest.mark.parametrize(
    ("query", "expected"), [c[1:] for c in ACTIVITY_QUERIES], ids=[c[0] for c in ACTIVITY_QUERIES]
)
def test_activity_is_read_by_each_filter(
    store: Store, activity: list[ActivityRow], query: ActivityQuery, expected: list[int]
) -> None:
    found = store.read_activity(query)
    assert [json.loads(a.line)["n"] for a in found] == expected
    assert [a.seq for a in found] == sorted(a.seq for a in found)
    assert all(a.line == activity[json.loads(a.line)["n"]].line for a in found)


def test_an_event_keeps_its_line_and_local_day(store: Store) -> None:
    # 00:30 in Tokyo is the previous day in UTC: the day is the event's own.
    at = datetime(2026, 1, 1, 0, 30, tzinfo=TOKYO)
    row = event(at, "write", text="記憶 ✓")
    (seq,) = store.append_activity([row])
    (stored,) = store.read_activity(ActivityQuery())
    assert (stored.seq, stored.day, stored.line) == (seq, "2026-01-01", row.line)
    assert store.append_activity([]) == []


def test_activity_is_deleted_per_user(store: Store, activity: list[ActivityRow]) -> None:
    assert store.delete_activity("alice") == 5
    assert [e["n"] for e in lines(store, ActivityQuery())] == [4]
    assert store.delete_activity("alice") == 0
    assert store.delete_activity("carol") == 0
    assert store.delete_activity("bob") == 1
    assert store.read_activity(ActivityQuery()) == []


@pytest.mark.parametrize("how", ["delete", "delete_many"])
def test_erasing_a_memory_redacts_the_events_that_quote_it(
    store: Store, make_memory: MakeMemory, how: str
) -> None:
    gone, kept = make_memory(), make_memory()
    store.add_many([gone, kept])
    text = {"content": "the zanzibarquux door code", "summary": "door code", "meta": {"q": 1}}
    store.append_activity(
        [
            event(BASE_TIME, "remember", memories=(gone.id,), session="s9", n=0, **text),
            event(BASE_TIME, "recall", memories=(gone.id, kept.id), n=1, **text),
            event(BASE_TIME, "remember", memories=(kept.id,), n=2, **text),
            event(BASE_TIME, "note", n=3, **text),
        ]
    )
    if how == "delete":
        assert store.delete(gone.id)
    else:
        assert store.delete_many([gone.id, "mem_20990101_000000_deadbeef"]) == 1
    found = lines(store, ActivityQuery())
    for redacted in found[:2]:
        assert redacted.keys() == {"ts", "type", "n", "redacted"}
        assert redacted["redacted"] is True
        assert redacted["ts"] == BASE_TIME.isoformat()
    assert [e["type"] for e in found] == ["remember", "recall", "remember", "note"]
    assert found[2] == {"ts": BASE_TIME.isoformat(), "type": "remember", "n": 2, **text}
    assert found[3] == {"ts": BASE_TIME.isoformat(), "type": "note", "n": 3, **text}
    # The redacted event keeps its columns: it is still read by its session.
    (by_session,) = lines(store, ActivityQuery(session_id="s9"))
    assert by_session["redacted"] is True
    # Erasing the other memory later redacts the event it shares, and only those.
    assert store.delete_many([kept.id]) == 1
    after = lines(store, ActivityQuery())
    assert [e.get("redacted", False) for e in after] == [True, True, True, False]
    assert "content" not in after[1]


def test_a_line_that_is_not_an_object_is_redacted_whole(
    store: Store, make_memory: MakeMemory
) -> None:
    memory = make_memory()
    store.add(memory)
    store.append_activity(
        [
            ActivityRow(
                at=BASE_TIME,
                type="raw",
                user_id="u",
                agent_id="a",
                line='["the zanzibarquux door code"]',
                memory_ids=(memory.id,),
            )
        ]
    )
    store.delete_many([memory.id])
    assert lines(store, ActivityQuery()) == [{"redacted": True}]


# -- erased text leaves the store's files --------------------------------------------------------


def _scan(directory: Path, words: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(file, word)`` for each word whose UTF-8 bytes occur in a file under ``directory``."""
    found: list[tuple[str, str]] = []
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found += [(path.name, w) for w in words if w.encode("utf-8") in data]
    return found


def test_erased_knowledge_and_originals_leave_no_bytes(
    store: Store, make_memory: MakeMemory, tmp_path: Path
) -> None:
    directory = tmp_path / "kioku"
    if not directory.is_dir():  # PostgreSQL: every file of the server
        directory = data_directory()
    secret_fact, secret_original = "xylophoniumfact", "quibblefluxorig"
    secrets_, control = (secret_fact, secret_original, "ひみつの合言葉"), "pelicanmarmalade"
    knowledge = of_kind(
        make_memory,
        Kind.KNOWLEDGE,
        trigger=f"the {secret_fact} rule",
        content=f"remember {secret_fact}, and ひみつの合言葉",
        keywords=(secret_fact,),
        embedding=Embedding(MODEL, (1.0, 0.0)),
    )
    episode = make_memory(
        trigger="a short summary", content="we talked", embedding=Embedding(MODEL, (0.0, 1.0))
    )
    stays = of_kind(
        make_memory, Kind.KNOWLEDGE, content=f"the {control} recipe", keywords=(control,)
    )
    store.add_many([knowledge, episode, stays])
    store.put_originals(
        [Original(episode.id, "a long evening", f"the {secret_original} noodle bar")], NOW
    )
    store.append_activity(
        [event(NOW, "write", memories=(knowledge.id, episode.id), content=secret_fact)]
    )
    assert nearest(store, (1.0, 0.0), MemoryFilter())  # the vector files exist
    assert in_originals(store, secret_original, MemoryFilter()) == [episode.id]
    assert {w for _, w in _scan(directory, (*secrets_, control))} == {*secrets_, control}

    assert store.delete_many([knowledge.id, episode.id]) == 2
    store.scrub()

    assert _scan(directory, secrets_) == []
    assert {w for _, w in _scan(directory, (control,))} == {control}
    assert lexical(store, secret_fact, MemoryFilter()) == []
    assert in_originals(store, secret_original, MemoryFilter()) == []
    assert lexical(store, control, MemoryFilter()) == [stays.id]
    store.close()
    assert _scan(directory, secrets_) == []


# -- the migration from schema version 7 --------------------------------------------------------


def test_a_version_7_store_opens_with_the_new_kind_names(tmp_path: Path) -> None:
    from kioku.adapters.store.sqlite import open_sqlite_store, search
    from kioku.adapters.store.sqlite.codec import MEMORY_COLUMNS, encode_memory
    from kioku.adapters.store.sqlite.connection import connect
    from kioku.adapters.store.sqlite.migrations import LATEST_VERSION, migrate

    columns = MEMORY_COLUMNS[:-1]  # version 7 has no details column
    insert = (
        f"INSERT INTO memories ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
    )
    where = columns.index("kind")
    old = {
        "episodic": build_memory(1, content="an old gondola episode"),
        "semantic": build_memory(2, content="an old gondola fact"),
        "procedural": build_memory(3, content="an old gondola procedure"),
    }
    path = tmp_path / "kioku" / "memories.db"
    path.parent.mkdir()
    conn = connect(path, 1000)
    try:
        assert migrate(conn, target=7)[-1] == 7
        conn.execute("BEGIN")
        for name, memory in old.items():
            values = list(encode_memory(memory)[:-1])
            values[where] = name
            conn.execute(insert, values)
            terms = search.terms_text(memory.trigger, memory.content, memory.keywords)
            search.put_many(conn, [(memory.id, terms)])
        conn.execute("COMMIT")
    finally:
        conn.close()
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone() == (7,)
    finally:
        raw.close()

    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION >= 8
        kinds = {store.get(m.id).kind for m in old.values()}  # type: ignore[union-attr]
        assert kinds == {Kind.EPISODE, Kind.KNOWLEDGE, Kind.PROCEDURE}
        for name, memory in old.items():
            got = store.get(memory.id)
            assert got is not None
            assert got.kind is OLD_NAMES[name]
            assert got.details is None
            assert got == replace(memory, kind=OLD_NAMES[name])
        assert ids(store.list(MemoryFilter(kind="knowledge"))) == {old["semantic"].id}
        assert ids(store.list(MemoryFilter(kind="procedural"))) == {old["procedural"].id}
        assert lexical(store, "gondola", MemoryFilter(kinds=("knowledge",))) == [old["semantic"].id]
        assert store.check_integrity().schema_version == LATEST_VERSION
        # The new tables work on the migrated file.
        assert store.put_originals([Original(old["episodic"].id, "t", "zanzibarquux")], NOW) == 1
        assert in_originals(store, "zanzibarquux", MemoryFilter()) == [old["episodic"].id]
        store.append_activity([event(NOW, memories=(old["episodic"].id,), content="x")])
        store.delete_many([old["episodic"].id])
        assert lines(store, ActivityQuery())[0]["redacted"] is True
    raw = sqlite3.connect(path)
    try:
        stored = {r[0] for r in raw.execute("SELECT kind FROM memories")}
    finally:
        raw.close()
    assert stored == {"knowledge", "procedure"}
