#!/usr/bin/env python3
"""Anthropic's memory tool, kept in kioku: the model's /memories files become knowledge,
procedures and profiles that kioku searches, primes and keeps.

It runs offline: a small stand-in for the Messages API on 127.0.0.1 plays a model that
calls the memory tool, and the ``anthropic`` SDK's own tool runner runs those calls on
:class:`kioku.integrations.anthropic_memory.KiokuMemoryTool`. The kioku home is a new
temporary directory, removed at the end. With a real model, create the client with your
API key instead and keep the rest.

    python examples/anthropic_memory_tool.py
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anthropic
from anthropic.lib.tools import ToolError

from kioku import Kioku
from kioku.core.kinds import ProcedureDetails
from kioku.integrations.anthropic_memory import KiokuMemoryTool


def memory(n: int, **command: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"toolu_{n}", "name": "memory", "input": command}]


#: What the stand-in model does, one reply per request.
SCRIPT = [
    memory(1, command="view", path="/memories"),
    memory(
        2,
        command="create",
        path="/memories/knowledge/staging database.md",
        file_text="The staging database is db-stg-2 (PostgreSQL 16).\n",
    ),
    memory(
        3,
        command="create",
        path="/memories/procedures/deploy.md",
        file_text="# Release the web app\n1. run the tests\n2. tag the release\n3. push the tag\n",
    ),
    memory(4, command="create", path="/memories/users/Aiko.md", file_text="residence: Osaka"),
    memory(
        5,
        command="str_replace",
        path="/memories/knowledge/staging database.md",
        old_str="db-stg-2",
        new_str="db-stg-3",
    ),
    memory(6, command="view", path="/memories/knowledge/staging database.md"),
    memory(7, command="view", path="/memories/../../etc/passwd"),
    [{"type": "text", "text": "I will remember that the staging database is db-stg-3."}],
]


class StandInModel(BaseHTTPRequestHandler):
    """Answers each POST /v1/messages with the next reply of SCRIPT."""

    replies: ClassVar[list[list[dict[str, Any]]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        content = self.replies.pop(0)
        reply = {
            "id": f"msg_{len(SCRIPT) - len(self.replies)}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use" if content[-1]["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class ShownMemoryTool(KiokuMemoryTool):
    """KiokuMemoryTool, printing each call the SDK makes and the first lines of the answer."""

    def call(self, input: object) -> Any:
        assert isinstance(input, dict)
        where = input.get("path") or f"{input.get('old_path')} -> {input.get('new_path')}"
        print(f"model > memory {input['command']} {where}")
        try:
            result = super().call(input)
        except ToolError as exc:
            print(f"kioku ! {exc.content}")
            raise
        for line in str(result).split("\n")[:6]:
            print(f"kioku < {line}")
        return result


def main() -> None:
    StandInModel.replies = list(SCRIPT)
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandInModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = Path(tempfile.mkdtemp(prefix="kioku-example-"))
    try:
        with Kioku.open(home / "kioku", env={}) as kioku:
            client = anthropic.Anthropic(
                base_url=f"http://127.0.0.1:{server.server_address[1]}",
                api_key="offline-example",
                max_retries=0,
            )
            runner = client.beta.messages.tool_runner(
                model="claude-example",
                max_tokens=1024,
                messages=[{"role": "user", "content": "Staging moved to db-stg-3."}],
                tools=[ShownMemoryTool(kioku)],
            )
            final = runner.until_done()
            print(f"model: {final.content[0].text}")  # type: ignore[union-attr]

            print("\nwhat kioku keeps:")
            for item in sorted(kioku.list(kind=None), key=lambda m: m.kind.value):
                print(f"  {item.kind.value:<9} {item.trigger!r}: {item.content.strip()!r}")
                if isinstance(item.details, ProcedureDetails):
                    print(f"            steps: {list(item.details.steps)}")
            hits = kioku.search_memory("staging database").items
            print(f"search 'staging database' -> {hits[0].memory.kind.value} {hits[0].memory.id}")
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
