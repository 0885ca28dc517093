"""MCP over streamable HTTP at ``/mcp`` of a real ``kioku serve``, with the SDK's own client.

Two servers, each started once for the module: one without keys (loopback, the default
owner), and one on a store with keys, for the refusals and for keeping owners apart.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from tests.server.running import Served, make_key, serving

pytest.importorskip("mcp")

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

from tests.integration.test_mcp_stdio import TOOLS, call, refused
from tests.integration.test_mcp_stdio import _resource as resource

ENV = {"KIOKU_NO_AUTO_BATCH": "1", "TZ": "Asia/Tokyo"}
ALICE_FACT = "Alice's locker code is 4417-violet"


@asynccontextmanager
async def connected(url: str, key: str | None = None) -> AsyncIterator[ClientSession]:
    """An initialised MCP session with the server at ``url`` (its ``/mcp`` endpoint)."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(60, read=120)) as client,
        streamable_http_client(url, http_client=client) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        info = await session.initialize()
        assert info.serverInfo.name == "kioku"
        yield session


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    async def main() -> None:
        with anyio.fail_after(120):
            await scenario()

    anyio.run(main)


def _leaves(error: BaseException) -> Iterator[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from _leaves(inner)
    else:
        yield error


# --- a server without keys ---------------------------------------------------------------


@pytest.fixture(scope="module")
def open_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("open") / "home", "--no-ui", env=ENV) as served:
        yield served


def test_every_tool_resource_and_the_prompt_over_http(open_server: Served) -> None:
    url = open_server.url + "mcp"

    async def scenario() -> None:
        async with connected(url) as session:
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert set(listed) == TOOLS
            assert listed["forget"].annotations is not None
            assert listed["forget"].annotations.destructiveHint is True
            assert "ctx" not in json.dumps([t.inputSchema for t in listed.values()])

            fact = await call(
                session,
                "write_memory",
                kind="knowledge",
                text="The staging database is db-stg-2",
                title="staging database",
            )
            found = await call(session, "search_memory", query="staging database")
            assert found["results"][0]["id"] == fact["id"]
            read = await call(session, "read_memory", id=fact["id"])
            assert read["content"] == "The staging database is db-stg-2"
            turn = await call(
                session, "remember_turn", user="I love sushi and I live in Osaka.", session_id="s1"
            )
            assert turn["memory"]["kind"] == "episode"
            primed = await call(session, "prime", message="Where is the staging database?")
            assert fact["id"] in primed["memory_ids"]
            assert (await call(session, "explain", id=turn["id"]))["retention"]["level"] == 1
            assert (await call(session, "protect", id=turn["id"]))["protected"] is True
            deploy = await call(
                session,
                "write_memory",
                kind="procedure",
                text="",
                title="deploy",
                description="release the web app",
                steps=["run the tests", "push the tag"],
            )
            outcome = await call(session, "report_procedure_outcome", id=deploy["id"], success=True)
            assert outcome["details"]["success_count"] == 1

            memory = await resource(session, f"kioku://memory/{fact['id']}")
            assert memory["id"] == fact["id"]
            profile = await resource(session, "kioku://profile/default")
            assert profile["kind"] == "profile"
            with pytest.raises(McpError, match="no profile of 'nobody'"):
                await session.read_resource(AnyUrl("kioku://profile/nobody"))
            got = await session.get_prompt("prime_conversation", {"message": "Do I like sushi?"})
            assert "sushi" in getattr(got.messages[0].content, "text", "")

            text = await refused(session, "forget", id=fact["id"], confirm="yes")
            assert "nothing was erased" in text
            assert "search_memory finds" in await refused(session, "read_memory", id="mem_no")
            assert "top_k" in await refused(session, "search_memory", query="x", top_k="many")
            gone = await call(session, "forget", id=fact["id"], confirm=fact["id"])
            assert gone["forgotten"] == fact["id"]

        # The slash-ended path is the same endpoint, and a new client sees the same memory.
        async with connected(url + "/") as session:
            found = await call(session, "search_memory", query="deploy the web app")
            assert deploy["id"] in [r["id"] for r in found["results"]]

    run(scenario)


