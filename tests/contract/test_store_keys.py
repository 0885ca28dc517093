"""The Store contract for schema version 10: the server's API keys.

A key is kept as its id and the SHA-256 of the whole key; the key itself never reaches the
store's files (the tests read their raw bytes). A store of version 9 opens with its data.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import cast

import pytest

from kioku.adapters.clock import FixedClock
from kioku.errors import KiokuError
from kioku.ports.store import ApiKey, Store
from kioku.service import keys
from kioku.service.engine import Engine
from tests.contract.conftest import BASE_TIME, build_memory


@dataclass
class _Engine:
    store: Store
    clock: FixedClock


def _engine(store: Store) -> Engine:
    return cast("Engine", _Engine(store, FixedClock(BASE_TIME)))


def _key(n: int = 1, **fields: object) -> ApiKey:
    values: dict[str, object] = {
        "id": f"kk_{n:08x}",
        "name": f"key {n}",
        "secret_hash": hashlib.sha256(f"kk_{n:08x}_secret".encode()).hexdigest(),
        "user_id": "alice",
        "agent_id": "default",
        "rights": "read",
        "created_at": BASE_TIME + timedelta(minutes=n),
    }
    values.update(fields)
    return ApiKey(**values)  # type: ignore[arg-type]


def test_a_key_round_trips(store: Store) -> None:
    key = _key(1, rights="read-write")
    store.add_key(key)
    assert store.key_by_id(key.id) == key
    assert store.keys(include_revoked=False) == [key]
    assert store.key_by_id("kk_ffffffff") is None


def test_a_second_key_with_the_same_id_is_refused(store: Store) -> None:
    store.add_key(_key(1))
    with pytest.raises(KiokuError):
        store.add_key(_key(1, name="again"))
    assert [k.name for k in store.keys(include_revoked=False)] == ["key 1"]


def test_revoked_keys_are_listed_only_when_asked(store: Store) -> None:
    first, second = _key(1), _key(2)
    store.add_key(first)
    store.add_key(second)
    at = BASE_TIME + timedelta(hours=1)
    assert store.revoke_key(first.id, at) is True
    assert store.revoke_key(first.id, at) is False
    assert store.revoke_key("kk_ffffffff", at) is False
    assert [k.id for k in store.keys(include_revoked=False)] == [second.id]
    assert [k.id for k in store.keys(include_revoked=True)] == [first.id, second.id]
    revoked = store.key_by_id(first.id)
    assert revoked is not None
    assert revoked.revoked_at == at


def test_touch_marks_the_last_use(store: Store) -> None:
    store.add_key(_key(1))
    at = BASE_TIME + timedelta(days=1)
    store.touch_key("kk_00000001", at)
    touched = store.key_by_id("kk_00000001")
    assert touched is not None
    assert touched.last_used_at == at


def test_the_store_rejects_unknown_rights(store: Store) -> None:
    with pytest.raises(KiokuError):
        store.add_key(_key(1, rights="admin"))
    assert store.keys(include_revoked=True) == []


def test_created_keys_are_kept_hashed_and_verify(store: Store) -> None:
    engine = _engine(store)
    key, plain = keys.create_key(engine, "ci", "alice", "bot", "read")
    prefix, secret = plain[:11], plain[12:]
    assert key.id == prefix
    assert plain[11] == "_"
    assert len(secret) == 43
    kept = store.key_by_id(key.id)
    assert kept is not None
    assert kept.secret_hash == hashlib.sha256(plain.encode()).hexdigest() != plain
    assert secret not in kept.secret_hash
    grant = keys.verify_key(engine, plain)
    assert (grant.user_id, grant.agent_id, grant.rights) == ("alice", "bot", "read")
    used = store.key_by_id(key.id)
    assert used is not None
    assert used.last_used_at == BASE_TIME


def test_the_key_text_never_reaches_the_files(tmp_path: Path) -> None:
    from kioku.adapters.store.sqlite import open_sqlite_store

    path = tmp_path / "kioku" / "memories.db"
    secrets_made = []
    with open_sqlite_store(path) as store:
        engine = _engine(store)
        for n in range(3):
            _, plain = keys.create_key(engine, f"key {n}", "alice", "default")
            secrets_made.append(plain.split("_", 2)[2])
        keys.revoke_key(engine, store.keys(include_revoked=False)[0].id)
        raw = b"".join(p.read_bytes() for p in path.parent.iterdir() if p.is_file())
        for secret in secrets_made:
            assert secret.encode() not in raw
    raw = b"".join(p.read_bytes() for p in path.parent.iterdir() if p.is_file())
    assert b"kk_" in raw
    for secret in secrets_made:
        assert secret.encode() not in raw


def test_a_version_9_store_opens_with_its_data(tmp_path: Path) -> None:
    from kioku.adapters.store.sqlite import open_sqlite_store, search
    from kioku.adapters.store.sqlite.codec import MEMORY_COLUMNS, encode_memory
    from kioku.adapters.store.sqlite.connection import connect
    from kioku.adapters.store.sqlite.migrations import LATEST_VERSION, migrate

    memory = build_memory(1, content="an old heron episode")
    path = tmp_path / "kioku" / "memories.db"
    path.parent.mkdir(mode=0o700)
    conn = connect(path, 1000)
    try:
        assert migrate(conn, target=9)[-1] == 9
        conn.execute("BEGIN")
        conn.execute(
            f"INSERT INTO memories ({', '.join(MEMORY_COLUMNS)}) "
            f"VALUES ({', '.join('?' for _ in MEMORY_COLUMNS)})",
            encode_memory(memory),
        )
        terms = search.terms_text(memory.trigger, memory.content, memory.keywords)
        search.put_many(conn, [(memory.id, terms)])
        conn.execute("INSERT INTO state (key, value) VALUES ('last_run', 'x')")
        conn.execute("COMMIT")
    finally:
        conn.close()
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("PRAGMA user_version").fetchone() == (9,)
    finally:
        raw.close()

    with open_sqlite_store(path) as store:
        assert store.schema_version == LATEST_VERSION >= 10
        assert store.get(memory.id) == memory
        assert store.get_state("last_run") == "x"
        assert store.keys(include_revoked=True) == []
        store.add_key(_key(1))
        assert [k.id for k in store.keys(include_revoked=False)] == ["kk_00000001"]
        report = store.check_integrity()
        assert (report.ok, report.schema_version) == (True, LATEST_VERSION), report.problems


def test_delete_keys_takes_every_key_of_one_user(store: Store) -> None:
    store.add_key(_key(1))
    store.add_key(_key(2))
    store.revoke_key("kk_00000002", BASE_TIME + timedelta(hours=1))
    store.add_key(_key(3, user_id="bob"))
    assert store.delete_keys("alice") == 2
    assert [k.id for k in store.keys(include_revoked=True)] == ["kk_00000003"]
    assert store.delete_keys("alice") == 0
