"""``kioku migrate`` as a user runs it: real processes, a real PostgreSQL server.

A home filled by the CLI is copied to a schema (``--to``) and back into another home
(``--from``); a second run copies nothing; a target with other data is refused (exit 2); a copy
the server changed is reported (exit 1); bad input is refused with exit 2; the password in the
URL is never printed.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.service.keys import create_key
from kioku.service.paths import DB_FILENAME
from tests.cli.conftest import Result, clean_env, run_kioku
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

PASSWORD = "migrate-secret-pw"  # noqa: S105 (a test value, which must never be printed)


@pytest.fixture
def schema(postgres_url: str, tmp_path: Path) -> Iterator[str]:  # noqa: F811
    name = "cli_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    try:
        yield name
    finally:
        admin(f"DROP SCHEMA IF EXISTS {name} CASCADE")


@pytest.fixture
def url(postgres_url: str) -> str:  # noqa: F811
    """The server's URL with a password in it (the test server does not check it)."""
    return postgres_url.replace("postgres:@", f"postgres:{PASSWORD}@", 1)


def kioku(home: Path, *args: str) -> Result:
    result = run_kioku("--home", str(home), *args, env=clean_env(), timeout=120)
    assert PASSWORD not in result.out + result.err
    return result


def ok(home: Path, *args: str) -> Result:
    result = kioku(home, *args)
    assert result.code == 0, f"kioku {' '.join(args)}: {result.err}{result.out}"
    return result


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with two turns and an API key (filled in process: the CLI under test is
    ``migrate``)."""
    home = tmp_path_factory.mktemp("cli") / "home"
    turns = [
        ("The Osaka office moves to Umeda in March", "Noted: Umeda, from March."),
        ("We decided to ship the billing service on PostgreSQL", "PostgreSQL it is."),
    ]
    with Kioku.open(home, env={}) as k:
        for n, (user, assistant) in enumerate(turns):
            at = datetime(2025, 1, 10 + n, 10, tzinfo=ZoneInfo("Asia/Tokyo"))
            k.remember_turn(user, assistant, at=at)
        create_key(k, "ci", k.user_id, k.agent_id)
    return home


def test_to_and_from_a_server_round_trip(home: Path, url: str, schema: str, tmp_path: Path) -> None:
    there = ok(home, "migrate", "--to", url, "--schema", schema, "--json").json()
    assert there["verified"] is True
    assert there["copied"] > 0
    tables = {t["table"]: t for t in there["tables"]}
    assert tables["memories"]["copied"] == tables["memories"]["target_rows"] == 2
    assert tables["api_keys"]["copied"] == 1
    assert all(t["ok"] and t["source_checksum"] == t["target_checksum"] for t in there["tables"])

    again = ok(home, "migrate", "--to", url, "--schema", schema, "--json").json()
    assert again["verified"] is True
    assert again["copied"] == 0

    other = tmp_path / "other"
    back = ok(other, "migrate", "--from", url, "--schema", schema)
    assert "verified:" in back.out
    assert f"{DB_FILENAME}" in back.out
    with sqlite3.connect(other / DB_FILENAME) as conn:
        assert conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 2
    found = ok(other, "search", "Umeda", "--json").json()
    assert found["results"]
    # The home that was copied from holds the same data: nothing to copy, and verified.
    same = ok(home, "migrate", "--from", url, "--schema", schema, "--json").json()
    assert same["copied"] == 0
    assert same["verified"] is True
    # A dry run into an absent home counts every row and creates no file.
    dry = ok(
        tmp_path / "dry", "migrate", "--from", url, "--schema", schema, "--json", "--dry-run"
    ).json()
    assert dry["copied"] == sum(t["source_rows"] for t in dry["tables"]) > 0
    assert not (tmp_path / "dry" / DB_FILENAME).exists()


def test_a_dry_run_creates_nothing(home: Path, url: str, schema: str, tmp_path: Path) -> None:
    # --source names the store to copy (here a home directory) instead of --home's.
    elsewhere = tmp_path / "elsewhere"
    result = ok(
        elsewhere, "migrate", "--to", url, "--schema", schema, "--dry-run", "--source", str(home)
    )
    assert str(home / DB_FILENAME) in result.out
    counted = re.search(
        r"dry run: (\d+) of (\d+) rows would be copied; nothing written", result.out
    )
    assert counted is not None, result.out
    assert counted.group(1) == counted.group(2) != "0"
    assert not elsewhere.exists()
    import psycopg

    with psycopg.connect(url) as conn:
        found = conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,))
        assert found.fetchone() is None


def test_a_target_with_other_data_is_refused(home: Path, url: str, schema: str) -> None:
    ok(home, "migrate", "--to", url, "--schema", schema)
    admin(f"UPDATE {schema}.memories SET content = 'changed on the server'")
    refused = kioku(home, "migrate", "--from", url, "--schema", schema)
    assert refused.code == 2
    assert "memories (id=" in refused.err
    assert "holds other values" in refused.err
    assert "empty target" in refused.err
    assert "nothing was written" in refused.err


def test_a_copy_that_differs_exits_1_naming_the_table(home: Path, url: str, schema: str) -> None:
    # The server changes every key it is given: the copy cannot match the source.
    from kioku.adapters.store.postgres.transfer import open_postgres_tables

    open_postgres_tables(url, schema).close()
    admin(
        f"CREATE FUNCTION {schema}.rename() RETURNS trigger LANGUAGE plpgsql AS "
        "$$ BEGIN NEW.name := NEW.name || '!'; RETURN NEW; END $$"
    )
    admin(
        f"CREATE TRIGGER rename BEFORE INSERT ON {schema}.api_keys "
        f"FOR EACH ROW EXECUTE FUNCTION {schema}.rename()"
    )
    result = kioku(home, "migrate", "--to", url, "--schema", schema)
    assert result.code == 1
    assert "DIFFERS" in result.out
    assert "differs from the source in: api_keys" in result.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "exactly one of --to URL and --from URL"),
        (("--to", "mysql://u:migrate-secret-pw@h/db"), "PostgreSQL URL"),
        (("--to", "postgresql://h/db", "--schema", "Bad-Name"), "--schema"),
        (("--from", "postgresql://h/db", "--source", "x"), "--source goes with --to"),
        (("--to", "postgresql://h/db", "--source", "missing.db"), "no SQLite store at"),
    ],
)
def test_bad_input_is_refused_with_exit_2(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    result = kioku(tmp_path / "home", "migrate", *args)
    assert result.code == 2
    assert message in result.err


def test_a_missing_source_schema_is_refused(tmp_path: Path, url: str, schema: str) -> None:
    result = kioku(tmp_path / "home", "migrate", "--from", url, "--schema", schema)
    assert result.code == 2
    assert f"no schema {schema!r}" in result.err
    assert not (tmp_path / "home" / DB_FILENAME).exists()


def test_the_copy_builds_its_index_with_the_configured_hnsw_settings(
    home: Path, url: str, schema: str
) -> None:
    """``[store] hnsw_m`` and ``hnsw_ef_construction`` of the configuration migrate runs with
    shape the index the copy builds, as the server's catalogue shows."""
    env = clean_env(KIOKU_STORE__HNSW_M="12", KIOKU_STORE__HNSW_EF_CONSTRUCTION="48")
    result = run_kioku(
        "--home", str(home), "migrate", "--to", url, "--schema", schema, env=env, timeout=120
    )
    assert result.code == 0, result.err
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT o.option_name, o.option_value FROM pg_class AS c "
            "JOIN pg_namespace AS n ON n.oid = c.relnamespace, "
            "pg_options_to_table(c.reloptions) AS o "
            "WHERE n.nspname = %s AND c.relname LIKE 'memories_hnsw_%%'",
            (schema,),
        ).fetchall()
    assert dict(rows) == {"m": "12", "ef_construction": "48"}
    bad = run_kioku(
        "--home",
        str(home),
        "migrate",
        "--to",
        url,
        "--schema",
        schema + "_bad",
        env=clean_env(KIOKU_STORE__HNSW_EF_CONSTRUCTION="10"),
        timeout=120,
    )
    assert bad.code == 2
    assert "store.hnsw_ef_construction" in bad.err
    assert PASSWORD not in bad.err + bad.out
