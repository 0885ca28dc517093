"""One owner's key never reaches another owner's memories, on every route of the API.

The routes are listed from the server's own OpenAPI document, so a route added without a
case here fails :func:`test_every_route_has_a_case`. Alice and Bob are two users with
read-write keys; Alice also has a read-only key. Bob's key must find nothing of Alice's
(her ids are 404 to him, her text appears in none of his answers); the read-only key is
refused (403) on every writing route and writes nothing; no key, or a revoked one, is 401.

The suite runs twice: on the home's SQLite file, and on a schema of its own on the test
PostgreSQL server (``tests/postgres_server.py``), named by ``KIOKU_STORE_URL``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.postgres_server import postgres_url  # noqa: F401 (a fixture)
from tests.server.running import Served, kioku, make_key, serving

#: A word only Alice's memories hold.
MARK = "periwinkle"
#: POST routes that only read (recall and prime leave no trace for a read-only key).
READING_POSTS = frozenset({"/v1/search", "/v1/recall", "/v1/prime"})
#: Routes anyone may call: they tell nothing about memories.
PUBLIC = frozenset({"/v1/health", "/v1/problems"})


@dataclass
class World:
    served: Served
    keys: dict[str, str]
    alice_ids: list[str] = field(default_factory=list)
    alice_profile: str = "Rosalind"
    revoked: str = ""


def _ok(answer: httpx.Response, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    """The server with its owners, on the home's SQLite file or on a fresh schema of the
    test PostgreSQL server (``KIOKU_STORE_URL``)."""
    home = tmp_path_factory.mktemp("isolation") / "home"
    with store_env(request, home) as env:
        yield from _world(home, env)


@contextlib.contextmanager
def store_env(request: pytest.FixtureRequest, home: Path) -> Iterator[dict[str, str] | None]:
    """No environment for ``sqlite``; for ``postgres``, KIOKU_STORE_URL and a schema of its
    own (dropped afterwards)."""
    if request.param == "sqlite":
        yield None
        return
    url = request.getfixturevalue("postgres_url")
    from tests.postgres_server import admin

    schema = "srv_" + hashlib.blake2b(str(home).encode(), digest_size=8).hexdigest()
    try:
        yield {
            "KIOKU_STORE_URL": url,
            "KIOKU_STORE__SCHEMA": schema,
            "KIOKU_NO_AUTO_BATCH": "1",
        }
    finally:
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _world(home: Path, env: dict[str, str] | None) -> Iterator[World]:
    keys = {
        "alice": make_key(home, "alice", "alice", env=env),
        "alice_ro": make_key(home, "alice-ro", "alice", "read", env=env),
        "bob": make_key(home, "bob", "bob", env=env),
        "carol": make_key(home, "carol", "carol", env=env),
        "dave": make_key(home, "dave", "dave", env=env),
    }
    revoked = kioku(home, "keys", "revoke", keys["dave"][:11], env=env)
    assert revoked.returncode == 0, revoked.stderr
    with serving(home, "--no-ui", env=env) as served:
        w = World(served, keys, revoked=keys["dave"])
        with served.client(keys["alice"]) as alice:
            turn = {"user": f"My {MARK} garden has tulips", "session_id": "alice-s"}
            w.alice_ids.append(_ok(alice.post("v1/turns", json=turn), 201)["id"])
            for kind, extra in (
                ("knowledge", {}),
                ("procedure", {"description": f"tend the {MARK} beds", "steps": ["water"]}),
                ("episode", {}),
            ):
                body = {"kind": kind, "text": f"{MARK} fact of kind {kind}", **extra}
                w.alice_ids.append(_ok(alice.post("v1/memories", json=body), 201)["id"])
            profile = {"likes": [f"{MARK} tea"], "aliases": ["Roz"]}
            w.alice_ids.append(_ok(alice.patch("v1/profiles/Rosalind", json=profile))["id"])
        with served.client(keys["bob"]) as bob:
            _ok(bob.post("v1/turns", json={"user": "Bob fixed his bicycle chain"}), 201)
            _ok(bob.post("v1/memories", json={"kind": "knowledge", "text": "Bob likes jazz"}), 201)
        assert (home / "memories.db").exists() == (env is None)  # the store asked for, only
        yield w


def _procedure_of(world: World) -> str:
    return world.alice_ids[2]


def _cases(world: World) -> dict[tuple[str, str], dict[str, Any]]:
    """A request for every route: its path with Alice's ids in it, its body and query."""
    mid = world.alice_ids[1]
    memory = f"/v1/memories/{mid}"
    return {
        ("GET", "/v1/health"): {},
        ("GET", "/v1/problems"): {},
        ("GET", "/v1/memories"): {"params": {"limit": 500}},
        ("POST", "/v1/memories"): {"json": {"kind": "knowledge", "text": "a new fact"}},
        ("GET", "/v1/memories/{memory_id}"): {"path": memory},
        ("PATCH", "/v1/memories/{memory_id}"): {"path": memory, "json": {"content": "hacked"}},
        ("DELETE", "/v1/memories/{memory_id}"): {"path": memory, "params": {"confirm": mid}},
        ("POST", "/v1/memories/{memory_id}/read"): {"path": f"{memory}/read"},
        ("POST", "/v1/memories/{memory_id}/protect"): {"path": f"{memory}/protect"},
        ("DELETE", "/v1/memories/{memory_id}/protect"): {"path": f"{memory}/protect"},
        ("GET", "/v1/memories/{memory_id}/explain"): {"path": f"{memory}/explain"},
        ("GET", "/v1/memories/{memory_id}/history"): {"path": f"{memory}/history"},
        ("POST", "/v1/memories/{memory_id}/outcome"): {
            "path": f"/v1/memories/{_procedure_of(world)}/outcome",
            "json": {"success": True},
        },
        ("POST", "/v1/turns"): {"json": {"user": "a new turn about sailing"}},
        ("POST", "/v1/recall"): {"json": {"query": f"{MARK} garden tulips"}},
        ("POST", "/v1/prime"): {"json": {"message": f"How is the {MARK} garden?"}},
        ("POST", "/v1/search"): {"json": {"query": MARK}},
        ("GET", "/v1/profiles"): {},
        ("GET", "/v1/profiles/{person}"): {"path": f"/v1/profiles/{world.alice_profile}"},
        ("PATCH", "/v1/profiles/{person}"): {
            "path": f"/v1/profiles/{world.alice_profile}",
            "json": {"likes": ["sardines"]},
        },
        ("GET", "/v1/stats"): {},
        ("GET", "/v1/mood"): {"params": {"days": 30}},
        ("GET", "/v1/activity"): {"params": {"limit": 1000}},
        ("GET", "/v1/lifecycle"): {"params": {"limit": 1000}},
        ("GET", "/v1/lifecycle/summary"): {},
        ("GET", "/v1/midterm"): {},
        ("GET", "/v1/resolutions"): {},
        ("GET", "/v1/export"): {},
        ("GET", "/v1/batch"): {},
        ("POST", "/v1/batch"): {"json": {"dry_run": True}},
        ("GET", "/v1/consolidation"): {},
        ("POST", "/v1/consolidation"): {"json": {"dry_run": True}},
        ("POST", "/v1/erasure/plan"): {},
        ("POST", "/v1/erasure"): {"json": {"token": "not-a-token"}},
    }


