"""The Store contract for schema version 9: consolidation runs, saved versions, the resolution
registry, the mid-term tier and the activity of memories that forgetting reads.

Runs are recorded once per kind, period and scope; versions go with their memory; resolutions
are shared by every agent of one owner; mid-term entries expire at ``expires`` exactly. Erasing
a user takes all of it off the store's files (the last tests read their raw bytes), and a store
of version 8 opens with its data kept.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kioku.core.kinds import KnowledgeDetails, ProcedureDetails
from kioku.core.model import Kind, Memory
from kioku.core.usage import Usage
from kioku.errors import KiokuError, MemoryNotFoundError, ValidationError
from kioku.ports.store import (
    ActivityFields,
    ConsolidationDoneError,
    ConsolidationRun,
    MemoryFilter,
    MemoryPatch,
    MidTermEntry,
    Order,
    Resolution,
    Store,
)
from tests.contract.conftest import BASE_TIME, TOKYO, MakeMemory, archived, build_memory
from tests.postgres_server import data_directory

NOW = datetime(2026, 11, 26, 3, 0, tzinfo=TOKYO)
KNOWLEDGE = KnowledgeDetails(confidence=0.8, source_episodes=("mem_a",), version=3)
PROCEDURE = ProcedureDetails(description="[deploy] ship it", steps=("test", "tag"), version=2)


def run(
    period: str = "2026-11-26",
    kind: str = "daily",
    user: str = "u1",
    agent: str = "a1",
    at: datetime = NOW,
    **report: object,
) -> ConsolidationRun:
    return ConsolidationRun(kind, period, user, agent, at, report or {"knowledge": 1})


def resolution(item: str, at: datetime, user: str = "u1", agent: str = "a1") -> Resolution:
    return Resolution(item=item, at=at, user_id=user, agent_id=agent)


def entry(
    thread: str = "t1",
    user: str = "u1",
    agent: str = "a1",
    created: datetime = NOW,
    expires: datetime | None = None,
    **fields: object,
) -> MidTermEntry:
    values: dict[str, object] = {
        "summary": f"summary of {thread}",
        "keywords": ("deploy", "鍵"),
        "turns": ("user: hello", "assistant: こんにちは"),
        "turn_count": 2,
    }
    values.update(fields)
    return MidTermEntry(
        thread_id=thread,
        user_id=user,
        agent_id=agent,
        created=created,
        hot_until=created + timedelta(hours=24),
        expires=expires or created + timedelta(days=7),
        **values,  # type: ignore[arg-type]
    )


def threads(entries: list[MidTermEntry]) -> list[str]:
    return [e.thread_id for e in entries]


# -- the access columns of memories -------------------------------------------------------------


def test_access_times_round_trip(store: Store, make_memory: MakeMemory) -> None:
    seen, low = BASE_TIME + timedelta(days=2, seconds=1), BASE_TIME + timedelta(days=3)
    memory = make_memory(last_access=seen, low_activity_since=low)
    plain = make_memory()
    store.add_many([memory, plain])
    got = store.get(memory.id)
    assert got == memory
    assert got is not None
    assert (got.last_access, got.low_activity_since) == (seen, low)
    assert got.last_access is not None
    assert got.last_access.tzinfo is not None
    fresh = store.get(plain.id)
    assert fresh is not None
    assert (fresh.last_access, fresh.low_activity_since) == (None, None)


def test_a_naive_access_time_is_refused(store: Store, make_memory: MakeMemory) -> None:
    with pytest.raises(ValidationError):
        store.add(make_memory(last_access=datetime(2026, 1, 1)))
    memory = make_memory()
    store.add(memory)
    with pytest.raises(ValidationError):
        store.update(memory.id, MemoryPatch(low_activity_since=datetime(2026, 1, 1)))


def test_access_times_are_patched_and_cleared(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory(last_access=BASE_TIME, low_activity_since=BASE_TIME)
    store.add(memory)
    later = BASE_TIME + timedelta(hours=5)
    assert store.update(memory.id, MemoryPatch(last_access=later))
    got = store.get(memory.id)
    assert got is not None
    assert (got.last_access, got.low_activity_since) == (later, BASE_TIME)
    assert store.update(memory.id, MemoryPatch(last_access=None, low_activity_since=None))
    got = store.get(memory.id)
    assert got is not None
    assert (got.last_access, got.low_activity_since) == (None, None)


def test_mark_recalled_sets_the_last_access(store: Store, make_memory: MakeMemory) -> None:
    a, b, old = make_memory(), make_memory(), archived(make_memory())
    store.add_many([a, b, old])
    assert store.mark_recalled([a.id, old.id], at=NOW) == 1
    got_a, got_old = store.get(a.id), store.get(old.id)
    assert got_a is not None
    assert got_old is not None
    assert (got_a.recalled_since_last_batch, got_a.last_access) == (True, NOW)
    assert got_old.last_access is None
    # An earlier access reported late never moves it back.
    assert store.mark_recalled([a.id], at=NOW - timedelta(days=1)) == 1
    assert store.get(a.id).last_access == NOW  # type: ignore[union-attr]
    before = datetime.now(UTC)
    assert store.mark_recalled([b.id]) == 1
    seen = store.get(b.id).last_access  # type: ignore[union-attr]
    assert seen is not None
    assert before - timedelta(seconds=1) <= seen <= datetime.now(UTC)


# -- consolidation runs ---------------------------------------------------------------------------


def test_a_run_is_done_once_per_kind_period_and_scope(store: Store) -> None:
    assert not store.consolidation_done("daily", "2026-11-26", "u1", "a1")
    store.record_consolidation(run())
    assert store.consolidation_done("daily", "2026-11-26", "u1", "a1")
    for other in (
        ("weekly", "2026-11-26", "u1", "a1"),
        ("daily", "2026-11-27", "u1", "a1"),
        ("daily", "2026-11-26", "u2", "a1"),
        ("daily", "2026-11-26", "u1", "a2"),
    ):
        assert not store.consolidation_done(*other)
    store.record_consolidation(run(agent="a2"))
    assert store.consolidation_done("daily", "2026-11-26", "u1", "a2")


def test_a_second_record_of_a_run_is_refused(store: Store) -> None:
    first = run(knowledge=2)
    store.record_consolidation(first)
    with pytest.raises(ConsolidationDoneError) as raised:
        store.record_consolidation(run(knowledge=9))
    assert isinstance(raised.value, KiokuError)
    assert (raised.value.kind, raised.value.period) == ("daily", "2026-11-26")
    assert store.consolidation_runs("u1", "a1") == [first]


def test_a_refused_run_rolls_back_the_writes_of_its_transaction(
    store: Store, make_memory: MakeMemory
) -> None:
    store.record_consolidation(run())
    memory = make_memory()

    def write_and_record_again() -> None:
        with store.atomic():
            store.add(memory)
            store.add_resolutions([resolution("the bug", NOW)])
            store.record_consolidation(run())

    with pytest.raises(ConsolidationDoneError):
        write_and_record_again()
    assert store.get(memory.id) is None
    assert store.resolutions("u1") == []
    assert len(store.consolidation_runs("u1", "a1")) == 1


def test_runs_are_listed_newest_first_in_scope(store: Store) -> None:
    days = [run(f"2026-11-{d}", at=NOW + timedelta(days=d)) for d in (24, 26, 25)]
    week = run("2026-W48", kind="weekly", at=NOW + timedelta(days=30))
    for r in (*days, week, run(user="u2"), run(agent="a2")):
        store.record_consolidation(r)
    assert [r.period for r in store.consolidation_runs("u1", "a1")] == [
        "2026-W48",
        "2026-11-26",
        "2026-11-25",
        "2026-11-24",
    ]
    daily = store.consolidation_runs("u1", "a1", kind="daily", limit=2)
    assert [r.period for r in daily] == ["2026-11-26", "2026-11-25"]
    assert store.consolidation_runs("u1", "a1", kind="monthly") == []
    assert store.consolidation_runs("u1", "a1", limit=0) == []


def test_a_run_keeps_its_report_and_time(store: Store) -> None:
    report = {"knowledge": 3, "ids": ["mem_1", "mem_2"], "skipped": {"llm": "なし"}}
    recorded = ConsolidationRun("monthly", "2026-11", "u1", "a1", NOW, report)
    store.record_consolidation(recorded)
    (got,) = store.consolidation_runs("u1", "a1")
    assert got == recorded
    assert dict(got.report) == report
    assert got.done_at.utcoffset() == timedelta(hours=9)


@pytest.mark.parametrize(
    "bad",
    [
        ConsolidationRun("daily", "2026-11-26", "u1", "a1", NOW, {"x": object()}),
        ConsolidationRun("daily", "2026-11-26", "u1", "a1", NOW, {"x": float("nan")}),
        ConsolidationRun("", "2026-11-26", "u1", "a1", NOW, {}),
        ConsolidationRun("daily", "", "u1", "a1", NOW, {}),
        ConsolidationRun("daily", "2026-11-26", "u1", "a1", datetime(2026, 11, 26), {}),
    ],
)
def test_a_run_that_cannot_be_kept_is_refused(store: Store, bad: ConsolidationRun) -> None:
    with pytest.raises(ValidationError):
        store.record_consolidation(bad)
    assert store.consolidation_runs("u1", "a1") == []


# -- saved versions -------------------------------------------------------------------------------


def test_versions_keep_text_details_and_number(store: Store, make_memory: MakeMemory) -> None:
    knowledge = make_memory(kind=Kind.KNOWLEDGE, details=KNOWLEDGE, content="old fact")
    procedure = make_memory(kind=Kind.PROCEDURE, details=PROCEDURE)
    episode = make_memory()
    store.add_many([knowledge, procedure, episode])
    first = store.save_version(knowledge, NOW)
    newer = replace(
        knowledge, content="newer fact", details=replace(KNOWLEDGE, version=4, confidence=0.9)
    )
    second = store.save_version(newer, NOW + timedelta(hours=1))
    assert second > first
    store.save_version(procedure, NOW)
    store.save_version(episode, NOW)
    saved = store.versions(knowledge.id)
    assert [(v.version, v.content, v.details) for v in saved] == [
        (3, "old fact", KNOWLEDGE),
        (4, "newer fact", newer.details),
    ]
    assert (saved[0].memory_id, saved[0].trigger, saved[0].saved_at) == (
        knowledge.id,
        knowledge.trigger,
        NOW,
    )
    (proc,) = store.versions(procedure.id)
    assert (proc.version, proc.details) == (2, PROCEDURE)
    (ep,) = store.versions(episode.id)
    assert (ep.version, ep.details) == (1, None)
    assert store.versions("mem_20990101_000000_00000000") == []


def test_versions_are_oldest_first(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory(kind=Kind.KNOWLEDGE, details=KNOWLEDGE)
    store.add(memory)
    for hours, version in ((5, 7), (1, 5), (3, 6)):
        details = replace(KNOWLEDGE, version=version)
        store.save_version(replace(memory, details=details), NOW + timedelta(hours=hours))
    assert [v.version for v in store.versions(memory.id)] == [5, 6, 7]


def test_chosen_versions_are_deleted(store: Store, make_memory: MakeMemory) -> None:
    memory, other = (make_memory(kind=Kind.KNOWLEDGE, details=KNOWLEDGE) for _ in range(2))
    store.add_many([memory, other])
    for version in range(1, 8):
        store.save_version(replace(memory, details=replace(KNOWLEDGE, version=version)), NOW)
    store.save_version(replace(other, details=replace(KNOWLEDGE, version=1)), NOW)
    assert store.delete_versions(memory.id, [1, 2, 2, 99]) == 2
    assert [v.version for v in store.versions(memory.id)] == [3, 4, 5, 6, 7]
    assert store.delete_versions(memory.id, []) == 0
    assert [v.version for v in store.versions(other.id)] == [1]
    with pytest.raises(ValidationError):
        store.delete_versions(memory.id, ["3"])  # type: ignore[list-item]


def test_a_version_of_a_missing_memory_is_refused(store: Store, make_memory: MakeMemory) -> None:
    with pytest.raises(MemoryNotFoundError):
        store.save_version(make_memory(), NOW)
    memory = make_memory()
    store.add(memory)
    with pytest.raises(ValidationError):
        store.save_version(memory, datetime(2026, 1, 1))
    assert store.versions(memory.id) == []


@pytest.mark.parametrize("how", ["delete", "delete_many"])
def test_versions_go_with_their_memory(store: Store, make_memory: MakeMemory, how: str) -> None:
    memory, kept = make_memory(), make_memory()
    store.add_many([memory, kept])
    store.save_version(memory, NOW)
    store.save_version(kept, NOW)
    if how == "delete":
        assert store.delete(memory.id)
    else:
        assert store.delete_many([memory.id]) == 1
    assert store.versions(memory.id) == []
    assert len(store.versions(kept.id)) == 1
    store.add(memory)  # the same id again starts with no versions
    assert store.versions(memory.id) == []


# -- the resolution registry ----------------------------------------------------------------------


def test_resolutions_are_shared_by_the_agents_of_one_owner(store: Store) -> None:
    items = [
        resolution("late", NOW + timedelta(hours=2), agent="a2"),
        Resolution("first", NOW, "u1", "a1", session_id="s1", source="activity"),
        resolution("middle", NOW + timedelta(hours=1)),
        resolution("someone else's", NOW, user="u2"),
    ]
    seqs = store.add_resolutions(items)
    assert len(set(seqs)) == 4
    got = store.resolutions("u1")
    assert [r.item for r in got] == ["first", "middle", "late"]
    assert [r.agent_id for r in got] == ["a1", "a1", "a2"]
    assert got[0] == replace(items[1], seq=seqs[1])
    assert got[0].at.utcoffset() == timedelta(hours=9)
    assert [r.item for r in store.resolutions("u2")] == ["someone else's"]
    assert store.resolutions("nobody") == []


def test_resolutions_since_and_limit(store: Store) -> None:
    store.add_resolutions([resolution(f"r{h}", NOW + timedelta(hours=h)) for h in range(5)])
    since = NOW + timedelta(hours=2)
    assert [r.item for r in store.resolutions("u1", since=since)] == ["r2", "r3", "r4"]
    assert [r.item for r in store.resolutions("u1", limit=2)] == ["r3", "r4"]
    assert [r.item for r in store.resolutions("u1", since=since, limit=1)] == ["r4"]
    assert store.resolutions("u1", limit=0) == []
    assert store.add_resolutions([]) == []


def test_resolutions_are_added_all_or_none(store: Store) -> None:
    with pytest.raises(ValidationError):
        store.add_resolutions([resolution("ok", NOW), resolution("naive", datetime(2026, 1, 1))])
    assert store.resolutions("u1") == []
    with pytest.raises(ValidationError):
        store.resolutions("u1", since=datetime(2026, 1, 1))


# -- the mid-term tier ----------------------------------------------------------------------------


def test_a_midterm_entry_round_trips(store: Store) -> None:
    kept = entry(session_id="sess-1")
    store.put_midterm(kept)
    assert store.midterm("u1", "a1", NOW) == [kept]
    got = store.midterm("u1", "a1", NOW)[0]
    assert (got.turns, got.keywords, got.turn_count) == (kept.turns, kept.keywords, 2)
    assert got.created.utcoffset() == timedelta(hours=9)
    bare = entry("t2", keywords=(), turns=(), turn_count=0)
    store.put_midterm(bare)
    assert store.midterm("u1", "a1", NOW, thread_id="t2") == [bare]


def test_a_midterm_entry_is_replaced_per_thread_and_scope(store: Store) -> None:
    store.put_midterm(entry())
    store.put_midterm(entry(agent="a2"))
    store.put_midterm(entry(user="u2"))
    newer = entry(summary="the thread went on", turns=("a", "b", "c"), turn_count=3)
    store.put_midterm(newer)
    assert store.midterm("u1", "a1", NOW) == [newer]
    assert store.midterm("u1", "a2", NOW) == [entry(agent="a2")]
    assert store.midterm("u2", "a1", NOW) == [entry(user="u2")]


def test_midterm_entries_are_newest_first_and_by_thread(store: Store) -> None:
    for n, hours in ((1, 0), (2, 5), (3, 2)):
        store.put_midterm(entry(f"t{n}", created=NOW + timedelta(hours=hours)))
    assert threads(store.midterm("u1", "a1", NOW)) == ["t2", "t3", "t1"]
    assert threads(store.midterm("u1", "a1", NOW, thread_id="t3")) == ["t3"]
    assert store.midterm("u1", "a1", NOW, thread_id="nope") == []


def test_a_midterm_entry_expires_at_expires_exactly(store: Store) -> None:
    ends = NOW + timedelta(days=7)
    store.put_midterm(entry("short", expires=ends))
    store.put_midterm(entry("long", expires=ends + timedelta(days=23)))
    store.put_midterm(entry("other", user="u2", expires=ends))
    just_before = ends - timedelta(seconds=1)
    # Made at the same instant: the thread id breaks the tie, in the same direction.
    assert threads(store.midterm("u1", "a1", just_before)) == ["short", "long"]
    assert store.expire_midterm(just_before) == 0
    assert threads(store.midterm("u1", "a1", ends)) == ["long"]
    assert store.expire_midterm(ends) == 2  # one of each user
    assert threads(store.midterm("u1", "a1", NOW)) == ["long"]
    assert store.midterm("u2", "a1", NOW) == []
    assert store.expire_midterm(ends) == 0


@pytest.mark.parametrize(
    "bad",
    [
        {"turn_count": -1},
        {"turns": ("ok", 3)},
        {"keywords": "not a tuple"},
        {"created": datetime(2026, 1, 1)},
        {"thread_id": ""},
    ],
)
def test_a_midterm_entry_that_cannot_be_kept_is_refused(
    store: Store, bad: dict[str, object]
) -> None:
    with pytest.raises(ValidationError):
        store.put_midterm(replace(entry(), **bad))  # type: ignore[arg-type]
    assert store.midterm("u1", "a1", NOW - timedelta(days=3650)) == []


# -- what forgetting reads and writes -------------------------------------------------------------


def test_activity_fields_of_the_filtered_memories(store: Store, make_memory: MakeMemory) -> None:
    seen, low = NOW - timedelta(days=2), NOW - timedelta(days=40)
    knowledge = make_memory(
        kind=Kind.KNOWLEDGE,
        details=KNOWLEDGE,
        last_access=seen,
        low_activity_since=low,
        recall_count=4,
        protected=True,
    )
    episode = make_memory(recalled_since_last_batch=True)
    old = archived(make_memory(kind=Kind.PROCEDURE, details=PROCEDURE))
    elsewhere = make_memory(user_id="u2", kind=Kind.KNOWLEDGE, details=KNOWLEDGE)
    store.add_many([knowledge, episode, old, elsewhere])
    got = {f.id: f for f in store.activity_fields(MemoryFilter(user_id="default"))}
    assert set(got) == {knowledge.id, episode.id, old.id}
    assert got[knowledge.id] == ActivityFields(
        id=knowledge.id,
        kind="knowledge",
        created=knowledge.created,
        last_access=seen,
        recall_count=4,
        recalled_since_last_batch=False,
        protected=True,
        archived=False,
        low_since=low,
        details=KNOWLEDGE,
    )
    assert got[episode.id].recalled_since_last_batch is True
    assert (got[episode.id].details, got[episode.id].last_access) == (None, None)
    assert (got[old.id].archived, got[old.id].details) == (True, PROCEDURE)
    kinds = MemoryFilter(user_id="default", kinds=("knowledge", "procedure"), archived=False)
    assert [f.id for f in store.activity_fields(kinds)] == [knowledge.id]
    page = MemoryFilter(user_id="default", order=Order.CREATED_ASC, limit=2)
    assert [f.id for f in store.activity_fields(page)] == [knowledge.id, episode.id]


def test_touch_accessed_counts_what_was_flagged(store: Store, make_memory: MakeMemory) -> None:
    flagged = make_memory(kind=Kind.KNOWLEDGE, details=KNOWLEDGE, recall_count=2)
    later = make_memory(kind=Kind.PROCEDURE, details=PROCEDURE, last_access=NOW + timedelta(days=1))
    quiet = make_memory(kind=Kind.KNOWLEDGE, details=KNOWLEDGE)
    episode = make_memory()
    store.add_many([flagged, later, quiet, episode])
    store.mark_recalled([flagged.id, later.id, episode.id], at=NOW - timedelta(hours=1))
    ids = [flagged.id, later.id, quiet.id, episode.id, "mem_20990101_000000_00000000"]
    assert store.touch_accessed(ids, NOW) == 2
    got = {m.id: m for m in store.get_many(ids)}
    assert (got[flagged.id].recall_count, got[flagged.id].last_access) == (3, NOW)
    assert not got[flagged.id].recalled_since_last_batch
    assert (got[later.id].recall_count, got[later.id].last_access) == (1, NOW + timedelta(days=1))
    assert (got[quiet.id].recall_count, got[quiet.id].last_access) == (0, None)
    # Episodes are the nightly batch's to count: left flagged.
    assert got[episode.id].recalled_since_last_batch
    assert got[episode.id].recall_count == 0
    assert store.touch_accessed(ids, NOW) == 0
    assert store.touch_accessed([], NOW) == 0


def test_low_activity_is_marked_and_cleared(store: Store, make_memory: MakeMemory) -> None:
    a, b, c = make_memory(), make_memory(), make_memory()
    store.add_many([a, b, c])
    assert store.set_low_activity([a.id, b.id, "mem_20990101_000000_00000000"], NOW) == 2
    marks = {f.id: f.low_since for f in store.activity_fields(MemoryFilter())}
    assert marks == {a.id: NOW, b.id: NOW, c.id: None}
    assert store.set_low_activity([a.id], None) == 1
    got = store.get(a.id)
    assert got is not None
    assert got.low_activity_since is None
    assert store.get(b.id).low_activity_since == NOW  # type: ignore[union-attr]
    with pytest.raises(ValidationError):
        store.set_low_activity([a.id], datetime(2026, 1, 1))


def test_usage_accepts_the_purpose_of_consolidation(store: Store) -> None:
    store.record_usage(Usage("anthropic", "claude-haiku-4-5", "consolidate", 10, 2, BASE_TIME))
    (total,) = store.usage_totals()
    assert (total.purpose, total.calls) == ("consolidate", 1)


# -- erasure ---------------------------------------------------------------------------------------


def fill_user(store: Store, n: int, user: str, text: str) -> Memory:
    """Memory ``n`` of ``user`` with a version, and a resolution, a run and a mid-term entry
    of ``user``."""
    memory = build_memory(n, user_id=user, content="an ordinary day")
    store.add(memory)
    store.save_version(replace(memory, content=f"version with {text}"), NOW)
    store.add_resolutions([resolution(f"resolved {text}", NOW, user=user)])
    store.record_consolidation(run(user=user, note=[f"{user}-ids"]))
    store.put_midterm(entry(user=user, summary=f"about {text}", turns=(f"user: {text}",)))
    return memory


def test_a_users_consolidation_rows_are_deleted(store: Store) -> None:
    fill_user(store, 1, "gone", "x")
    fill_user(store, 2, "stays", "y")
    assert store.delete_consolidation("gone") == 3
    assert store.resolutions("gone") == []
    assert store.midterm("gone", "a1", NOW) == []
    assert store.consolidation_runs("gone", "a1") == []
    assert not store.consolidation_done("daily", "2026-11-26", "gone", "a1")
    assert len(store.resolutions("stays")) == 1
    assert len(store.midterm("stays", "a1", NOW)) == 1
    assert store.delete_consolidation("gone") == 0


def test_erasing_a_users_log_takes_their_consolidation_rows(store: Store) -> None:
    fill_user(store, 1, "gone", "x")
    fill_user(store, 2, "stays", "y")
    store.delete_log("gone")  # the call `kioku erase --user` makes
    assert store.resolutions("gone") == []
    assert store.midterm("gone", "a1", NOW) == []
    assert store.consolidation_runs("gone", "a1") == []
    assert len(store.consolidation_runs("stays", "a1")) == 1


def _scan(directory: Path, words: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(file, word)`` for each word whose UTF-8 bytes occur in a file under ``directory``."""
    found: list[tuple[str, str]] = []
    for path in sorted(directory.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found += [(path.name, w) for w in words if w.encode("utf-8") in data]
    return found


def test_an_erased_user_leaves_no_bytes_of_versions_resolutions_or_midterm(
    store: Store, tmp_path: Path
) -> None:
    directory = tmp_path / "kioku"
    if not directory.is_dir():  # PostgreSQL: every file of the server
        directory = data_directory()
    secret, control = "zorblaxquintet", "pelicanmarmalade"
    memory = fill_user(store, 1, "gone", secret)
    fill_user(store, 2, "stays", control)
    assert {w for _, w in _scan(directory, (secret, control))} == {secret, control}

    # What `kioku erase --user` does to the store, then the scrub that follows it.
    with store.atomic():
        assert store.delete_many([memory.id]) == 1
        store.delete_log("gone")
        store.delete_activity("gone")
    store.scrub()

    assert _scan(directory, (secret,)) == []
    assert {w for _, w in _scan(directory, (control,))} == {control}
    assert len(store.resolutions("stays")) == 1
    store.close()
    assert _scan(directory, (secret,)) == []


def test_kioku_erase_user_leaves_no_bytes_of_consolidation(tmp_path: Path) -> None:
    from kioku import Kioku

    home = tmp_path / "home"
    secret, control = "quaggaflintlock", "marzipanharbour"
    with Kioku.open(home, env={}, user_id="gil", agent_id="a1") as gil:
        memory = gil.remember("an ordinary day", "nothing much", intensity=40, category="work")
        gil.store.save_version(replace(memory, content=f"it was {secret}"), NOW)
        gil.store.add_resolutions([resolution(secret, NOW, user="gil")])
        gil.store.put_midterm(entry(user="gil", summary=secret, turns=(secret,)))
        gil.store.record_consolidation(run(user="gil"))
    with Kioku.open(home, env={}, user_id="hal") as hal:
        hal.store.put_midterm(entry(user="hal", summary=control))
        assert {w for _, w in _scan(home, (secret, control))} == {secret, control}
        plan = hal.plan_erasure("gil")
        report = hal.erase_user("gil", plan.token)
        assert report.erased == 1
        assert report.scrub is not None
        assert report.scrub.wal_truncated
        assert hal.store.resolutions("gil") == []
        assert hal.store.consolidation_runs("gil", "a1") == []
        assert _scan(home, (secret,)) == []
    assert _scan(home, (secret,)) == []
    assert {w for _, w in _scan(home, (control,))} == {control}


# -- the migration from schema version 8 ----------------------------------------------------------


def test_a_version_8_store_opens_with_its_data(tmp_path: Path) -> None:
    from kioku.adapters.store.sqlite import open_sqlite_store, search
    from kioku.adapters.store.sqlite.codec import MEMORY_COLUMNS, encode_memory
    from kioku.adapters.store.sqlite.connection import connect
    from kioku.adapters.store.sqlite.migrations import LATEST_VERSION, migrate

    insert = (
        f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}) "
        f"VALUES ({', '.join('?' for _ in MEMORY_COLUMNS)})"
    )
    episode = build_memory(1, content="an old heron episode", recall_count=2)
    knowledge = build_memory(2, kind=Kind.KNOWLEDGE, details=KNOWLEDGE, content="a heron fact")
    path = tmp_path / "kioku" / "memories.db"
    path.parent.mkdir(mode=0o700)
    conn = connect(path, 1000)
    try:
        assert migrate(conn, target=8)[-1] == 8
        conn.execute("BEGIN")
        for memory in (episode, knowledge):
            conn.execute(insert, encode_memory(memory))
            terms = search.terms_text(memory.trigger, memory.content, memory.keywords)
            search.put_many(conn, [(memory.id, terms)])
        conn.execute(
            "INSERT INTO usage (at, at_utc, provider, model, purpose, input_tokens, "
            "output_tokens) VALUES (?, ?, 'p', 'm', 'profile', 5, 1)",
            (BASE_TIME.isoformat(), BASE_TIME.timestamp()),
        )
        conn.execute("COMMIT")
    finally:
        conn.close()
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone() == (8,)
    finally:
        raw.close()

    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION >= 9
        assert isinstance(store, Store)
        assert store.get(episode.id) == episode
        assert store.get(knowledge.id) == knowledge
        assert store.get(episode.id).last_access is None  # type: ignore[union-attr]
        assert [(t.purpose, t.input_tokens) for t in store.usage_totals()] == [("profile", 5)]
        report = store.check_integrity()
        assert (report.ok, report.schema_version) == (True, LATEST_VERSION), report.problems
        # The new columns and tables work on the migrated file.
        store.record_usage(Usage("p", "m", "consolidate", 1, 1, BASE_TIME))
        assert store.mark_recalled([episode.id], at=NOW) == 1
        assert store.save_version(knowledge, NOW) > 0
        store.record_consolidation(run())
        store.add_resolutions([resolution("heron", NOW)])
        store.put_midterm(entry())
        assert store.get(episode.id).last_access == NOW  # type: ignore[union-attr]
        assert [v.version for v in store.versions(knowledge.id)] == [3]
        assert store.consolidation_done("daily", "2026-11-26", "u1", "a1")
        assert len(store.midterm("u1", "a1", NOW)) == 1
