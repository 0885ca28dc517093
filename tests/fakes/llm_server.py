"""A scripted LLM server on loopback that speaks the Anthropic and OpenAI chat protocols.

    with FakeLlmServer() as server:
        server.script(Reply.answer("not json"), Reply.raw(500), STALL)
        analyzer = AnthropicAnalyzer(base_url=server.url, ...)
        ...
        assert server.requests[0].headers["x-api-key"] == KEY

Requests whose path ends in ``/messages`` get Anthropic answers, ``/chat/completions`` OpenAI
answers. Each request takes the next scripted :class:`Reply`; when the script is empty,
``default`` builds the model's answer from the request. Every request is recorded (path,
lower-cased headers, decoded JSON body), including those that are stalled or dropped.

Consolidation requests name their task on the first line of the system prompt
(``kioku-task: extract_knowledge``); :func:`task_of` reads it, and :func:`consolidation_answer`
gives a valid answer for each task (pass ``lambda r: consolidation_answer(r) or
default_answer(r)`` as ``default`` to serve both kinds).
"""

from __future__ import annotations

import html
import json
import re
import ssl
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

__all__ = [
    "CLOSE",
    "STALL",
    "FakeLlmServer",
    "Reply",
    "Request",
    "consolidation_answer",
    "default_answer",
    "episodes_of",
    "task_of",
]

Action = Literal["reply", "stall", "close"]


@dataclass(frozen=True)
class Reply:
    """One scripted answer.

    ``body`` as a dict is the model's JSON answer, wrapped in the protocol's envelope with
    ``usage``; as a string it is sent as the raw HTTP body. ``text`` is the model's text, wrapped
    in the envelope. ``action`` ``stall`` accepts the request and never answers (until the
    server stops); ``close`` drops the connection without a word.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | dict[str, Any] | None = None
    text: str | None = None
    usage: tuple[int, int] | None = (120, 45)
    action: Action = "reply"

    @classmethod
    def answer(
        cls, answer: dict[str, Any] | str, usage: tuple[int, int] | None = (120, 45)
    ) -> Reply:
        """A 200 carrying the model's answer (a dict is sent as JSON text)."""
        if isinstance(answer, dict):
            return cls(body=answer, usage=usage)
        return cls(text=answer, usage=usage)

    @classmethod
    def raw(cls, status: int, body: str = "", **headers: str) -> Reply:
        """A raw HTTP answer; ``retry_after="1"`` becomes the header ``retry-after: 1``."""
        return cls(
            status=status,
            body=body,
            headers={k.replace("_", "-"): v for k, v in headers.items()},
        )


STALL = Reply(action="stall")
CLOSE = Reply(action="close")


@dataclass(frozen=True)
class Request:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any

    @property
    def protocol(self) -> Literal["anthropic", "openai"]:
        return "anthropic" if self.path.endswith("/messages") else "openai"

    @property
    def system(self) -> str:
        if self.protocol == "anthropic":
            return str(self.body.get("system", ""))
        return "\n".join(
            m["content"] for m in self.body.get("messages", []) if m.get("role") == "system"
        )

    @property
    def user(self) -> str:
        return "\n".join(
            m["content"] for m in self.body.get("messages", []) if m.get("role") == "user"
        )


def default_answer(request: Request) -> dict[str, Any]:
    """A valid answer for whichever of kioku's three tasks the request is."""
    if "Extract the keywords" in request.user:
        return {"trigger": "Python, 文法", "content": "リスト内包表記, 説明"}
    if "Summarise this memory" in request.user:
        return {
            "trigger": "Python文法について質問を受けた",
            "content": "リスト内包表記について説明した",
        }
    return {
        "emotional_intensity": 35,
        "emotional_valence": "positive",
        "emotional_arousal": 40,
        "emotional_tags": ["curiosity", "satisfaction"],
        "category": "work",
        "keywords": ["Python", "list comprehension", "syntax"],
        "trigger": "The user asked how list comprehensions work in Python.",
        "content": "I explained the syntax with a filtered example; the user was pleased.",
        "protected": False,
    }


