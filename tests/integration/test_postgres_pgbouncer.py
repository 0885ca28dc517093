"""kioku through PgBouncer in session pooling mode, in front of the session's PostgreSQL.

A real ``pgbouncer`` process (Debian's package; the tests skip, saying how to install it, when
it is missing) listens on loopback and hands out connections to the test server. kioku sets
each connection's ``search_path`` once connected instead of sending it as a startup parameter,
which PgBouncer refuses ("unsupported startup parameter: options").
"""

from __future__ import annotations

import hashlib
import json
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.conftest import clean_env, run_kioku
from tests.postgres_server import PG_DATA, PG_URL, admin, postgres_url  # noqa: F401 (a fixture)

BINARY_PLACES = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")


@dataclass(frozen=True)
class Bouncer:
    url: str  # a client URL through the pooler
    log: Path


def _binary() -> str:
    found = shutil.which("pgbouncer") or next(
        (place for place in BINARY_PLACES if Path(place).exists()), None
    )
    if found is None:
        pytest.skip("pgbouncer is not installed (on Debian: apt-get install pgbouncer)")
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _entry(url: str) -> str:
    """The ``[databases]`` line's connection settings for the server ``url`` names."""
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(url)
    parts = []
    for key in ("host", "port", "dbname", "user", "password"):
        value = params.get(key)
        if value not in (None, ""):
            parts.append(f"{key}={value}")
    return " ".join(parts)


@pytest.fixture(scope="module")
def bouncer(postgres_url: str) -> Iterator[Bouncer]:  # noqa: F811
    binary = _binary()
    place = Path(tempfile.mkdtemp(prefix="kioku-pgbouncer-"))
    place.chmod(0o755)
    port = _free_port()
    config = place / "pgbouncer.ini"
    config.write_text(
        "[databases]\n"
        f"kioku = {_entry(postgres_url)}\n"
        "[pgbouncer]\n"
        "listen_addr = 127.0.0.1\n"
        f"listen_port = {port}\n"
        "unix_socket_dir =\n"
        "auth_type = any\n"
        "pool_mode = session\n"
        "default_pool_size = 20\n",
        encoding="utf-8",
    )
    config.chmod(0o644)
    command = [binary]
    if os.geteuid() == 0:  # PgBouncer will not run as root: run it as the server's user
        owner = PG_DATA[0].stat().st_uid if PG_DATA else 65534
        command += ["-u", pwd.getpwuid(owner).pw_name]
    log = place / "pgbouncer.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen([*command, str(config)], stdout=sink, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"pgbouncer did not start: {log.read_text(errors='replace')}")
                time.sleep(0.05)
        yield Bouncer(f"postgresql://postgres@127.0.0.1:{port}/kioku", log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(place, ignore_errors=True)


@pytest.fixture
def schema(postgres_url: str, tmp_path: Path) -> Iterator[str]:  # noqa: F811
    name = "pb_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    try:
        yield name
    finally:
        admin(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        admin(f"DROP SCHEMA IF EXISTS {name}_b CASCADE")


def _tables(schema: str) -> set[str]:
    import psycopg

    with psycopg.connect(PG_URL[0], autocommit=True) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = %s", (schema,)
        ).fetchall()
    return {str(row[0]) for row in rows}


def _count(schema: str, table: str) -> int:
    import psycopg
    from psycopg import sql

    with psycopg.connect(PG_URL[0], autocommit=True) as conn:
        row = conn.execute(
            sql.SQL("SELECT count(*) FROM {}.{}").format(
                sql.Identifier(schema), sql.Identifier(table)
            )
        ).fetchone()
    assert row is not None
    return int(str(row[0]))


def test_a_store_opens_and_works_through_pgbouncer_in_its_own_schema(
    bouncer: Bouncer, schema: str
) -> None:
    from kioku.adapters.store.postgres import open_postgres_schema
    from tests.contract.conftest import build_memory, memory_id

    before = _tables("public")
    with open_postgres_schema(bouncer.url, schema) as store:
        store.add_many([build_memory(n, content=f"kayak trip number {n}") for n in range(3)])
        found = store.get_many([memory_id(0), memory_id(2)])
        assert [m.id for m in found] == [memory_id(0), memory_id(2)]
    assert "memories" in _tables(schema)
    assert _tables("public") == before  # nothing went to the default schema
    assert _count(schema, "memories") == 3
    # A second store in another schema, through the same pooler (whose server connections
    # the first store's clients used and gave back), sees none of the first one's rows.
    with open_postgres_schema(bouncer.url, f"{schema}_b") as other:
        assert other.get_many([memory_id(0)]) == []
        other.add_many([build_memory(9, content="a different owner's kayak")])
    assert _count(schema, "memories") == 3
    assert _count(f"{schema}_b", "memories") == 1
    assert "unsupported startup parameter" not in bouncer.log.read_text(errors="replace")


def test_the_cli_remembers_recalls_batches_and_forgets_through_pgbouncer(
    bouncer: Bouncer, schema: str, tmp_path: Path
) -> None:
    env = clean_env(
        KIOKU_HOME=str(tmp_path / "home"), KIOKU_STORE_URL=bouncer.url, KIOKU_STORE__SCHEMA=schema
    )

    def ok(*args: str) -> str:
        done = run_kioku(*args, env=env, timeout=180)
        assert done.code == 0, f"kioku {' '.join(args)}: {done.err}{done.out}"
        return done.out

    stored = json.loads(
        ok("remember", "--user", "Our cat Tama ran away from home in Osaka", "--json")
    )
    stored_id = str(stored["memory"]["id"] if "memory" in stored else stored["id"])
    assert "Tama" in ok("recall", "Tama the cat")
    first = json.loads(ok("batch", "--json"))
    assert first["status"] in {"done", "up_to_date"}, first
    assert _count(schema, "memories") == 1
    ok("forget", stored_id)
    assert _count(schema, "memories") == 0
    assert "Tama" not in ok("recall", "Tama the cat")


def test_two_batches_through_pgbouncer_hold_one_lock(bouncer: Bouncer, schema: str) -> None:
    """The batch's lock is a session advisory lock: in session mode each client keeps its
    server connection, so a second store sees the lock the first one holds."""
    from kioku.adapters.store.postgres import open_postgres_schema

    with (
        open_postgres_schema(bouncer.url, schema) as first,
        open_postgres_schema(bouncer.url, schema) as second,
    ):
        with first.exclusive("batch") as taken:
            assert taken
            with second.exclusive("batch") as also:
                assert not also
        with second.exclusive("batch") as now:
            assert now
