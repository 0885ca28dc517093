"""Request bodies: at most ``max_body_bytes``, and JSON where the API reads JSON.

An ASGI middleware reads a request's body before the application sees it, so an oversize
body is refused (413) before anything is parsed or written, whether it announces its
length or streams it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from kioku.interfaces.http.problems import MEDIA_TYPE, problem_body

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit"]

_WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})


async def _refuse(send: Send, status: int, kind: str, detail: str, hint: str) -> None:
    body = json.dumps(problem_body(status, kind, detail, hint=hint)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", MEDIA_TYPE.encode()),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """Refuse bodies over ``limit`` bytes, and non-JSON bodies to ``/v1``."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        too_big = (
            f"the request body is larger than {self.limit} bytes",
            "send less at once (split a batch of turns into several requests)",
        )
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:
            await _refuse(send, 413, "too-large", *too_big)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await _refuse(send, 413, "too-large", *too_big)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if (
            scope["path"].startswith("/v1/")
            and body
            and kind != "application/json"
            and not kind.endswith("+json")
        ):
            await _refuse(
                send,
                415,
                "unsupported-media-type",
                f"the API reads JSON, not {kind or 'a body without a Content-Type'}",
                "send the body as JSON with `Content-Type: application/json`",
            )
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)
