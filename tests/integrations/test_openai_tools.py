"""The deliberate-recall tools as function-calling schemas, and the dispatcher that runs them.

The schemas are valid JSON schemas and say what the MCP server's tools say (names, titles,
descriptions, parameters), since both come from one definition. The real ``openai`` client
talks to a scripted Chat Completions server on loopback; the tool calls it returns are run
by the dispatcher on a real home, and the answers go back to the model.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.integrations import openai_tools
from kioku.integrations.tool_schemas import TOOLS, ToolCallError, call, run

NOW = datetime(2026, 11, 27, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
WRITING = {"write_memory", "report_procedure_outcome", "remember_turn"}


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        yield k


def test_the_schemas_are_valid_and_name_every_recall_tool() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    tools = openai_tools.chat_tools()
    names = [t["function"]["name"] for t in tools]
    assert names == list(TOOLS)
    assert {"search_memory", "read_memory", "prime", "explain"} <= set(names)
    for tool in tools:
        assert tool["type"] == "function"
        schema = tool["function"]["parameters"]
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert len(tool["function"]["description"]) > 80
    read_only = [t["function"]["name"] for t in openai_tools.chat_tools(writes=False)]
    assert read_only == [n for n in names if n not in WRITING]
    flat = openai_tools.response_tools(["search_memory"])
    assert flat == [{"type": "function", **tools[0]["function"]}]
    search = tools[0]["function"]["parameters"]
    validator = jsonschema.Draft202012Validator(search)
    assert validator.is_valid({"query": "x", "kinds": ["knowledge"], "top_k": 5})
    assert not validator.is_valid({"query": "x", "kinds": ["dream"]})
    assert not validator.is_valid({"top_k": 5})


def test_the_mcp_server_offers_the_same_tools() -> None:
    pytest.importorskip("mcp")
    from kioku.interfaces.mcp.server import build_server

    app = build_server(runner=None)  # type: ignore[arg-type]  # listing runs no call
    listed = {t.name: t for t in asyncio.run(app.list_tools())}
    for name, tool in TOOLS.items():
        offered = listed[name]
        assert offered.title == tool.title
        assert offered.description == tool.description
        assert bool(offered.annotations and offered.annotations.readOnlyHint) == (
            tool.effect == "reading"
        )
        shared = tool.parameters()
        schema = offered.inputSchema
        assert list(schema["properties"]) == list(shared["properties"]), name
        assert sorted(schema.get("required", [])) == sorted(shared["required"]), name
        for pname, prop in shared["properties"].items():
            theirs = schema["properties"][pname]
            assert theirs["description"] == prop["description"], (name, pname)
            assert theirs.get("default") == prop.get("default"), (name, pname)
            types = {theirs.get("type")} | {a.get("type") for a in theirs.get("anyOf", [])}
            assert prop["type"] in types, (name, pname)


def test_the_dispatcher_answers_json_and_names_what_is_wrong(kioku: Kioku) -> None:
    written = json.loads(
        call(kioku, "write_memory", '{"kind": "knowledge", "text": "The VPN gate is gw-7."}')
    )
    assert written["kind"] == "knowledge"
    found = json.loads(call(kioku, "search_memory", {"query": "VPN gate", "kinds": ["knowledge"]}))
    assert [r["id"] for r in found["results"]] == [written["id"]]
    assert found["results"][0]["content"] == "The VPN gate is gw-7."
    read = json.loads(call(kioku, "read_memory", {"id": written["id"]}))
    assert read["content"] == "The VPN gate is gw-7."

    bad = json.loads(call(kioku, "search_memory", {"top_k": "ten", "colour": "red"}))
    assert set(bad) == {"error"}
    for part in ("colour: not a parameter", "query: required", "top_k: expected a whole number"):
        assert part in bad["error"]
    assert "no tool 'forget'" in json.loads(call(kioku, "forget", {}))["error"]
    assert "not valid JSON" in json.loads(call(kioku, "prime", "{oops"))["error"]
    missing = json.loads(call(kioku, "read_memory", {"id": "mem_20200101_000000_00000000"}))
    assert "search_memory finds the ids" in missing["error"]
    plain = {"id": "c1", "function": {"name": "explain", "arguments": json.dumps(read)}}
    message = openai_tools.answer(kioku, plain)
    assert (message["role"], message["tool_call_id"]) == ("tool", "c1")
    assert "not a parameter of explain" in json.loads(message["content"])["error"]
    plain["function"]["arguments"] = json.dumps({"id": written["id"]})
    assert json.loads(openai_tools.answer(kioku, plain)["content"])["id"] == written["id"]
    refused = openai_tools.answer(kioku, {"id": "c2", "function": {"name": "remember_turn",
                                  "arguments": '{"user": "hi"}'}}, read_only=True)  # fmt: skip
    assert "may only read" in json.loads(refused["content"])["error"]
    with pytest.raises(ToolCallError, match="may only read"):
        run(kioku, "remember_turn", {"user": "hi"}, read_only=True)
    assert len(kioku.list(kind=None)) == 1


def test_the_dispatcher_answers_as_the_mcp_server_does(kioku: Kioku) -> None:
    pytest.importorskip("mcp")
    from kioku.interfaces.mcp.server import Local, build_server

    memory = kioku.write_memory("knowledge", "Lunch is at noon.", title="lunch")
    app = build_server(Local(kioku))
    content, _ = asyncio.run(app.call_tool("read_memory", {"id": memory.id}))  # type: ignore[misc]
    via_mcp = json.loads(content[0].text)
    via_call = json.loads(call(kioku, "read_memory", {"id": memory.id}))
    for volatile in ("last_access", "recall_count", "recalled_since_last_batch", "updated_at"):
        via_mcp.pop(volatile, None)
        via_call.pop(volatile, None)
    assert via_call == via_mcp


class ScriptedChat:
    """A Chat Completions API on loopback answering with scripted assistant messages."""

    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        chat = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                chat.requests.append({"path": self.path, **body})
                message = chat.replies.pop(0)
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                answer = json.dumps(
                    {
                        "id": f"chatcmpl-{len(chat.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def calls(*items: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for n, (name, args) in enumerate(items)
        ],
    }


def test_the_openai_client_runs_kiokus_tools(kioku: Kioku) -> None:
    openai = pytest.importorskip("openai")
    fact = {
        "kind": "knowledge",
        "text": "The release train leaves on Thursdays.",
        "title": "trains",
    }
    chat = ScriptedChat(
        [
            calls(("write_memory", fact)),
            calls(("search_memory", {"query": "release train"}), ("read_memory", {"id": "nope"})),
            {"role": "assistant", "content": "Thursdays."},
        ]
    )
    try:
        client = openai.OpenAI(base_url=chat.url, api_key="test-key", max_retries=0)
        messages: list[Any] = [
            {"role": "system", "content": openai_tools.INSTRUCTIONS},
            {"role": "user", "content": "When does the release train leave?"},
        ]
        for _ in range(5):
            reply = (
                client.chat.completions.create(
                    model="gpt-test", messages=messages, tools=openai_tools.chat_tools()
                )
                .choices[0]
                .message
            )
            messages.append(reply)
            if not reply.tool_calls:
                break
            messages += openai_tools.answers(kioku, reply.tool_calls)
    finally:
        chat.close()
    assert reply.content == "Thursdays."
    assert [r["path"] for r in chat.requests] == ["/v1/chat/completions"] * 3
    assert chat.requests[0]["tools"] == openai_tools.chat_tools()
    sent = chat.requests[2]["messages"]
    tool_messages = [m for m in sent if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0", "call_0", "call_1"]
    stored = json.loads(tool_messages[0]["content"])
    memory = kioku.get(stored["id"])
    assert (memory.kind.value, memory.trigger) == ("knowledge", "trains")
    assert memory.content == fact["text"]
    found = json.loads(tool_messages[1]["content"])
    assert found["results"][0]["id"] == memory.id
    assert "error" in json.loads(tool_messages[2]["content"])
