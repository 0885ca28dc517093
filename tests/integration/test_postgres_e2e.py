"""kioku end to end on PostgreSQL: real CLI processes pointed at a server by KIOKU_STORE_URL.

The server is the one the store contract suite uses (``tests/postgres_server.py``); each test
keeps its memories in a schema of its own, named by ``[store] schema`` (KIOKU_STORE__SCHEMA),
which kioku creates. Nothing is written to a SQLite file in the home.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from kioku.service.paths import DB_FILENAME
from tests.cli.conftest import Result, run_kioku
from tests.postgres_server import postgres_url, schema_fixture  # noqa: F401 (a fixture)

PASSWORD = "e2e-secret-pw"  # noqa: S105 (a test value, which must never be printed)


pg_env = schema_fixture("e2e_")


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


def _with_password(url: str) -> str:
    """``url`` with PASSWORD as its password when it has an empty one (the test server's URLs: the
    server trusts its socket, so the password is sent and ignored)."""
    return url.replace(":@", f":{PASSWORD}@", 1) if ":@" in url else url


def _last_day(env: dict[str, str]) -> object:
    """The store's last batch day, read on the server."""
    import psycopg

    options = f"-c search_path={env['KIOKU_STORE__SCHEMA']}"
    with psycopg.connect(env["KIOKU_STORE_URL"], autocommit=True, options=options) as conn:
        row = conn.execute("SELECT value FROM state WHERE key = 'batch_last_day'").fetchone()
    return None if row is None else row[0]


def test_init_names_the_server_with_its_password_masked(pg_env: dict[str, str]) -> None:
    env = {**pg_env, "KIOKU_STORE_URL": _with_password(pg_env["KIOKU_STORE_URL"])}
    home = Path(env["KIOKU_HOME"])
    done = kioku(env, "init", "--json").json()
    assert done["store"] == "postgresql"
    assert done["database"].startswith("postgresql://")
    assert f"schema {env['KIOKU_STORE__SCHEMA']}" in done["database"]
    assert done["schema_version"] >= 1
    text = kioku(env, "init").out
    assert "database  postgresql://" in text
    for shown in (json.dumps(done), text):
        assert PASSWORD not in shown
        assert DB_FILENAME not in shown
    if PASSWORD in env["KIOKU_STORE_URL"]:
        assert ":***@" in text
    assert (home / "config.toml").is_file()
    assert not (home / DB_FILENAME).exists()


def test_hooks_and_the_overdue_batch_find_the_store_on_the_server(
    pg_env: dict[str, str],
) -> None:
    home = Path(pg_env["KIOKU_HOME"])
    kioku(
        pg_env, "add", "--trigger", "Mother's birthday", "--content", "next Thursday",
        "--intensity", "80", "--category", "emotional", "--protected",
        "--at", "2025-01-10T10:00:00+09:00",
    )  # fmt: skip
    assert not home.joinpath(DB_FILENAME).exists()
    assert _last_day(pg_env) is None

    payload = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}
    hook = subprocess.run(
        [sys.executable, "-m", "kioku", "hook", "session-start"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=pg_env,
        timeout=120,
        check=False,
    )
    assert hook.returncode == 0, hook.stderr
    assert hook.stdout.startswith("<memories>"), hook.stderr
    assert "Mother's birthday" in hook.stdout

    on = {**pg_env, "KIOKU_NO_AUTO_BATCH": ""}
    kioku(on, "list", "--json")
    log = home / "batch.log"
    assert "overdue batch started by `kioku list`" in log.read_text()
    deadline = time.monotonic() + 120
    while '"status"' not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert '"status": "done"' in log.read_text(), log.read_text()
    assert _last_day(pg_env) is not None
    assert not home.joinpath(DB_FILENAME).exists()
