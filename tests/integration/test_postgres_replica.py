"""Searches on a read replica of the PostgreSQL store (``[store] read_url``).

The module starts a primary of its own (``tests/postgres_server.py``) and a hot standby made
from it with the bundled ``pg_basebackup -R`` (streaming replication, which the bundled
server's ``pg_hba.conf`` allows on its socket), started with ``pg_ctl`` on a socket directory of its
own; both run as the system user the bundled server runs as (another user under root).
Pausing the standby's replay makes it lag on demand: what a search finds then shows which
server answered it.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import clean_env, run_kioku
from tests.postgres_server import SERVER_SETTINGS, bin_directory, server_directory, start_server

REPLICA_LOGGER = "kioku.adapters.store.postgres.replica"
#: Files of the primary's data directory that a copy must not keep: its socket's lock
#: (the standby would think the primary's postmaster holds its own socket) and the bundled
#: package's own bookkeeping and log.
_NOT_COPIED = (".s.PGSQL.5432.lock", ".handle_pids.json", "log")


@dataclass
class Standby:
    """A hot standby in ``data``, listening on a socket in ``data``, run as ``user``."""

    data: Path
    user: str | None
    bin: Path

    @property
    def url(self) -> str:
        return f"postgresql://postgres:@/postgres?host={self.data}"

    def pg_ctl(self, *args: str) -> None:
        subprocess.run(
            [str(self.bin / "pg_ctl"), "-D", str(self.data), "-w", *args],
            check=True,
            capture_output=True,
            user=self.user,
            timeout=60,
        )

    def start(self) -> None:
        self.pg_ctl("-l", str(self.data / "log"), "-o", f'-h "" -k {self.data}', "start")

    def stop(self) -> None:
        self.pg_ctl("-m", "fast", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()


@dataclass
class Servers:
    primary: str
    standby: Standby


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    """A primary and a streaming standby of it, both this module's own."""
    if os.environ.get("KIOKU_TEST_PG_URL"):
        pytest.skip("needs servers the test starts itself; KIOKU_TEST_PG_URL is set")
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")
    pytest.importorskip("psycopg_pool", reason="the postgres extra (psycopg-pool) is not installed")
    bin_dir = bin_directory()
    directory = server_directory()
    server: Any = start_server(directory, SERVER_SETTINGS)
    user: str | None = server.system_user
    standby = Standby(directory.parent / "standby", user, bin_dir)
    try:
        standby.data.mkdir(mode=0o700)
        if user is not None:
            shutil.chown(standby.data, user, user)
        subprocess.run(
            [str(bin_dir / "pg_basebackup"), "-D", str(standby.data), "-R", "-X", "stream",
             "-c", "fast", "-d", server.get_uri()],
            check=True, capture_output=True, user=user, timeout=120,
        )  # fmt: skip
        for name in _NOT_COPIED:
            (standby.data / name).unlink(missing_ok=True)
        standby.start()
        yield Servers(server.get_uri(), standby)
    finally:
        if standby.running():
            standby.stop()
        server.cleanup()
        shutil.rmtree(directory.parent, ignore_errors=True)


def _one(url: str, statement: str, *params: object) -> Any:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        done = conn.execute(statement, params)  # type: ignore[arg-type]  # fixed text
        row = done.fetchone() if done.description else None
    return None if row is None else row[0]


def _wait_for(what: str, ready: Any) -> None:
    deadline = time.monotonic() + 60
    while not ready():
        assert time.monotonic() < deadline, f"the standby never {what}"
        time.sleep(0.05)


def _catch_up(servers: Servers) -> None:
    """Wait until the standby has replayed everything the primary wrote so far."""
    target = _one(servers.primary, "SELECT pg_current_wal_lsn()::text")
    check = "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn"
    _wait_for("caught up", lambda: _one(servers.standby.url, check, target))


def _pause(servers: Servers) -> None:
    _one(servers.standby.url, "SELECT pg_wal_replay_pause()")
    state = "SELECT pg_get_wal_replay_pause_state()"
    _wait_for("paused", lambda: _one(servers.standby.url, state) == "paused")


def _resume(servers: Servers) -> None:
    _one(servers.standby.url, "SELECT pg_wal_replay_resume()")


def _env(servers: Servers, schema: str) -> dict[str, str]:
    """What a user sets: the primary, the replica and the schema, by environment."""
    return {
        "KIOKU_STORE_URL": servers.primary,
        "KIOKU_STORE_READ_URL": servers.standby.url,
        "KIOKU_STORE__SCHEMA": schema,
    }