def _routes(world: World) -> list[tuple[str, str]]:
    with world.served.client() as anonymous:
        document = _ok(anonymous.get("v1/openapi.json"))
    return sorted(
        (method.upper(), path)
        for path, item in document["paths"].items()
        if path.startswith("/v1/")
        for method in item
    )


def _send(client: httpx.Client, method: str, route: str, case: dict[str, Any]) -> httpx.Response:
    path = str(case.get("path", route)).lstrip("/")
    return client.request(method, path, json=case.get("json"), params=case.get("params"))


def _without_echo(text: str, case: dict[str, Any]) -> str:
    """``text`` without the strings the request itself sent (a query is echoed back)."""
    sent = [v for v in (case.get("json") or {}).values() if isinstance(v, str)]
    for value in sent:
        text = text.replace(value, "<sent>")
    return text


def _writes(method: str, route: str) -> bool:
    return method != "GET" and route not in READING_POSTS


def _alice_export(world: World) -> list[dict[str, Any]]:
    with world.served.client(world.keys["alice"]) as alice:
        answer = alice.get("v1/export")
        assert answer.status_code == 200
        return sorted((json.loads(line) for line in answer.text.splitlines()), key=str)


def test_every_route_has_a_case(world: World) -> None:
    missing = set(_routes(world)) - set(_cases(world))
    assert not missing, f"routes without an isolation case: {sorted(missing)}"


