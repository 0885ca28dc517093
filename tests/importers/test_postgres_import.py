"""The importers and the JSON export on PostgreSQL: the same commands, a store on a server."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.importers.conftest import FIXTURES, Cli, copy_fixture
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)


@pytest.fixture
def on_postgres(
    postgres_url: str,  # noqa: F811
    tmp_path: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Cli]:
    """``cli`` with its store in a schema of its own on the session's server."""
    schema = "imp_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    monkeypatch.setenv("KIOKU_STORE_URL", postgres_url)
    monkeypatch.setenv("KIOKU_STORE__SCHEMA", schema)
    try:
        yield cli
    finally:
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_imports_are_counted_repeatable_and_exported_by_owner_on_postgres(
    on_postgres: Cli, home: Path, tmp_path: Path
) -> None:
    cli = on_postgres
    notes = copy_fixture("notes", tmp_path)
    chats = str(FIXTURES / "chatgpt")
    first = cli("--user", "alice", "import", "--from", "markdown", str(notes), "--json")
    assert first.code == 0, first.err
    assert (first.json()["knowledge"], first.json()["procedures"]) == (3, 1)
    chat = cli("--user", "bob", "import", "--from", "chatgpt", chats, "--json")
    assert chat.code == 0, chat.err
    assert chat.json()["episodes"] == 3
    dry = cli("--user", "alice", "import", "--from", "markdown", str(notes), "--dry-run", "--json")
    assert (dry.json()["created"], dry.json()["skipped"]) == (0, 4)
    again = cli("--user", "bob", "import", "--from", "chatgpt", chats, "--json")
    assert (again.json()["created"], again.json()["skipped"]) == (0, 3)
    alice = cli("export", "--user", "alice", "--format", "json").json()
    assert sorted(m["kind"] for m in alice["memories"]) == ["knowledge"] * 3 + ["procedure"]
    assert all(m["scope"]["user_id"] == "alice" for m in alice["memories"])
    bob = cli("export", "--user", "bob", "--format", "json").json()
    assert [m["kind"] for m in bob["memories"]] == ["episode"] * 3
    assert not (home / "memories.db").exists()  # all of it on the server