def _found(result: Any) -> set[str]:
    return {item.memory.id for item in result.items}


def test_searches_go_to_the_replica_and_memories_are_read_from_the_primary(
    servers: Servers, tmp_path: Path
) -> None:
    from kioku import Kioku
    from kioku.ports.store import MemoryFilter

    with Kioku.open(tmp_path / "home", env=_env(servers, "replica_reads")) as kioku:
        old = kioku.remember("The zephyrblimp hangar", "zephyrblimp at gate 4",
                             intensity=60, category="work")  # fmt: skip
        _catch_up(servers)  # the schema and the first memory are on the standby
        assert old.id in _found(kioku.search_memory("zephyrblimp"))
        _pause(servers)
        try:
            new = kioku.remember("The quillfrond meeting", "quillfrond budget on Friday",
                                 intensity=60, category="work")  # fmt: skip
            kioku.store.delete(old.id)
            assert kioku.get(new.id).id == new.id  # get reads the primary
            # The lagging replica answers the searches: the new memory is not found yet...
            assert new.id not in _found(kioku.search_memory("quillfrond budget"))
            assert new.id not in _found(kioku.recall("quillfrond budget"))
            # ...and the deleted one is still found there, but read back from the primary,
            # where it is gone: it drops out.
            hits = kioku.store.search_lexical(["zephyrblimp"], MemoryFilter(), 10)
            assert [memory_id for memory_id, _ in hits] == [old.id]
            assert old.id not in _found(kioku.search_memory("zephyrblimp"))
            assert old.id not in _found(kioku.recall("zephyrblimp hangar"))
        finally:
            _resume(servers)
        _catch_up(servers)
        assert new.id in _found(kioku.search_memory("quillfrond budget"))
        assert kioku.store.search_lexical(["zephyrblimp"], MemoryFilter(), 10) == []
        assert new.id in _found(kioku.recall("quillfrond budget"))
    marked = "SELECT recalled_since_last_batch FROM replica_reads.memories WHERE id = %s"
    assert _one(servers.primary, marked, new.id) is True


