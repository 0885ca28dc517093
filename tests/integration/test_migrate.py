"""Moving a store between SQLite and PostgreSQL (issue #17), on real stores.

A SQLite store is filled through the service (turns, knowledge, a procedure, a profile, nightly
batches, consolidation, an erasure, an API key, a backup) and through the store's own methods
for what those leave empty here (relations, versions, tombstones, usage, resolutions, the
mid-term tier), so every copied table has rows. It is migrated to a fresh PostgreSQL schema
and back to a new SQLite file; every table's canonical rows must be equal on all three, and
recall and search must answer alike.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.adapters.store.postgres.transfer import PostgresTables, open_postgres_tables
from kioku.adapters.store.sqlite.transfer import SqliteTables, open_sqlite_tables
from kioku.core.lifecycle.links import Link
from kioku.core.usage import Usage
from kioku.ports.store_records import MidTermEntry, Resolution
from kioku.ports.transfer.canonical import Row, canonical_value, row_digest
from kioku.ports.transfer.tables import table
from kioku.service.keys import create_key
from kioku.service.paths import DB_FILENAME
from kioku.service.transfer import (
    DERIVED,
    TABLES,
    MigrationConflictError,
    MigrationReport,
    TableSpec,
    copy_store,
    uncovered,
)
from kioku.service.transfer.copy import table_rows
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

TZ = ZoneInfo("Asia/Tokyo")
START = datetime(2026, 4, 1, 12, 0, tzinfo=TZ)
QUERIES = (
    "Where is the Osaka office?",
    "staging database",
    "wedding in Kyoto",
    "how do I deploy",
    "寿司",
)


def _fill(home: Path) -> datetime:
    """Fill the store of ``home``; the clock's time at the end."""
    clock = FixedClock(START)
    with Kioku.open(home, env={}, clock=clock) as k:
        turns = [
            "The Osaka office moves to Umeda in March",
            "My sister's wedding is in Kyoto on June 8",
            "We decided to ship the billing service on PostgreSQL",
            "I always deploy with the checklist: run tests, tag, push",
            "田中さんは大阪に住んでいて、寿司が好きです",
        ]
        for day, text in enumerate(turns):
            clock.advance(timedelta(days=1))
            k.remember_turn(text, "Noted.", at=clock.now(), session_id=f"s{day % 2}")
        k.remember(
            "We planned the database migration",
            "back up, migrate, verify the row counts, then switch",
            intensity=45,
            category="casual",
            valence="neutral",
            arousal=40,
        )
        knowledge = k.write_memory(
            "knowledge",
            "The staging database is db-stg-2",
            title="staging database",
            confidence=0.9,
            keywords=["staging"],
        )
        procedure = k.write_memory(
            "procedure",
            "ask in #ops first",
            title="deploy",
            description="release the web app",
            steps=["run the tests", "tag the release"],
        )
        create_key(k, "ci", k.user_id, k.agent_id)
        for _ in range(6):
            clock.advance(timedelta(days=3))
            k.batch(now=clock.now())
            k.consolidate(now=clock.now())
        victim = k.remember(
            "My bank PIN is 4321",
            "erase this",
            intensity=20,
            category="casual",
            valence="neutral",
            arousal=20,
        )
        k.erase(victim.id, force=True)
        store, now = k.store, clock.now()
        store.add_links([Link(knowledge.id, procedure.id, "references")], now)
        store.save_version(knowledge, now)
        store.add_tombstones(["mem_erased_source"], now)
        store.record_usage(Usage("openai", "gpt-x", "analyze", 120, 30, now))
        store.add_resolutions([Resolution("the billing bug", now, k.user_id, k.agent_id)])
        store.put_midterm(
            MidTermEntry(
                thread_id="t1",
                user_id=k.user_id,
                agent_id=k.agent_id,
                created=now,
                hot_until=now + timedelta(hours=2),
                expires=now + timedelta(days=7),
                summary="planning the move",
                keywords=("move", "Umeda"),
                turns=("we move", "in March"),
                turn_count=2,
                session_id="s0",
            )
        )
        store.backup(home / "backup.db")
        return clock.now()


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, datetime]:
    home = tmp_path_factory.mktemp("source") / "home"
    return home, _fill(home)


