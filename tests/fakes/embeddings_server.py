"""A scripted OpenAI-compatible embeddings server on loopback.

    with FakeEmbeddingsServer(dim=8) as server:
        server.script(EmbedReply.raw(500), EmbedReply.raw(200, "not json"))
        embedder = OpenAICompatEmbedder(base_url=server.v1_url, ...)

``POST …/embeddings`` takes the next scripted :class:`EmbedReply`; when the script is empty the
answer is a valid one: one vector per input (a deterministic function of the text, ``dim`` long,
not normalised), listed in reverse order with their ``index`` so clients must sort, and ``usage``
counting one token per whitespace-separated word. Every request is recorded.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["EmbedReply", "EmbedRequest", "FakeEmbeddingsServer", "fake_vector"]


def fake_vector(text: str, dim: int) -> list[float]:
    """The server's vector for ``text``: deterministic, non-zero, length ``dim``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [float(digest[i % len(digest)] - 100) for i in range(dim)]


@dataclass(frozen=True)
class EmbedReply:
    """One scripted answer: ``status`` with a raw ``body`` (a dict is sent as JSON)."""

    status: int = 200
    body: str | dict[str, Any] = ""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def raw(cls, status: int, body: str | dict[str, Any] = "", **headers: str) -> EmbedReply:
        return cls(status, body, {k.replace("_", "-"): v for k, v in headers.items()})


@dataclass(frozen=True)
class EmbedRequest:
    path: str
    headers: dict[str, str]
    body: Any


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeEmbeddingsServer


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw.decode("utf-8"))
        except ValueError:
            body = raw.decode("utf-8", "replace")
        fake.record(EmbedRequest(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        if not self.path.endswith("/embeddings"):
            self._send(404, {}, b'{"error": "not found"}')
            return
        reply = fake.next_reply() or EmbedReply(body=fake.answer(body))
        data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
        self._send(reply.status, reply.headers, data.encode("utf-8"))

    def _send(self, status: int, headers: dict[str, str], data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class FakeEmbeddingsServer:
    """The fake; a context manager that serves on ``127.0.0.1`` and a free port."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.requests: list[EmbedRequest] = []
        self._lock = threading.Lock()
        self._script: deque[EmbedReply] = deque()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def v1_url(self) -> str:
        assert self._httpd is not None, "the server is not running"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def answer(self, body: Any) -> dict[str, Any]:
        inputs = body.get("input", []) if isinstance(body, dict) else []
        inputs = [inputs] if isinstance(inputs, str) else list(inputs)
        dim = int(body.get("dimensions") or self.dim) if isinstance(body, dict) else self.dim
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(str(text), dim)}
            for i, text in enumerate(inputs)
        ]
        tokens = sum(len(str(t).split()) for t in inputs)
        return {
            "object": "list",
            "data": data[::-1],
            "model": body.get("model", "") if isinstance(body, dict) else "",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def script(self, *replies: EmbedReply) -> None:
        with self._lock:
            self._script.extend(replies)

    def next_reply(self) -> EmbedReply | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    def record(self, request: EmbedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def __enter__(self) -> FakeEmbeddingsServer:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