def test_only_posts_from_no_web_page_on_a_loopback_name_are_served(open_server: Served) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    with open_server.client() as client:
        cross = client.post("mcp", json=body, headers={**headers, "Origin": "https://evil.test"})
        assert cross.status_code == 403
        assert cross.headers["content-type"] == "application/problem+json"
        rebound = client.post("mcp", json=body, headers={**headers, "Host": "evil.test"})
        assert rebound.status_code == 403  # no keys: loopback host names only
        plain = client.post("mcp", json=body, headers=headers)
        assert plain.status_code == 200
        assert plain.headers["content-type"].startswith("application/json")
        assert {t["name"] for t in plain.json()["result"]["tools"]} == TOOLS
        for method in ("GET", "DELETE"):  # stateless: no stream to open, no session to end
            other = client.request(method, "mcp", headers=headers)
            assert other.status_code == 405
            assert other.headers["allow"] == "POST"


# --- a server with keys ------------------------------------------------------------------


@dataclass
class Keyed:
    served: Served
    alice: str
    bob: str
    alice_reader: str

    @property
    def url(self) -> str:
        return self.served.url + "mcp"


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keyed]:
    home = tmp_path_factory.mktemp("keyed") / "home"
    alice = make_key(home, "alice-app", "alice")
    bob = make_key(home, "bob-app", "bob")
    reader = make_key(home, "alice-reader", "alice", rights="read")
    with serving(home, "--no-ui", env=ENV) as served:
        yield Keyed(served, alice, bob, reader)


def test_no_key_or_a_bad_key_is_refused(keyed: Keyed) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    with keyed.served.client() as anonymous:
        answer = anonymous.post("mcp", json=body, headers=headers)
        assert answer.status_code == 401
        assert answer.headers["content-type"] == "application/problem+json"
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert answer.json()["detail"] == "this server needs an API key"
    with keyed.served.client("kk_00000000_" + "x" * 43) as wrong:
        assert wrong.post("mcp/", json=body, headers=headers).status_code == 401

    async def scenario() -> None:
        for key in (None, "not-a-key"):
            with pytest.raises(BaseExceptionGroup) as caught:  # from the client's task group
                async with connected(keyed.url, key):
                    pass
            statuses = [
                e.response.status_code
                for e in _leaves(caught.value)
                if isinstance(e, httpx.HTTPStatusError)
            ]
            assert statuses == [401], caught.value

    run(scenario)


def test_a_read_only_key_reads_but_writes_nothing(keyed: Keyed) -> None:
    async def scenario() -> None:
        async with connected(keyed.url, keyed.alice) as alice:
            fact = await call(alice, "write_memory", kind="knowledge", text="The cat is Mochi")
        async with connected(keyed.url, keyed.alice_reader) as reader:
            found = await call(reader, "search_memory", query="cat Mochi")
            assert fact["id"] in [r["id"] for r in found["results"]]
            assert (await call(reader, "read_memory", id=fact["id"]))["id"] == fact["id"]
            assert (await call(reader, "explain", id=fact["id"]))["kind"] == "knowledge"
            assert (
                fact["id"]
                in (await call(reader, "prime", message="Is my cat Mochi?"))["memory_ids"]
            )
            assert (await resource(reader, f"kioku://memory/{fact['id']}"))["id"] == fact["id"]

            writes: dict[str, dict[str, Any]] = {
                "write_memory": {"kind": "knowledge", "text": "The dog is Pochi"},
                "remember_turn": {"user": "The dog is Pochi"},
                "report_procedure_outcome": {"id": fact["id"], "success": True},
                "protect": {"id": fact["id"]},
                "forget": {"id": fact["id"], "confirm": fact["id"]},
            }
            for tool, arguments in writes.items():
                text = await refused(reader, tool, **arguments)
                assert "may only read" in text, text
                assert "read-write" in text
        async with connected(keyed.url, keyed.alice) as alice:
            still = await call(alice, "read_memory", id=fact["id"])
            assert still["protected"] is False
            dogs = await call(alice, "search_memory", query="dog Pochi")
            assert not [r for r in dogs["results"] if "Pochi" in r["content"]]

    run(scenario)


