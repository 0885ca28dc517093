"""``kioku keys`` run as a user runs it: a key is printed once, kept hashed, and refused once
revoked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.service.keys import AuthError, verify_key
from tests.cli.conftest import Run

KEY = re.compile(r"kk_[0-9a-f]{8}_[A-Za-z0-9_-]{43}")


@pytest.fixture(autouse=True)
def _store(kioku: Run) -> None:
    """Keys live in an existing store: ``kioku keys`` never creates one."""
    assert kioku("init").code == 0


def _create(kioku: Run, *args: str) -> str:
    result = kioku("keys", "create", *args)
    assert result.code == 0, result.err
    assert KEY.fullmatch(result.out.strip()), result.out
    assert "not shown again" in result.err
    return result.out.strip()


def test_a_key_is_printed_once_and_verifies(kioku: Run, home: Path) -> None:
    plain = _create(kioku, "laptop", "--key-agent", "bot", "--rights", "read")
    listed = kioku("keys", "list")
    assert listed.code == 0, listed.err
    assert plain[:11] in listed.out
    assert "laptop" in listed.out
    assert "read" in listed.out
    assert plain not in listed.out
    assert plain[12:] not in listed.out
    as_json = kioku("keys", "list", "--json")
    assert as_json.code == 0, as_json.err
    [entry] = as_json.json()
    assert entry["id"] == plain[:11]
    assert entry["agent_id"] == "bot"
    assert entry["rights"] == "read"
    assert entry["last_used"] is None
    assert plain[12:] not in as_json.out
    assert "hash" not in as_json.out

    with Kioku.open(home, env={}) as engine:
        grant = verify_key(engine, plain)
        assert grant.agent_id == "bot"
        assert grant.rights == "read"
        assert grant.user_id == engine.user_id
        for wrong in (plain[:-1] + ("A" if plain[-1] != "A" else "B"), "garbage", "", plain[:11]):
            with pytest.raises(AuthError):
                verify_key(engine, wrong)
    used = kioku("keys", "list", "--json").json()
    assert used[0]["last_used"] is not None


def test_create_defaults_to_the_command_scope(kioku: Run) -> None:
    result = kioku("--user", "carol", "--agent", "helper", "keys", "create", "ci", "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert KEY.fullmatch(data["key"])
    assert (data["user_id"], data["agent_id"], data["rights"]) == ("carol", "helper", "read-write")


def test_a_revoked_key_is_refused(kioku: Run, home: Path) -> None:
    plain = _create(kioku, "old")
    revoked = kioku("keys", "revoke", plain[:11])
    assert revoked.code == 0, revoked.err
    assert kioku("keys", "list", "--json").json() == []
    [entry] = kioku("keys", "list", "--all", "--json").json()
    assert entry["revoked"] is not None
    with Kioku.open(home, env={}) as engine, pytest.raises(AuthError):
        verify_key(engine, plain)
    again = kioku("keys", "revoke", plain[:11])
    assert again.code == 2
    assert "kioku keys list" in again.err


def test_bad_input_exits_2(kioku: Run) -> None:
    assert kioku("keys", "create", "x", "--rights", "admin").code == 2
    assert kioku("keys", "create", "", "--rights", "read").code == 2
    assert kioku("keys", "create", "a" * 81).code == 2
    assert kioku("keys", "create", "x", "--key-user", " ").code == 2
    unknown = kioku("keys", "revoke", "kk_00000000")
    assert unknown.code == 2
    assert "kioku keys list" in unknown.err
    assert kioku("keys", "list", "--json").json() == []


def test_keys_never_create_a_store(tmp_path: Path) -> None:
    from tests.cli.conftest import run_kioku

    missing = tmp_path / "nowhere"
    result = run_kioku("--home", str(missing), "keys", "create", "x")
    assert result.code == 2
    assert "kioku init" in result.err
    assert not (missing / "memories.db").exists()
