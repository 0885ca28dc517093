"""Row-level security on PostgreSQL (``[store] row_security``): a store bound to one owner
cannot see or write another owner's rows, even with SQL that has no filter.

Superusers and roles with BYPASSRLS are never held to policies, so the tests run kioku as an
ordinary role that owns its schema (what the documentation recommends), created here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

ROLE_PASSWORD = "rls-test-pw"  # noqa: S105 (a test role's; the test server trusts its socket anyway)


@dataclass
class AppRole:
    """An ordinary role, its own schema, and how to connect as it."""

    name: str
    schema: str
    conninfo: str  # key=value connection string
    url: str | None  # the same as a postgresql:// URL, when the server's URL allows it


@pytest.fixture
def app_role(postgres_url: str, tmp_path: Path) -> Iterator[AppRole]:  # noqa: F811
    from psycopg.conninfo import make_conninfo

    name = "rls_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    admin(f"CREATE ROLE {name} LOGIN PASSWORD '{ROLE_PASSWORD}' NOSUPERUSER NOBYPASSRLS")
    admin(f"CREATE SCHEMA {name} AUTHORIZATION {name}")
    url = None
    if postgres_url.startswith("postgresql://postgres:@"):  # the test server's
        url = postgres_url.replace("postgres:@", f"{name}:{ROLE_PASSWORD}@", 1)
    try:
        yield AppRole(
            name, name, make_conninfo(postgres_url, user=name, password=ROLE_PASSWORD), url
        )
    finally:
        admin(f"DROP SCHEMA IF EXISTS {name} CASCADE")
        admin(f"DROP ROLE IF EXISTS {name}")


def _remember(store: object, user: str, text: str) -> str:
    from kioku import Kioku

    kioku = Kioku(store, user_id=user)  # type: ignore[arg-type]
    memory = kioku.remember(text, f"about {text}", intensity=50, category="work")
    return memory.id


def test_an_owner_bound_store_sees_and_writes_its_owner_only(app_role: AppRole) -> None:
    import psycopg
    from psycopg import errors as pg_errors

    from kioku.adapters.store.postgres import open_postgres_schema
    from kioku.adapters.store.postgres.migrations import OWNER_TABLES
    from kioku.ports.store import MemoryFilter

    every = MemoryFilter()
    with open_postgres_schema(app_role.conninfo, app_role.schema, row_security=True) as wide:
        alice_ids = {_remember(wide, "alice", f"alice note {n}") for n in range(2)}
        bob_id = _remember(wide, "bob", "bob note")
        assert wide.count(every) == 3  # store-wide: the batch, keys, maintenance

    with psycopg.connect(app_role.conninfo, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT relname, relrowsecurity, relforcerowsecurity FROM pg_class "
            "WHERE relnamespace = %s::regnamespace AND relname = ANY(%s)",
            (app_role.schema, list(OWNER_TABLES)),
        ).fetchall()
        assert sorted(rows) == sorted((t, True, True) for t in OWNER_TABLES)
        # A session of this role that sets nothing sees nothing (its tables are forced).
        conn.execute(f"SET search_path = {app_role.schema}")
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (0,)
        conn.execute("SET kioku.all_users = 'on'")
        assert conn.execute("SELECT count(*) FROM memories").fetchone() == (3,)

    with open_postgres_schema(
        app_role.conninfo, app_role.schema, owner="alice", row_security=True
    ) as alice:
        assert {m.id for m in alice.list(every)} == alice_ids
        assert alice.get(bob_id) is None
        assert alice.count(MemoryFilter(user_id="bob")) == 0
        # Searches read term and vector tables without policies of their own: what they
        # return is still checked against the memories the owner may see.
        assert {i for i, _ in alice.search_lexical(["note"], every, 10)} == alice_ids
        assert {i for i, _ in alice.search_lexical(["bob"], every, 10)} == set()
        with alice._open_pool().connection() as conn:  # SQL with no filter at all
            users = conn.execute("SELECT DISTINCT user_id FROM memories").fetchall()
            assert users == [("alice",)]
            for table in OWNER_TABLES:
                found = conn.execute(
                    psycopg.sql.SQL("SELECT count(*) FROM {} WHERE user_id <> 'alice'").format(
                        psycopg.sql.Identifier(table)
                    )
                ).fetchone()
                assert found == (0,), table
            gone = conn.execute("DELETE FROM memories WHERE user_id = 'bob'")
            assert gone.rowcount == 0
            with pytest.raises(pg_errors.InsufficientPrivilege, match="row-level security"):
                conn.execute("UPDATE memories SET user_id = 'bob' WHERE user_id = 'alice'")
        # Writing through the bound store works for its owner.
        made = _remember(alice, "alice", "alice note 3")
        assert alice.count(every) == 3
        # The service asking for another owner gets nothing from the server either.
        from kioku import Kioku

        assert Kioku(alice, user_id="bob").list() == []
        assert made

    with open_postgres_schema(app_role.conninfo, app_role.schema, row_security=True) as wide:
        assert wide.count(every) == 4
        assert wide.get(bob_id) is not None
    # With the option off, sessions are store-wide and the tables keep their security.
    with open_postgres_schema(app_role.conninfo, app_role.schema, owner="alice") as off:
        assert off.count(every) == 4
    with psycopg.connect(app_role.conninfo, autocommit=True) as conn:
        still = conn.execute(
            "SELECT count(*) FROM pg_class WHERE relnamespace = %s::regnamespace "
            "AND relrowsecurity AND relforcerowsecurity",
            (app_role.schema,),
        ).fetchone()
        assert still == (len(OWNER_TABLES),)


def test_the_configuration_binds_a_service_opened_for_one_owner(
    app_role: AppRole, tmp_path: Path
) -> None:
    from kioku import Kioku
    from kioku.ports.store import MemoryFilter

    if app_role.url is None:
        pytest.skip("the test server's URL cannot name another role")
    env = {
        "KIOKU_STORE_URL": app_role.url,
        "KIOKU_STORE__SCHEMA": app_role.schema,
        "KIOKU_STORE__ROW_SECURITY": "true",
    }
    home = tmp_path / "home"
    with Kioku.open(home, env=env, user_id="bob") as bob:
        bob.remember("bob's bicycle", "a new chain", intensity=50, category="work")
    with Kioku.open(home, env=env, user_id="alice", owner_bound=True) as alice:
        alice.remember("alice's garden", "tulips", intensity=50, category="work")
        assert getattr(alice.store, "owner", None) == "alice"
        assert alice.store.count(MemoryFilter()) == 1  # no user filter: the server's doing
    with Kioku.open(home, env=env, user_id="alice") as wide:  # the CLI's: store-wide
        assert getattr(wide.store, "owner", None) is None
        assert wide.store.count(MemoryFilter()) == 2
    with Kioku.open(home, env={**env, "KIOKU_STORE__ROW_SECURITY": "false"}, user_id="alice",
                    owner_bound=True) as unbound:  # fmt: skip
        assert getattr(unbound.store, "owner", None) is None  # the option is off


def test_a_role_that_does_not_own_the_tables_needs_them_secured_first(
    app_role: AppRole,
    postgres_url: str,  # noqa: F811
) -> None:
    from psycopg.conninfo import make_conninfo

    from kioku.adapters.store.postgres import open_postgres_schema
    from kioku.errors import StoreError
    from kioku.ports.store import MemoryFilter

    with open_postgres_schema(app_role.conninfo, app_role.schema) as wide:  # option off
        _remember(wide, "alice", "alice note")
        _remember(wide, "bob", "bob note")
    user = app_role.name + "_user"
    admin(f"CREATE ROLE {user} LOGIN PASSWORD '{ROLE_PASSWORD}' NOSUPERUSER NOBYPASSRLS")
    try:
        for grant in (
            f"GRANT USAGE ON SCHEMA {app_role.schema} TO {user}",
            f"GRANT ALL ON ALL TABLES IN SCHEMA {app_role.schema} TO {user}",
            f"GRANT ALL ON ALL SEQUENCES IN SCHEMA {app_role.schema} TO {user}",
        ):
            admin(grant)
        conninfo = make_conninfo(postgres_url, user=user, password=ROLE_PASSWORD)
        with pytest.raises(StoreError, match="row_security") as refused:
            open_postgres_schema(conninfo, app_role.schema, owner="alice", row_security=True)
        assert "memories" in str(refused.value)
        # The owner turns it on once; then the other role's bound store works.
        open_postgres_schema(app_role.conninfo, app_role.schema, row_security=True).close()
        with open_postgres_schema(
            conninfo, app_role.schema, owner="alice", row_security=True
        ) as alice:
            assert [m.user_id for m in alice.list(MemoryFilter())] == ["alice"]
    finally:
        admin(f"DROP OWNED BY {user}")
        admin(f"DROP ROLE IF EXISTS {user}")