def test_one_key_sees_nothing_of_another_owner(keyed: Keyed) -> None:
    async def scenario() -> None:
        async with connected(keyed.url, keyed.alice) as alice:
            fact = await call(alice, "write_memory", kind="knowledge", text=ALICE_FACT)
            turn = await call(alice, "remember_turn", user=f"Remember this: {ALICE_FACT}")
            steps = ["open the locker", "enter 4417-violet"]
            procedure = await call(
                alice,
                "write_memory",
                kind="procedure",
                text="",
                title="locker",
                description="open alice's locker",
                steps=steps,
            )
            mine = await call(alice, "search_memory", query="locker code violet")
            assert fact["id"] in [r["id"] for r in mine["results"]]
        ids = [fact["id"], turn["id"], procedure["id"]]
        protected = {
            fact["id"]: fact["protected"],
            turn["id"]: turn["memory"]["protected"],
            procedure["id"]: procedure["protected"],
        }

        answers: list[str] = []
        async with connected(keyed.url, keyed.bob) as bob:
            for query in ("locker code violet", ALICE_FACT, "4417"):
                found = await call(bob, "search_memory", query=query)
                assert found["results"] == []
                answers.append(json.dumps([found["results"], found["midterm"]]))  # not the query
            primed = await call(bob, "prime", message="What is Alice's locker code?")
            assert not set(ids) & set(primed["memory_ids"])
            answers.append(json.dumps(primed))
            for memory_id in ids:
                for tool, arguments in {
                    "read_memory": {},
                    "explain": {},
                    "protect": {},
                    "report_procedure_outcome": {"success": False},
                    "forget": {"confirm": memory_id},
                }.items():
                    text = await refused(bob, tool, id=memory_id, **arguments)
                    assert "search_memory finds" in text, text
                    answers.append(text)
                with pytest.raises(McpError, match="search_memory finds") as caught:
                    await resource(bob, f"kioku://memory/{memory_id}")
                answers.append(str(caught.value))
            with pytest.raises(McpError, match="no profile of 'alice'") as caught:
                await resource(bob, "kioku://profile/alice")
            answers.append(str(caught.value))
            got = await bob.get_prompt("prime_conversation", {"message": "Alice's locker code?"})
            answers.append(got.model_dump_json())
            own = await call(bob, "write_memory", kind="knowledge", text="Bob's bike is blue")
            assert own["id"] not in ids
        leaked = [answer for answer in answers if "4417" in answer or "violet" in answer]
        assert leaked == []

        async with connected(keyed.url, keyed.alice) as alice:
            for memory_id in ids:
                kept = await call(alice, "read_memory", id=memory_id)  # nothing erased
                assert kept["protected"] is protected[memory_id]  # nor protected by bob
            outcome = await call(alice, "read_memory", id=procedure["id"])
            assert outcome["details"]["failure_count"] == 0
            bikes = await call(alice, "search_memory", query="Bob's bike is blue")
            assert own["id"] not in [r["id"] for r in bikes["results"]]
            assert "bike" not in json.dumps(bikes["results"])

    run(scenario)


def test_several_clients_at_once_each_for_its_own_owner(keyed: Keyed) -> None:
    written: dict[str, list[str]] = {"alice": [], "bob": []}

    async def client(owner: str, key: str, n: int) -> None:
        async with connected(keyed.url, key) as session:
            for i in range(3):
                text = f"{owner} note {n}-{i}: the tea is oolong-{owner}"
                item = await call(session, "write_memory", kind="knowledge", text=text)
                written[owner].append(item["id"])
                await call(session, "search_memory", query=f"tea oolong-{owner}")

    async def scenario() -> None:
        async with anyio.create_task_group() as group:
            for n in range(2):
                group.start_soon(client, "alice", keyed.alice, n)
                group.start_soon(client, "bob", keyed.bob, n)
        for owner, key in (("alice", keyed.alice), ("bob", keyed.bob)):
            other = "bob" if owner == "alice" else "alice"
            async with connected(keyed.url, key) as session:
                found = await call(session, "search_memory", query="tea oolong note", top_k=50)
                ids = {r["id"] for r in found["results"]}
                assert set(written[owner]) <= ids
                assert not ids & set(written[other])
                assert f"oolong-{other}" not in json.dumps(found["results"])

    run(scenario)
