"""kioku end to end on PostgreSQL: real CLI processes pointed at a server by KIOKU_STORE_URL.

The server is the one the store contract suite uses (``tests/postgres_server.py``); each test
keeps its memories in a schema of its own, named by ``[store] schema`` (KIOKU_STORE__SCHEMA),
which kioku creates. Nothing is written to a SQLite file in the home.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from kioku.service.paths import DB_FILENAME
from tests.cli.conftest import Result, clean_env, run_kioku
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

PASSWORD = "e2e-secret-pw"  # noqa: S105 (a test value, which must never be printed)


@pytest.fixture
def pg_env(postgres_url: str, tmp_path: Path) -> Iterator[dict[str, str]]:  # noqa: F811
    schema = "e2e_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    env = clean_env(
        KIOKU_HOME=str(tmp_path / "home"),
        KIOKU_STORE_URL=postgres_url,
        KIOKU_STORE__SCHEMA=schema,
    )
    try:
        yield env
    finally:
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def kioku(env: dict[str, str], *args: str) -> Result:
    result = run_kioku(*args, env=env, timeout=120)
    shown = f"kioku {' '.join(args)} exited {result.code}: {result.err}{result.out}"
    assert result.code == 0, shown
    return result


def test_remember_recall_search_batch_forget_doctor(pg_env: dict[str, str], tmp_path: Path) -> None:
    turns = [
        ("The Osaka office moves to Umeda in March", "Noted: Umeda, from March."),
        ("My sister's wedding is in Kyoto on June 8", "Congratulations! Kyoto, June 8."),
        ("We decided to ship the billing service on PostgreSQL", "PostgreSQL it is."),
    ]
    ids = []
    for n, (user, assistant) in enumerate(turns):
        at = f"2025-01-1{n}T10:00:00+09:00"
        added = kioku(
            pg_env, "remember", "--user", user, "--assistant", assistant, "--at", at, "--json"
        )
        ids.append(str(added.json()["id"]))
    assert len(set(ids)) == 3

    recalled = kioku(pg_env, "recall", "Kyoto wedding")
    assert "Kyoto" in recalled.out

    found = kioku(pg_env, "search", "billing PostgreSQL", "--json").out
    assert ids[2] in found

    batch = kioku(pg_env, "batch", "--now", "2025-01-14T03:00:00+09:00", "--json")
    assert batch.json()

    kioku(pg_env, "forget", ids[0], "--json")
    assert ids[0] not in kioku(pg_env, "search", "Osaka Umeda office", "--json").out
    assert ids[1] in kioku(pg_env, "search", "Kyoto wedding", "--json").out

    doctor = kioku(pg_env, "doctor", "--json").json()
    assert doctor["ok"], doctor
    database = next(c for c in doctor["checks"] if c["name"] == "database")
    assert "PostgreSQL" in database["detail"]
    assert not (tmp_path / "home" / DB_FILENAME).exists()  # nothing went to SQLite


def test_config_show_and_errors_mask_the_password(pg_env: dict[str, str]) -> None:
    url = "postgresql://kioku:" + PASSWORD + "@db.invalid:5432/kioku"
    shown = kioku({**pg_env, "KIOKU_STORE_URL": url}, "config", "show")
    assert PASSWORD not in shown.out
    assert "postgresql://kioku:***@db.invalid:5432/kioku" in shown.out

    bad = run_kioku("stats", env={**pg_env, "KIOKU_STORE_URL": "mysql://u:" + PASSWORD + "@h/db"})
    assert bad.code == 2
    assert "store.url" in bad.err
    assert PASSWORD not in bad.err + bad.out
