#!/usr/bin/env python3
"""kioku's deliberate-recall tools in an OpenAI-compatible function-calling loop.

It runs offline: a small stand-in for the Chat Completions API on 127.0.0.1 plays a model
that calls the tools, the real ``openai`` client sends kioku's schemas as ``tools=``, and
:func:`kioku.integrations.openai_tools.answers` runs each call on kioku. The kioku home is a
new temporary directory, removed at the end. With a real model (or any server that speaks
the same API), create the client with its URL and key instead and keep the rest.

    python examples/openai_tools.py
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import openai

from kioku import Kioku
from kioku.integrations import openai_tools


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{name}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for name, arguments in calls
        ],
    }


#: What the stand-in model does, one reply per request.
SCRIPT = [
    tool_calls(("search_memory", {"query": "release train", "top_k": 3})),
    tool_calls(
        (
            "write_memory",
            {
                "kind": "procedure",
                "title": "ship a release",
                "text": "How the web app is shipped",
                "description": "[release] ship the web app on the Thursday train",
                "steps": ["freeze on Wednesday", "tag on Thursday", "announce"],
            },
        )
    ),
    {"role": "assistant", "content": "The release train leaves on Thursdays; noted the steps."},
]


class StandInModel(BaseHTTPRequestHandler):
    """Answers each POST /v1/chat/completions with the next reply of SCRIPT."""

    replies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        message = self.replies.pop(0)
        reply = {
            "id": "chatcmpl-example",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    "message": message,
                }
            ],
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def main() -> None:
    StandInModel.replies = list(SCRIPT)
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandInModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = Path(tempfile.mkdtemp(prefix="kioku-example-"))
    try:
        with Kioku.open(home / "kioku", env={}) as kioku:
            kioku.write_memory(
                "knowledge", "The release train leaves on Thursdays.", title="release train"
            )
            tools = openai_tools.chat_tools()
            print(f"tools offered: {', '.join(t['function']['name'] for t in tools)}")
            client = openai.OpenAI(
                base_url=f"http://127.0.0.1:{server.server_address[1]}/v1",
                api_key="offline-example",
                max_retries=0,
            )
            messages: list[Any] = [
                {"role": "system", "content": openai_tools.INSTRUCTIONS},
                {"role": "user", "content": "When does the release train leave?"},
            ]
            while True:
                reply = (
                    client.chat.completions.create(
                        model="gpt-example", messages=messages, tools=tools
                    )
                    .choices[0]
                    .message
                )
                messages.append(reply)
                if not reply.tool_calls:
                    break
                for answer, asked in zip(
                    openai_tools.answers(kioku, reply.tool_calls), reply.tool_calls, strict=True
                ):
                    print(f"model > {asked.function.name}({asked.function.arguments})")  # type: ignore[union-attr]
                    data = json.loads(answer["content"])
                    if "results" in data:
                        for hit in data["results"]:
                            print(f"kioku < {hit['kind']} {hit['id']}: {hit['content']!r}")
                    else:
                        print(f"kioku < stored {data['kind']} {data['id']}: {data['trigger']!r}")
                    messages.append(answer)
            print(f"model: {reply.content}")
            print(f"procedures kept: {[m.trigger for m in kioku.list(kind='procedure')]}")
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