@pytest.fixture
def schema(postgres_url: str, tmp_path: Path) -> Iterator[str]:  # noqa: F811
    name = "mig_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    try:
        yield name
    finally:
        admin(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _sqlite(path: Path) -> SqliteTables:
    return open_sqlite_tables(path)


def _migrate(
    source: SqliteTables | PostgresTables, target: SqliteTables | PostgresTables, **kw: object
) -> MigrationReport:
    try:
        return copy_store(source, target, **kw)  # type: ignore[arg-type]
    finally:
        source.close()
        target.close()


def _rows(access: SqliteTables | PostgresTables, spec: TableSpec) -> list[Row]:
    return sorted((r for rows in table_rows(access, spec, 100) for r in rows), key=repr)


def _copy_db(filled: tuple[Path, datetime], tmp_path: Path) -> Path:
    """A private copy of the filled store (tests that write must not change the module's)."""
    target = tmp_path / "copy.db"
    with sqlite3.connect(filled[0] / DB_FILENAME) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    return target


# -- what is copied ------------------------------------------------------------------------


def test_every_table_of_both_schemas_is_copied_or_derived(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    schema: str,
) -> None:
    lite = _sqlite(filled[0] / DB_FILENAME)
    pg = open_postgres_tables(postgres_url, schema)
    try:
        for access in (lite, pg):
            names = access.table_names()
            assert uncovered(access.backend, names) == set(), access.backend
            assert {s.name for s in TABLES} <= names
        # Every column of a copied table is in its spec (originals: stored differently).
        with sqlite3.connect(filled[0] / DB_FILENAME) as conn:
            for spec in TABLES:
                cols = {str(r[1]) for r in conn.execute(f"PRAGMA table_info({spec.name})")}
                if spec.name == "originals":
                    cols = cols - {"rid", "text_z"} | {"trigger", "content"}
                assert cols == set(spec.names), spec.name
        import psycopg

        with psycopg.connect(postgres_url) as conn:
            for spec in TABLES:
                cols = {
                    str(r[0])
                    for r in conn.execute(
                        "SELECT column_name FROM information_schema.columns "
                        "WHERE table_schema = %s AND table_name = %s",
                        (schema, spec.name),
                    )
                }
                if spec.name == "originals":
                    cols -= {"terms"}
                assert cols == set(spec.names), spec.name
    finally:
        lite.close()
        pg.close()
    # And a table in neither list is caught.
    assert uncovered("sqlite", {"memories", "memories_fts_data", "new_table"}) == {"new_table"}
    assert set(DERIVED) == {"sqlite", "postgres"}


def test_the_filled_store_has_rows_in_every_table(filled: tuple[Path, datetime]) -> None:
    with sqlite3.connect(filled[0] / DB_FILENAME) as conn:
        empty = [
            s.name
            for s in TABLES
            if conn.execute(f"SELECT COUNT(*) FROM {s.name}").fetchone()[0] == 0
        ]
        vectors = conn.execute("SELECT COUNT(*) FROM memories WHERE embedding IS NOT NULL")
        kinds = {r[0] for r in conn.execute("SELECT DISTINCT kind FROM memories")}
    assert empty == []
    assert vectors.fetchone()[0] > 0
    assert {"episode", "knowledge", "procedure"} <= kinds


# -- the round trip ------------------------------------------------------------------------


def _recalls(k: Kioku) -> list[list[tuple[str, float]]]:
    out = []
    for query in QUERIES:
        result = k.recall(query)
        out.append([(r.memory.id, round(r.final, 6)) for r in result.items])
    return out


def _searches(k: Kioku) -> list[list[str]]:
    return [[f.memory.id for f in k.search_memory(q).items] for q in QUERIES]


def test_sqlite_to_postgres_and_back_is_lossless(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    schema: str,
    tmp_path: Path,
) -> None:
    source_db = _copy_db(filled, tmp_path)
    there = _migrate(_sqlite(source_db), open_postgres_tables(postgres_url, schema))
    assert there.verified, there.mismatched
    assert there.copied == sum(t.source_rows for t in there.tables) > 0
    back_db = tmp_path / "back" / DB_FILENAME
    back = _migrate(open_postgres_tables(postgres_url, schema), _sqlite(back_db))
    assert back.verified, back.mismatched

    stores = [_sqlite(source_db), open_postgres_tables(postgres_url, schema), _sqlite(back_db)]
    try:
        for spec in TABLES:
            first, second, third = (_rows(s, spec) for s in stores)
            assert first == second == third, spec.name
            assert first, spec.name
    finally:
        for s in stores:
            s.close()
    sums = {t.table: t.source_checksum for t in there.tables}
    assert sums == {t.table: t.target_checksum for t in back.tables}

    # The same questions get the same answers from the three stores, at the same time.
    answers = []
    homes = [
        (tmp_path / "h1", {}, source_db),
        (tmp_path / "h2", {"KIOKU_STORE_URL": postgres_url, "KIOKU_STORE__SCHEMA": schema}, None),
        (tmp_path / "h3", {}, back_db),
    ]
    for home, env, db in homes:
        home.mkdir(parents=True, exist_ok=True)
        if db is not None:
            (home / DB_FILENAME).symlink_to(db)
        with Kioku.open(home, env=env, clock=FixedClock(filled[1])) as k:
            answers.append((_recalls(k), _searches(k)))
    ids = [([[i for i, _ in q] for q in recalls], searches) for recalls, searches in answers]
    assert ids[0] == ids[1] == ids[2]
    scores = [[f for q in recalls for _, f in q] for recalls, _ in answers]
    # Cosine similarity is computed by numpy on SQLite and by pgvector on PostgreSQL.
    assert scores[0] == pytest.approx(scores[1], abs=1e-4)
    assert scores[0] == scores[2]
    assert any(answers[0][0])
    assert any(answers[0][1])


def test_a_second_run_copies_nothing_and_verifies(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    schema: str,
) -> None:
    first = _migrate(_sqlite(filled[0] / DB_FILENAME), open_postgres_tables(postgres_url, schema))
    again = _migrate(_sqlite(filled[0] / DB_FILENAME), open_postgres_tables(postgres_url, schema))
    assert first.verified
    assert again.verified
    assert again.copied == 0
    assert [t.already for t in again.tables] == [t.source_rows for t in again.tables]
    assert not again.key_replaced
    assert first.key_replaced


def test_identities_continue_after_the_copied_values(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    schema: str,
    tmp_path: Path,
) -> None:
    _migrate(_sqlite(filled[0] / DB_FILENAME), open_postgres_tables(postgres_url, schema))
    pg = open_postgres_tables(postgres_url, schema)
    copied = {s.name: max(int(str(r[0])) for r in _rows(pg, s)) for s in TABLES if s.serial}
    copied_rows = {s.name: len(_rows(pg, s)) for s in TABLES if s.serial}
    pg.close()
    env = {"KIOKU_STORE_URL": postgres_url, "KIOKU_STORE__SCHEMA": schema}
    with Kioku.open(tmp_path / "h", env=env, clock=FixedClock(filled[1])) as k:
        k.remember_turn("A new turn after the move", "OK.", at=filled[1])
        k.store.record_usage(Usage("openai", "gpt-x", "embed", 1, 0, filled[1]))
        k.store.add_resolutions([Resolution("another", filled[1], k.user_id, k.agent_id)])
    pg = open_postgres_tables(postgres_url, schema)
    try:
        for name in ("activity", "usage", "resolutions"):
            new = sorted(int(str(r[0])) for r in _rows(pg, table(name)))[copied_rows[name] :]
            assert new, name
            assert min(new) == copied[name] + 1, name
    finally:
        pg.close()


# -- refusals and recovery -----------------------------------------------------------------


def test_a_target_with_other_data_is_refused_and_left_alone(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    schema: str,
) -> None:
    _migrate(_sqlite(filled[0] / DB_FILENAME), open_postgres_tables(postgres_url, schema))
    admin(f"UPDATE {schema}.api_keys SET name = 'changed'")
    with pytest.raises(MigrationConflictError) as caught:
        _migrate(_sqlite(filled[0] / DB_FILENAME), open_postgres_tables(postgres_url, schema))
    assert "api_keys (id=" in str(caught.value)
    assert "holds other values" in str(caught.value)
    assert caught.value.exit_code == 2
    admin(f"UPDATE {schema}.api_keys SET name = 'ci'")
    admin(f"INSERT INTO {schema}.tombstones VALUES ('extra', '2026-01-01T00:00:00+09:00')")
    with pytest.raises(MigrationConflictError, match=r"tombstones .* not in the source"):
        _migrate(_sqlite(filled[0] / DB_FILENAME), open_postgres_tables(postgres_url, schema))


def test_a_non_empty_target_keeps_its_own_erasure_key(
    filled: tuple[Path, datetime], tmp_path: Path
) -> None:
    other = tmp_path / "other.db"
    with Kioku.open(tmp_path / "h", env={}, clock=FixedClock(START)) as k:
        k.store.add_tombstones(["x"], START)
    (tmp_path / "h" / DB_FILENAME).rename(other)
    with pytest.raises(MigrationConflictError, match="erasure_key"):
        _migrate(_sqlite(filled[0] / DB_FILENAME), _sqlite(other))


class _Failing:
    """A target that fails after ``left`` batches have been written (a crash mid-copy)."""

    def __init__(self, inner: SqliteTables | PostgresTables, left: int) -> None:
        self.inner, self.left = inner, left
        self.backend = inner.backend

    def insert(self, spec: TableSpec, rows: Sequence[Row]) -> int:
        if self.left == 0:
            raise RuntimeError("connection lost")
        self.left -= 1
        return self.inner.insert(spec, rows)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


def test_a_migration_cut_short_is_completed_by_running_it_again(
    filled: tuple[Path, datetime],
    postgres_url: str,  # noqa: F811
    schema: str,
) -> None:
    target = _Failing(open_postgres_tables(postgres_url, schema), left=3)
    with pytest.raises(RuntimeError, match="connection lost"):
        copy_store(_sqlite(filled[0] / DB_FILENAME), target, batch=4)  # type: ignore[arg-type]
    target.inner.close()
    pg = open_postgres_tables(postgres_url, schema)
    partial = sum(len(_rows(pg, s)) for s in TABLES)
    pg.close()
    report = _migrate(_sqlite(filled[0] / DB_FILENAME), open_postgres_tables(postgres_url, schema))
    assert report.verified, report.mismatched
    assert 0 < partial < sum(t.source_rows for t in report.tables)
    assert report.copied == sum(t.source_rows for t in report.tables) - partial


def test_a_dry_run_counts_and_writes_nothing(filled: tuple[Path, datetime], tmp_path: Path) -> None:
    target = tmp_path / "dry.db"
    report = _migrate(_sqlite(filled[0] / DB_FILENAME), _sqlite(target), dry_run=True)
    assert report.dry_run
    assert not report.verified
    assert all(t.copied == t.source_rows for t in report.tables)
    check = _sqlite(target)
    try:
        assert [len(_rows(check, s)) for s in TABLES if s.name != "state"] == [0] * (
            len(TABLES) - 1
        )
    finally:
        check.close()


# -- the canonical form --------------------------------------------------------------------

_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
)
_FLOAT = st.floats(allow_nan=False, allow_infinity=False, width=64)
_JSON = st.dictionaries(
    st.text(max_size=5).filter(lambda s: "\x00" not in s),
    st.one_of(
        st.integers(-(2**53), 2**53),
        _TEXT,
        st.booleans(),
        st.none(),
        st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15),
    ),
    max_size=4,
)


