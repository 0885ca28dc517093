"""Several kioku processes on one PostgreSQL schema, as several machines would run them.

Each process gets a home of its own (so the home's ``batch.lock`` file cannot keep them
apart: only the server can) and the same ``[store]`` URL and schema. The nightly batch runs
once however many processes start it; a batch killed mid-way leaves whole days only; two
``kioku serve`` workers see each other's writes and keep owners apart.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest

from tests.cli.conftest import clean_env, run_kioku
from tests.integration.test_postgres_rls import AppRole, app_role  # noqa: F401 (a fixture)
from tests.postgres_server import PG_URL, admin, postgres_url  # noqa: F401 (a fixture)

FIRST = "2025-01-11T04:00:00+09:00"
FIRST_DAY = "2025-01-11"  # the batch day of FIRST
LATER = "2025-02-20T04:00:00+09:00"
LAST_DAY = "2025-02-20"  # forty days after FIRST_DAY
WRITES = 6  # turns each owner writes through each server


@pytest.fixture
def schema(postgres_url: str, tmp_path: Path) -> Iterator[str]:  # noqa: F811
    name = "wk_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    try:
        yield name
    finally:
        admin(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _env(schema: str, home: Path, **extra: str) -> dict[str, str]:
    return clean_env(
        KIOKU_HOME=str(home), KIOKU_STORE_URL=PG_URL[0], KIOKU_STORE__SCHEMA=schema, **extra
    )


def _ok(env: dict[str, str], *args: str) -> str:
    done = run_kioku(*args, env=env, timeout=180)
    assert done.code == 0, f"kioku {' '.join(args)}: {done.err}{done.out}"
    return done.out


def _query(schema: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(PG_URL[0], autocommit=True, options=f"-c search_path={schema}") as conn:
        return conn.execute(sql, params).fetchall()  # type: ignore[arg-type]  # fixed test text


def _stocked(schema: str, tmp_path: Path) -> None:
    """A store with a few memories of two owners and its first batch day applied (in this
    process: what is tested is the processes started afterwards)."""
    from kioku import Kioku

    env = _env(schema, tmp_path / "setup")
    with Kioku.open(env=env) as kioku:
        for n, (user, text) in enumerate(
            [("alice", "the heron nests"), ("bob", "a bike chain")] * 3
        ):
            kioku.user_id = user
            kioku.remember(
                f"{text} {n}", f"note {n}", intensity=20 + n * 10, category="casual",
                at=datetime.fromisoformat("2025-01-09T12:00:00+09:00"),
            )  # fmt: skip
        report = kioku.batch(now=datetime.fromisoformat(FIRST))
    assert report.status == "done"
    assert report.last_day == FIRST_DAY


def _batch(schema: str, home: Path, now: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "kioku", "batch", "--now", now, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(schema, home),
    )


def _report(process: subprocess.Popen[str]) -> dict[str, object]:
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    data = json.loads(out)
    assert isinstance(data, dict)
    return data


def _whole_days_only(schema: str) -> str:
    """The last batch day, after checking that the lifecycle log holds no later day and no
    event twice."""
    last = _query(schema, "SELECT value FROM state WHERE key = 'batch_last_day'")[0][0]
    later = _query(schema, "SELECT count(*) FROM lifecycle_log WHERE batch_day > %s", last)
    assert later == [(0,)]
    twice = _query(
        schema,
        "SELECT batch_day, memory_id, event, count(*) FROM lifecycle_log "
        "GROUP BY batch_day, memory_id, event, details::text HAVING count(*) > 1",
    )
    assert twice == []
    return str(last)


def test_a_batch_reports_running_while_another_process_holds_the_lock(
    schema: str, tmp_path: Path
) -> None:
    from kioku.adapters.store.postgres import open_postgres_schema

    _stocked(schema, tmp_path)
    with open_postgres_schema(PG_URL[0], schema) as store, store.exclusive("batch") as taken:
        assert taken
        report = _report(_batch(schema, tmp_path / "a", LATER))
        assert report["status"] == "already_running"
        assert report["days"] == []
        assert _whole_days_only(schema) == FIRST_DAY  # nothing applied meanwhile
        consolidated = json.loads(_ok(_env(schema, tmp_path / "c"), "consolidate", "--json"))
        assert consolidated["status"] == "already_running"  # the same lock
    report = _report(_batch(schema, tmp_path / "a", LATER))
    assert report["status"] == "done"
    assert _whole_days_only(schema) == LAST_DAY


def test_a_killed_batch_leaves_whole_days_and_two_processes_finish_it_once(
    schema: str, tmp_path: Path
) -> None:
    _stocked(schema, tmp_path)
    logged = _query(schema, "SELECT count(*) FROM lifecycle_log")[0][0]
    victim = _batch(schema, tmp_path / "a", LATER)
    deadline = time.monotonic() + 120
    query = "SELECT value FROM state WHERE key = 'batch_last_day'"
    while _query(schema, query)[0][0] == FIRST_DAY and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate(timeout=60)
    stopped_at = _whole_days_only(schema)
    assert stopped_at > FIRST_DAY
    # The server freed the dead process's lock. Two processes started at once apply the
    # rest: one of them, each day once.
    first, second = _batch(schema, tmp_path / "b", LATER), _batch(schema, tmp_path / "c", LATER)
    reports = [_report(first), _report(second)]
    statuses = sorted(str(r["status"]) for r in reports)
    if stopped_at < LAST_DAY:  # (the killed one had not finished, as it nearly always has not)
        assert statuses[0] == "already_running" or statuses == ["done", "up_to_date"], statuses
        done = next(r for r in reports if r["status"] == "done")
        days = [str(d["day"]) for d in done["days"]]  # type: ignore[attr-defined]
        assert days[0] > stopped_at
        assert days[-1] == LAST_DAY
    assert _whole_days_only(schema) == LAST_DAY
    assert _query(schema, "SELECT count(*) FROM lifecycle_log")[0][0] > logged
    runs = _query(
        schema,
        "SELECT count(*) FROM activity "
        "WHERE type = 'cron_executed' AND line::jsonb ->> 'task' = 'batch'",
    )  # one per batch that finished applying days: the setup's and one other
    assert runs == [(2,)]


def test_two_servers_on_one_schema_see_every_write_and_keep_owners_apart(
    app_role: AppRole,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    """Both servers run as an ordinary role with ``[store] row_security`` on (a hardened
    deployment): each owner's requests go through connections bound to that owner."""
    from tests.server.running import make_key, serving

    if app_role.url is None:
        pytest.skip("the test server's URL cannot name another role")
    schema = app_role.schema
    env = {
        "KIOKU_STORE_URL": app_role.url,
        "KIOKU_STORE__SCHEMA": schema,
        "KIOKU_STORE__ROW_SECURITY": "true",
        "KIOKU_NO_AUTO_BATCH": "1",
    }
    homes = [tmp_path / "worker-a", tmp_path / "worker-b"]
    keys = {owner: make_key(homes[0], owner, owner, env=env) for owner in ("alice", "bob")}
    written: dict[str, list[tuple[str, str]]] = {"alice": [], "bob": []}  # (id, text)
    errors: list[str] = []
    guard = threading.Lock()
    start = threading.Barrier(4)
    with serving(homes[0], "--no-ui", env=env) as a, serving(homes[1], "--no-ui", env=env) as b:
        servers = {"a": a, "b": b}

        def write(owner: str, name: str) -> None:
            with servers[name].client(keys[owner]) as client:
                start.wait(timeout=120)
                for n in range(WRITES):
                    text = f"{owner} wrote note {n} through worker {name}"
                    answer = client.post("v1/turns", json={"user": text, "session_id": name})
                    with guard:
                        if answer.status_code == 201:
                            written[owner].append((answer.json()["id"], text))
                        else:
                            errors.append(f"{owner}/{name}: {answer.status_code} {answer.text}")

        threads = [
            threading.Thread(target=write, args=(owner, name))
            for owner in ("alice", "bob")
            for name in servers
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        assert not any(thread.is_alive() for thread in threads)
        assert errors == []
        for owner, other in (("alice", "bob"), ("bob", "alice")):
            assert len(written[owner]) == 2 * WRITES
            for served in servers.values():
                with served.client(keys[owner]) as client:
                    page = client.get("v1/memories", params={"kind": "episode", "limit": 500})
                    assert page.status_code == 200, page.text
                    items = page.json()["items"]
                    assert sorted(m["trigger"] for m in items) == sorted(
                        t for _, t in written[owner]
                    )
                    assert all(m["user_id"] == owner for m in items)
                    for memory_id, _ in written[other]:
                        assert client.get(f"v1/memories/{memory_id}").status_code == 404
                    for memory_id, _ in written[owner][:: WRITES // 2]:
                        assert client.get(f"v1/memories/{memory_id}").status_code == 200
            # More of the API through bound connections: none of it sees the other owner.
            own = {memory_id for memory_id, _ in written[owner]}
            theirs = {memory_id for memory_id, _ in written[other]}
            with b.client(keys[owner]) as client:
                found = client.post("v1/search", json={"query": "note worker"})
                assert found.status_code == 200, found.text
                hits = {r["id"] for r in found.json()["results"]}
                assert hits
                assert hits <= own
                for answer in (
                    client.post("v1/recall", json={"query": "note through worker"}),
                    client.get("v1/export"),
                    client.post("v1/erasure/plan"),
                ):
                    assert answer.status_code == 200, answer.text
                    assert not any(memory_id in answer.text for memory_id in theirs)
                assert answer.json()["user_id"] == owner
                assert answer.json()["memories"] == 2 * WRITES
    stored = _query(
        schema, "SELECT user_id, trigger, count(*) FROM memories GROUP BY user_id, trigger"
    )
    assert all(count == 1 for _, _, count in stored)
    assert sorted((str(u), str(t)) for u, t, _ in stored) == sorted(
        (owner, text) for owner, pairs in written.items() for _, text in pairs
    )
    assert not any((home / "memories.db").exists() for home in homes)
    secured = _query(
        schema,
        "SELECT count(*) FROM pg_class WHERE relnamespace = %s::regnamespace "
        "AND relrowsecurity AND relforcerowsecurity",
        schema,
    )
    assert secured == [(7,)]
