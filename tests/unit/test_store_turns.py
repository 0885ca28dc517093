"""``Kioku.store_turns`` stores what ``store_turn`` on each turn in order stores.

Two stores get the same prepared turns (the same memory ids and vectors): one a turn at a
time, each in its own transaction, the other in one ``store_turns`` call. Every row of every
table must then agree, once the ids the stores draw for themselves (profiles, redrawn ids)
are named by their memories and the bookkeeping of cache versions is left out; on PostgreSQL,
what the API shows of every memory must agree. The turns cover exact duplicates (of a stored
memory and of an earlier turn of the same call), a turn of an erased source, turns that teach
the speaker's profile and mention a known person, a turn asking for protection, and two
turns drawn with the same id.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.service.remember.storing import PreparedTurn
from kioku.service.remember.turns import RememberedTurn
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

_NOW = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
_START = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)
_ID = re.compile(r"mem_[0-9]{8}_[0-9]{6}_[0-9a-f]{8}")
#: Tables of how FTS5 lays its segments out (and slots hashed from ids), not what it holds.
_LAYOUT = {"memories_fts_data", "memories_fts_idx", "memories_fts_docsize"}
#: Digests keyed by each store's own random erasure key (the same erasure in both).
_KEYED = {"tombstones", "erasure_audit"}
_RANDOM_STATE = {"vectors_version", "lexical_version", "erasure_key"}


def _open(home: Path) -> Kioku:
    return Kioku.open(home, user_id="ann", clock=FixedClock(_NOW), env={})


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Kioku, Kioku]]:
    one, many = _open(tmp_path / "one"), _open(tmp_path / "many")
    yield one, many
    one.close()
    many.close()


def _db(kioku: Kioku) -> Path:
    path = getattr(kioku.store, "path", None)
    assert isinstance(path, Path)
    return path


def _rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows, sorted, with memory ids named by their memory's place."""
    conn = sqlite3.connect(db)
    order = conn.execute(
        "SELECT id FROM memories ORDER BY kind, created_utc, trigger, content, source_ids"
    ).fetchall()
    names = {str(i): f"memory-{n}" for n, (i,) in enumerate(order)}

    def named(value: object) -> object:
        if isinstance(value, str):
            return _ID.sub(lambda m: names.get(m.group(), "an-erased-memory"), value)
        return value

    tables = [str(t) for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    found = {}
    for table in tables:
        if table in _LAYOUT or table in _KEYED:
            continue
        columns = [str(c[1]) for c in conn.execute(f'PRAGMA table_info("{table}")')]
        kept = [
            c
            for c in columns
            if (table, c)
            not in {
                ("memories", "updated_at"),
                ("relations", "created_at"),
                ("schema_migrations", "applied_at"),
                ("memories_fts_content", "id"),
                ("vector_log", "seq"),
                ("vector_log", "version"),
            }
        ]
        listed = ", ".join(f'"{c}"' for c in kept)
        rows = conn.execute(f'SELECT {listed} FROM "{table}"').fetchall()
        if table == "state":
            rows = [r for r in rows if r[0] not in _RANDOM_STATE]
        found[table] = sorted((tuple(named(v) for v in r) for r in rows), key=repr)
    conn.close()
    return found


def _turn(
    kioku: Kioku, n: int, text: str, session: str | None = "s1", **given: object
) -> PreparedTurn:
    at = _START + timedelta(minutes=n)
    fields: dict[str, object] = {
        "at": at,
        "session_id": session,
        "source_ids": [f"t{n}"],
        "source_timestamps": [at],
    }
    fields.update(given)
    return kioku.prepare_turn(text, f"reply {n}", **fields)  # type: ignore[arg-type]


def _setup(kioku: Kioku) -> None:
    """What both stores hold before: a turn later repeated, and an erased one."""
    kioku.remember_turn(
        "Ann: we talked about Bob and the garden.",
        "reply 0",
        at=_START,
        session_id="s1",
        source_ids=["t0"],
        source_timestamps=[_START],
    )
    gone = kioku.remember_turn("Ann: forget this please.", "", at=_START, source_ids=["gone"])
    kioku.erase(gone.memory.id, force=True)


def _turns(kioku: Kioku) -> list[PreparedTurn]:
    twin = _turn(kioku, 7, "Ann: the same words twice.")
    same_id = _turn(kioku, 9, "Ann: my sister Carol lives in Kyoto.")
    turns = [
        _turn(kioku, 1, "Ann: I love hiking and my dog Rex."),
        # An exact duplicate of the stored turn 0 (same text, session and source).
        kioku.prepare_turn(
            "Ann: we talked about Bob and the garden.",
            "reply 0",
            at=_START,
            session_id="s1",
            source_ids=["t0"],
            source_timestamps=[_START],
        ),
        _turn(kioku, 2, "Ann: I work as a nurse in Osaka.", session="s2"),
        _turn(kioku, 3, "Ann: of an erased turn.", source_ids=["gone"]),
        _turn(kioku, 4, "Ann: I hate cold coffee. Rex barked at Bob.", session=None),
        replace(twin),
        twin,  # the same turn again in the same call
        _turn(kioku, 8, "Ann: the same words twice.", session="s3"),  # another session
        same_id,
        _turn(kioku, 10, "Ann: my favourite food is sushi.", session="s2"),
    ]
    protected = _turn(kioku, 5, "Ann: remember this, it matters a lot to me.")
    turns.insert(5, replace(protected, memory=replace(protected.memory, protected=True)))
    # Two turns drawn with one id: the later one gets another.
    clash = _turn(kioku, 6, "Ann: a turn whose id clashes.")
    turns.insert(6, replace(clash, memory=replace(clash.memory, id=same_id.memory.id)))
    return turns


def _both_ways(one: Kioku, many: Kioku) -> tuple[list[RememberedTurn], list[RememberedTurn]]:
    """The same turns stored by ``store_turn`` on each into ``one`` and by one
    ``store_turns`` into ``many`` (both set up alike); the two lists of results."""
    _setup(one)
    _setup(many)
    turns = _turns(one)
    singly = [one.store_turn(turn) for turn in turns]
    together = many.store_turns(turns)
    assert [t.known for t in together] == [t.known for t in singly]
    return singly, together


def test_store_turns_stores_what_store_turn_on_each_stores(pair: tuple[Kioku, Kioku]) -> None:
    one, many = pair
    singly, together = _both_ways(one, many)

    assert [t.known for t in together] == [
        False,
        True,
        False,
        True,
        False,
        False,
        False,
        False,
        True,
        False,
        False,
        False,
    ]
    for a, b in zip(singly, together, strict=True):
        assert (a.memory.trigger, a.memory.content, a.memory.protected) == (
            b.memory.trigger,
            b.memory.content,
            b.memory.protected,
        )
    assert len({t.memory.id for t in together if not t.known}) == 9
    assert one.count(kind=None) == many.count(kind=None)
    profile = many.list(kind="profile")
    assert profile, "the turns teach Ann's profile"
    assert _rows(_db(one)) == _rows(_db(many))


def test_a_failing_call_stores_none_of_its_turns(pair: tuple[Kioku, Kioku]) -> None:
    _, many = pair
    before = _rows(_db(many))
    turns = _turns(many)

    def store_then_fail() -> None:
        with many.store.atomic():
            many.store_turns(turns)
            raise ZeroDivisionError

    with pytest.raises(ZeroDivisionError):
        store_then_fail()
    assert _rows(_db(many)) == before
    stored = many.store_turns(turns)
    assert sum(not t.known for t in stored) == 11


def test_no_turns_store_nothing(pair: tuple[Kioku, Kioku]) -> None:
    _, many = pair
    before = _rows(_db(many))
    assert many.store_turns([]) == []
    assert _rows(_db(many)) == before


def _seen(kioku: Kioku) -> list[tuple[object, ...]]:
    """What the API shows of every memory, with ids named by their memories' order."""
    memories = sorted(
        kioku.list(kind=None, archived=None),
        key=lambda m: (m.kind, m.created, m.trigger, m.content, m.source_ids),
    )
    names = {m.id: f"memory-{n}" for n, m in enumerate(memories)}
    return [
        (
            names[m.id],
            m.kind,
            m.created,
            m.trigger,
            _ID.sub(lambda x: names.get(x.group(), "an-erased-memory"), m.content),
            m.source_ids,
            m.session_id,
            m.protected,
            m.emotional_tags,
            None if m.embedding is None else m.embedding.vector,
        )
        for m in memories
    ]


def test_store_turns_on_postgresql(postgres_url: str, tmp_path: Path) -> None:  # noqa: F811
    schemas = {name: f"st_{name}_{abs(hash(str(tmp_path))) % 10**8}" for name in ("one", "many")}
    opened = {
        name: Kioku.open(
            tmp_path / name,
            user_id="ann",
            clock=FixedClock(_NOW),
            env={"KIOKU_STORE_URL": postgres_url, "KIOKU_STORE__SCHEMA": schema},
        )
        for name, schema in schemas.items()
    }
    one, many = opened["one"], opened["many"]
    try:
        _both_ways(one, many)
        assert _seen(one) == _seen(many)
        assert len(_seen(many)) == len(_seen(one)) > 9
    finally:
        for kioku in opened.values():
            kioku.close()
        for schema in schemas.values():
            admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