def test_row_security_binds_the_replica_connections_to_their_owner(
    servers: Servers, tmp_path: Path
) -> None:
    """A store bound to one owner (``row_security``) searches the replica as that owner:
    with no user in the filter, the server still shows the owner's rows only."""
    from kioku import Kioku
    from kioku.ports.store import MemoryFilter

    role = "replica_app"
    _one(servers.primary, f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
    _one(servers.primary, f"CREATE SCHEMA {role} AUTHORIZATION {role}")
    as_role = {
        key: value.replace("postgres:@", f"{role}:@", 1)
        for key, value in _env(servers, role).items()
    }
    env = {**as_role, "KIOKU_STORE__ROW_SECURITY": "true"}
    home = tmp_path / "home"
    with Kioku.open(home, env=env, user_id="bob") as bob:  # store-wide
        bobs = bob.remember("bob's cobaltwren", "cobaltwren", intensity=60, category="work")
    with Kioku.open(home, env=env, user_id="alice", owner_bound=True) as alice:
        first = alice.remember("alice's cobaltwren", "cobaltwren", intensity=60, category="work")
        model = alice.embedder.model_id
        vector = list(alice.embedder.embed_one("cobaltwren"))
        _catch_up(servers)
        _pause(servers)
        try:
            alice.remember("alice's other cobaltwren", "cobaltwren", intensity=60, category="work")
            unscoped = MemoryFilter(archived=False)  # no user: the policy alone hides bob's
            hits = alice.store.search_lexical(["cobaltwren"], unscoped, 10)
            similar = alice.store.vector_search(model, vector, unscoped, 10)
        finally:
            _resume(servers)
    assert [memory_id for memory_id, _ in hits] == [first.id]  # the replica's, alice's only
    assert [memory_id for memory_id, _ in similar] == [first.id]
    assert bobs.id != first.id


def test_a_stopped_replica_leaves_searches_to_the_primary(
    servers: Servers, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from kioku import Kioku

    env = _env(servers, "replica_down")
    caplog.set_level(logging.WARNING, logger=REPLICA_LOGGER)
    with Kioku.open(tmp_path / "home", env=env) as kioku:
        memory = kioku.remember("The vortanel key", "vortanel under the mat",
                               intensity=60, category="work")  # fmt: skip
        _catch_up(servers)
        assert memory.id in _found(kioku.search_memory("vortanel"))  # connects to the replica
        assert not [r for r in caplog.records if r.name == REPLICA_LOGGER]
        servers.standby.stop()
        try:
            newer = kioku.remember("The vortanel spare", "a vortanel spare in the car",
                                   intensity=60, category="work")  # fmt: skip
            # Found although the replica is down: the primary answered.
            assert {memory.id, newer.id} <= _found(kioku.search_memory("vortanel"))
            assert newer.id in _found(kioku.recall("vortanel spare"))
            warnings = [r for r in caplog.records if r.name == REPLICA_LOGGER]
            assert len(warnings) == 1  # one, then the replica is left alone for a while
            assert warnings[0].levelno == logging.WARNING
            assert "searches use the primary" in warnings[0].getMessage()
            caplog.clear()
            # A store opened while the replica is down opens, says so once, and searches.
            with Kioku.open(tmp_path / "home", env=env) as other:
                assert newer.id in _found(other.search_memory("vortanel spare"))
                assert newer.id in _found(other.recall("vortanel spare"))
            assert len([r for r in caplog.records if r.name == REPLICA_LOGGER]) == 1
        finally:
            servers.standby.start()


def test_read_url_is_checked_before_anything_runs(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    replica_only = clean_env(KIOKU_STORE_READ_URL="postgresql://u:pw-1@replica/db")
    alone = run_kioku("--home", home, "config", "show", env=replica_only)
    assert alone.code == 2, alone.err
    assert "store.read_url" in alone.err
    assert "store.url" in alone.err.replace("store.read_url", "")  # the fix names the primary
    assert "pw-1" not in alone.err + alone.out
    not_pg = run_kioku("--home", home, "config", "show", env=clean_env(
        KIOKU_STORE_URL="postgresql://u@primary/db",
        KIOKU_STORE_READ_URL="mysql://u:pw-2@replica/db",
    ))  # fmt: skip
    assert not_pg.code == 2, not_pg.err
    assert "store.read_url" in not_pg.err
    assert "postgresql://" in not_pg.err
    assert "pw-2" not in not_pg.err + not_pg.out
    shown = run_kioku("--home", home, "config", "show", env=clean_env(
        KIOKU_STORE_URL="postgresql://u:pw-3@primary/db",
        KIOKU_STORE_READ_URL="postgresql://u:pw-4@replica/db",
    ))  # fmt: skip
    assert shown.code == 0, shown.err
    assert 'store.read_url = "postgresql://u:***@replica/db"' in shown.out
    assert "pw-3" not in shown.out
    assert "pw-4" not in shown.out


def test_a_replica_behind_the_schema_leaves_searches_to_the_primary(
    servers: Servers, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A store made while the replica lags has no tables there yet: searches still answer."""
    from kioku import Kioku

    caplog.set_level(logging.WARNING, logger=REPLICA_LOGGER)
    _pause(servers)
    try:
        with Kioku.open(tmp_path / "home", env=_env(servers, "replica_behind")) as kioku:
            memory = kioku.remember("The grellingpost box", "grellingpost at the corner",
                                    intensity=60, category="work")  # fmt: skip
            assert memory.id in _found(kioku.search_memory("grellingpost"))
            assert memory.id in _found(kioku.recall("grellingpost box"))
    finally:
        _resume(servers)
    warnings = [r.getMessage() for r in caplog.records if r.name == REPLICA_LOGGER]
    assert len(warnings) == 1, warnings
    assert "does not exist" in warnings[0]


def test_the_replica_is_tried_again_after_the_back_off(servers: Servers) -> None:
    """The replica's pool on its own, with a back-off of 2 s: which server answered each
    call is what ``pg_is_in_recovery()`` says (true on the standby)."""
    from contextlib import contextmanager

    import psycopg

    from kioku.adapters.store.postgres.connection import owner_settings
    from kioku.adapters.store.postgres.replica import Replica

    @contextmanager
    def primary() -> Iterator[Any]:
        with psycopg.connect(servers.primary, autocommit=True) as conn:
            yield conn

    def on_standby(conn: Any) -> bool:
        return bool(conn.execute("SELECT pg_is_in_recovery()").fetchone()[0])

    replica = Replica(servers.standby.url, 2, 5.0, owner_settings(None), backoff_s=2.0)
    try:
        assert replica.run(on_standby, primary) is True
        servers.standby.stop()
        try:
            assert replica.run(on_standby, primary) is False  # it failed: the primary
            assert replica.run(on_standby, primary) is False  # avoided, or failing again
        finally:
            servers.standby.start()
        time.sleep(2.5)  # past the back-off
        assert replica.run(on_standby, primary) is True
    finally:
        replica.close()


def test_a_replica_connection_that_does_not_come_free_leaves_the_search_to_the_primary(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    """One replica connection, held by a search that waits: the next search gets none in
    the pool's time (1 s here) and runs on the primary, with a warning."""
    import threading
    from contextlib import contextmanager

    import psycopg

    from kioku.adapters.store.postgres.connection import owner_settings
    from kioku.adapters.store.postgres.replica import Replica

    @contextmanager
    def primary() -> Iterator[Any]:
        with psycopg.connect(servers.primary, autocommit=True) as conn:
            yield conn

    def on_standby(conn: Any) -> bool:
        return bool(conn.execute("SELECT pg_is_in_recovery()").fetchone()[0])

    holding, release = threading.Event(), threading.Event()
    held: list[bool] = []

    def hold(conn: Any) -> bool:
        holding.set()
        release.wait(60)
        return on_standby(conn)

    caplog.set_level(logging.WARNING, logger=REPLICA_LOGGER)
    replica = Replica(servers.standby.url, 1, 1.0, owner_settings(None))
    holder = threading.Thread(target=lambda: held.append(replica.run(hold, primary)))
    try:
        holder.start()
        assert holding.wait(60)
        assert replica.run(on_standby, primary) is False  # no replica connection came free
    finally:
        release.set()
        holder.join(60)
        replica.close()
    assert held == [True]  # the search holding the connection finished on the standby
    warnings = [r.getMessage() for r in caplog.records if r.name == REPLICA_LOGGER]
    assert len(warnings) == 1, warnings


def test_doctor_reports_the_replica(servers: Servers, tmp_path: Path) -> None:
    import json

    env = clean_env(KIOKU_HOME=str(tmp_path / "home"), **_env(servers, "replica_doctor"))
    run_kioku("init", env=env)  # creates the schema on the primary
    _catch_up(servers)
    healthy = run_kioku("doctor", "--json", env=env)
    assert healthy.code == 0, healthy.err + healthy.out
    checks = {c["name"]: c for c in json.loads(healthy.out)["checks"]}
    assert checks["replica"]["ok"], checks["replica"]
    assert "a standby" in checks["replica"]["detail"]
    assert checks["integrity"]["ok"]
    servers.standby.stop()
    try:
        down = run_kioku("doctor", "--json", env=env)
        assert down.code == 1, down.err + down.out
        checks = {c["name"]: c for c in json.loads(down.out)["checks"]}
        assert not checks["replica"]["ok"]
        assert "does not answer" in checks["replica"]["detail"]
        assert "store.read_url" in checks["replica"]["detail"]
        assert checks["integrity"]["ok"]  # the store itself is fine
        assert checks["database"]["ok"]
    finally:
        servers.standby.start()
    # The primary itself given as the replica is not a standby.
    primary_too = {**env, "KIOKU_STORE_READ_URL": servers.primary}
    wrong = run_kioku("doctor", "--json", env=primary_too)
    assert wrong.code == 1, wrong.err + wrong.out
    checks = {c["name"]: c for c in json.loads(wrong.out)["checks"]}
    assert "is not a standby" in checks["replica"]["detail"]


def test_a_search_that_hangs_on_the_replica_is_cancelled_and_runs_on_the_primary(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    """A search still running on the replica after the pool's timeout (1 s here) is cancelled
    there by its statement_timeout, and answered by the primary, with one warning."""
    from contextlib import contextmanager

    import psycopg

    from kioku.adapters.store.postgres.connection import owner_settings
    from kioku.adapters.store.postgres.replica import Replica

    @contextmanager
    def primary() -> Iterator[Any]:
        with psycopg.connect(servers.primary, autocommit=True) as conn:
            yield conn

    def slow_on_standby(conn: Any) -> bool:
        standby = bool(conn.execute("SELECT pg_is_in_recovery()").fetchone()[0])
        if standby:
            conn.execute("SELECT pg_sleep(60)")  # hangs: the replica must cut it short
        return standby

    caplog.set_level(logging.WARNING, logger=REPLICA_LOGGER)
    replica = Replica(servers.standby.url, 1, 1.0, owner_settings(None))
    try:
        # The primary answered; had the sleep not been cut short, the standby would have.
        assert replica.run(slow_on_standby, primary) is False
    finally:
        replica.close()
    warnings = [r.getMessage() for r in caplog.records if r.name == REPLICA_LOGGER]
    assert len(warnings) == 1, warnings
    assert "statement timeout" in warnings[0]