def test_bob_gets_nothing_of_alice(world: World) -> None:
    before = _alice_export(world)
    cases = _cases(world)
    with world.served.client(world.keys["bob"]) as bob:
        for method, route in _routes(world):
            answer = _send(bob, method, route, cases[(method, route)])
            where = f"{method} {route}: {answer.status_code} {answer.text[:200]}"
            assert answer.status_code < 500, where
            text = _without_echo(answer.text, cases[(method, route)])
            if "{memory_id}" in route or (method == "GET" and "{person}" in route):
                assert answer.status_code == 404, where
                asked = str(cases[(method, route)]["path"]).split("/")[3]
                text = text.replace(asked, "<asked>")  # the 404 names the id Bob sent
            assert MARK not in text.lower(), where
            assert not any(mid in text for mid in world.alice_ids), where
    after = _alice_export(world)
    assert after == before


def test_bob_answers_hold_his_own_memories(world: World) -> None:
    with world.served.client(world.keys["bob"]) as bob:
        listed = _ok(bob.get("v1/memories", params={"limit": 500}))["items"]
        assert listed
        assert all(m["user_id"] == "bob" for m in listed)
        assert _ok(bob.post("v1/erasure/plan"))["user_id"] == "bob"
        refused = bob.post("v1/batch", json={"dry_run": True})
        assert refused.status_code == 403


def test_read_only_key_writes_nothing(world: World) -> None:
    before = _alice_export(world)
    cases = _cases(world)
    with world.served.client(world.keys["alice_ro"]) as reader:
        for method, route in _routes(world):
            answer = _send(reader, method, route, cases[(method, route)])
            where = f"{method} {route}: {answer.status_code} {answer.text[:200]}"
            if _writes(method, route):
                assert answer.status_code == 403, where
                assert answer.headers["content-type"] == "application/problem+json", where
            else:
                assert answer.status_code in {200, 404}, where
        mine = _ok(reader.post("v1/search", json={"query": MARK}))
        assert {r["id"] for r in mine["results"]} >= set(world.alice_ids[:4])
    assert _alice_export(world) == before


@pytest.mark.parametrize("who", ["nobody", "revoked", "garbage"])
def test_without_a_valid_key_only_public_routes_answer(world: World, who: str) -> None:
    key = {"nobody": None, "revoked": world.revoked, "garbage": "kk_12345678_" + "A" * 43}[who]
    cases = _cases(world)
    with world.served.client(key) as client:
        for method, route in _routes(world):
            answer = _send(client, method, route, cases[(method, route)])
            where = f"{method} {route}: {answer.status_code}"
            if route in PUBLIC:
                assert answer.status_code == 200, where
                assert MARK not in answer.text.lower()
            else:
                assert answer.status_code == 401, where
                assert answer.json()["type"] == "/v1/problems#unauthorized", where


def test_erasure_erases_the_callers_user_and_deletes_its_keys(world: World) -> None:
    alice_before = _alice_export(world)
    with world.served.client(world.keys["carol"]) as carol:
        written = _ok(carol.post("v1/turns", json={"user": "Carol's secret recipe"}), 201)
        plan = _ok(carol.post("v1/erasure/plan"))
        assert plan["user_id"] == "carol"
        assert plan["memories"] >= 1
        done = _ok(carol.post("v1/erasure", json={"token": plan["token"]}))
        assert written["id"] in done["memory_ids"]
        assert done["api_keys_deleted"] == 1
        again = carol.get("v1/memories")
        assert again.status_code == 401
    keys = kioku(world.served.home, "keys", "list", "--all", "--json", env=world.served.env)
    assert keys.returncode == 0, keys.stderr
    assert world.keys["carol"][:11] not in keys.stdout
    assert _alice_export(world) == alice_before