TASK_MARKER = "kioku-task:"
_EPISODE = re.compile(r'<episode id="([^"]*)"[^>]*>(.*?)</episode>', re.DOTALL)


def task_of(request: Request) -> str | None:
    """The consolidation task a request asks for (``kioku-task:`` on the first line of its
    system prompt), or None for any other request."""
    if not isinstance(request.body, dict):
        return None
    first = request.system.lstrip().partition("\n")[0]
    if not first.startswith(TASK_MARKER):
        return None
    return first.removeprefix(TASK_MARKER).strip() or None


def episodes_of(request: Request) -> list[tuple[str, str]]:
    """The (id, text) of every ``<episode>`` in a request's user message, unescaped."""
    return [(html.unescape(i), html.unescape(t)) for i, t in _EPISODE.findall(request.user)]


def consolidation_answer(request: Request) -> dict[str, Any] | None:
    """A valid answer for a consolidation request (None for any other): one knowledge item
    per episode, stating its text; no procedures; supported; no contradiction; no update;
    the texts joined; outcome unknown."""
    task = task_of(request)
    if task == "extract_knowledge":
        knowledge = [
            {"title": text[:20], "text": text, "sources": [ident]}
            for ident, text in episodes_of(request)
        ]
        return {"knowledge": knowledge}
    texts = [html.unescape(t) for t in re.findall(r"<text n=\"\d+\">(.*?)</text>", request.user)]
    answers: dict[str, dict[str, Any]] = {
        "distil_procedures": {"procedures": []},
        "review_knowledge": {"reason": "the sources state it", "supported": True},
        "judge_conflict": {
            "contradicts": False,
            "strategy": None,
            "merged_text": None,
            "condition": None,
            "reason": "different topics",
        },
        "reconsolidate": {"update": False, "text": None},
        "merge_texts": {"text": " ".join(texts) or "merged"},
        "judge_outcome": {"outcome": "unknown"},
    }
    return answers.get(task or "")


def _envelope(
    protocol: str, model: str, text: str, usage: tuple[int, int] | None
) -> dict[str, Any]:
    if protocol == "anthropic":
        env: dict[str, Any] = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
        }
        if usage is not None:
            env["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
        return env
    env = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
    }
    if usage is not None:
        env["usage"] = {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        }
    return env


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeLlmServer


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
        request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        fake.record(request)
        if not (self.path.endswith("/messages") or self.path.endswith("/chat/completions")):
            self._send(404, {}, b'{"error": "not found"}')
            return
        reply = fake.next_reply()
        if reply is None:
            reply = Reply.answer(fake.default(request))
        if reply.action == "stall":
            fake.stopping.wait()
            self.close_connection = True
            return
        if reply.action == "close":
            self.close_connection = True
            return
        model = body.get("model", "") if isinstance(body, dict) else ""
        if isinstance(reply.body, dict):
            text = json.dumps(reply.body, ensure_ascii=False)
            payload = json.dumps(_envelope(request.protocol, model, text, reply.usage))
        elif reply.text is not None:
            payload = json.dumps(_envelope(request.protocol, model, reply.text, reply.usage))
        else:
            payload = reply.body or ""
        self._send(reply.status, reply.headers, payload.encode("utf-8"))

    def _send(self, status: int, headers: dict[str, str], data: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class FakeLlmServer:
    """The fake server; a context manager that starts it on ``127.0.0.1`` and a free port."""

    def __init__(
        self,
        default: Callable[[Request], dict[str, Any] | str] = default_answer,
        *,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.default = default
        self.requests: list[Request] = []
        self.stopping = threading.Event()
        self._tls = tls
        self._lock = threading.Lock()
        self._script: deque[Reply] = deque()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not running"
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL (Anthropic style: the analyzer appends ``/v1/messages``)."""
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def v1_url(self) -> str:
        """The base URL with ``/v1`` (OpenAI style: the analyzer appends ``/chat/completions``)."""
        return f"{self.url}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def next_reply(self) -> Reply | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def start(self) -> FakeLlmServer:
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        if self._tls is not None:
            httpd.socket = self._tls.wrap_socket(httpd.socket, server_side=True)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeLlmServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
