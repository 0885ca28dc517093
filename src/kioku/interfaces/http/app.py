"""The ASGI application of ``kioku serve``: ``/v1`` (JSON API), ``/mcp`` and ``/`` (web UI).

FastAPI validates requests and writes the OpenAPI document (``/v1/openapi.json``); no
page loads anything from another site. Every error is a problem detail (RFC 9457).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from kioku import __version__
from kioku.errors import KiokuError
from kioku.interfaces.http import mcp_mount, routes
from kioku.interfaces.http.limits import BodyLimit
from kioku.interfaces.http.problems import (
    MEDIA_TYPE,
    Problem,
    errors_of,
    hint_of,
    problem_body,
    status_of,
)
from kioku.interfaces.http.settings import ServerState

__all__ = ["create_app"]

_log = logging.getLogger("kioku.server")

DESCRIPTION = (
    "kioku's memory over HTTP. Every route acts for the owner of the API key it is called "
    "with (`Authorization: Bearer kk_...`); a server without keys, on loopback, acts for the "
    "store's default owner. Errors are RFC 9457 problem details."
)


def _problem(request: Request, status: int, kind: str, detail: str, **extra: Any) -> JSONResponse:
    body = problem_body(status, kind, detail, instance=request.url.path, **extra)
    headers = {"WWW-Authenticate": 'Bearer realm="kioku"'} if status == 401 else None
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


def _field(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in {"body", "query", "path", "header"}:
        parts = parts[1:] or parts
    return ".".join(parts)


def _install_handlers(app: FastAPI) -> None:
    @app.exception_handler(Problem)
    async def on_problem(request: Request, exc: Problem) -> JSONResponse:
        return _problem(request, exc.status, exc.kind, exc.detail, hint=exc.hint, **exc.extra)

    @app.exception_handler(KiokuError)
    async def on_kioku(request: Request, exc: KiokuError) -> JSONResponse:
        status, kind = status_of(exc)
        return _problem(request, status, kind, exc.message, hint=hint_of(exc), **errors_of(exc))

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [
            {"field": _field(e.get("loc", ())), "problem": str(e.get("msg", "")).lower()}
            for e in exc.errors()
        ]
        malformed = any(e.get("type") == "json_invalid" for e in exc.errors())
        if malformed:
            return _problem(
                request,
                400,
                "malformed-json",
                "the request body is not valid JSON",
                hint="send one JSON object",
            )
        shown = "; ".join(f"{e['field']}: {e['problem']}" for e in errors)
        return _problem(
            request,
            422,
            "invalid",
            f"the request does not fit: {shown}",
            hint="see /v1/openapi.json for what each route takes",
            errors=errors,
        )

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        kind = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "http")
        return _problem(request, exc.status_code, kind, str(exc.detail))

    @app.exception_handler(Exception)
    async def on_crash(request: Request, exc: Exception) -> JSONResponse:
        _log.exception("request failed: %s %s", request.method, request.url.path)
        return _problem(
            request,
            500,
            "internal",
            f"kioku failed on this request ({type(exc).__name__})",
            hint="the server's log has the details; nothing was half-written",
        )


def create_app(state: ServerState, *, ui: bool = True, mcp: bool = True) -> FastAPI:
    """The application serving ``state``'s tenants."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with mcp_mount.running(app):
            try:
                yield
            finally:
                state.tenants.close()
                if state.on_stop is not None:
                    state.on_stop()

    app = FastAPI(
        title="kioku",
        version=__version__,
        description=DESCRIPTION,
        openapi_url="/v1/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.kioku = state
    _install_handlers(app)
    for router in routes.ROUTERS:
        app.include_router(router)
    if mcp:
        mcp_mount.mount(app, state)
    if ui:
        from kioku.interfaces.web.pages import mount as mount_ui

        mount_ui(app, state)
    app.add_middleware(BodyLimit, limit=state.max_body_bytes)
    return app