@settings(
    max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seqs=st.lists(st.integers(1, 2**40), min_size=1, max_size=4, unique=True),
    texts=st.lists(_TEXT, min_size=4, max_size=4),
    scores=st.lists(st.one_of(st.none(), _FLOAT), min_size=2, max_size=2),
    details=_JSON,
)
def test_canonical_rows_survive_both_stores(
    postgres_url: str,  # noqa: F811
    tmp_path: Path,
    seqs: list[int],
    texts: list[str],
    scores: list[float | None],
    details: dict[str, object],
) -> None:
    import json

    spec = table("lifecycle_log")
    from kioku.ports.transfer.canonical import canonical_json

    rows = [
        (
            seq,
            texts[0],
            float(seq),
            texts[1] or None,
            texts[2],
            "u",
            "a",
            texts[3],
            1,
            None,
            scores[0],
            scores[1],
            canonical_json(json.dumps(details)),
        )
        for seq in seqs
    ]
    name = (
        "prop_"
        + hashlib.blake2b(str(tmp_path).encode() + repr(seqs).encode(), digest_size=6).hexdigest()
    )
    lite_path = tmp_path / f"{name}.db"
    try:
        lite = _sqlite(lite_path)
        pg = open_postgres_tables(postgres_url, name)
        assert lite.insert(spec, rows) == len(rows) == pg.insert(spec, rows)
        read = [_rows(lite, spec), _rows(pg, spec)]
        lite.close()
        pg.close()
    finally:
        admin(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        lite_path.unlink(missing_ok=True)
    # -0.0 reads back as 0.0 (SQLite keeps no sign on a zero): the canonical form says so.
    canonical = [
        tuple(canonical_value(k, v) for (_, k), v in zip(spec.columns, r, strict=True))
        for r in rows
    ]
    expected = sorted(canonical, key=repr)
    assert read[0] == read[1] == expected
    assert [row_digest(r) for r in read[0]] == [row_digest(r) for r in expected]
