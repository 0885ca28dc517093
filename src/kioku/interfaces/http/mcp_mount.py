"""MCP over streamable HTTP at ``/mcp``, for the owner of the key each request carries.

One MCP server (the same tools, resources and prompt as ``kioku mcp``) serves every owner.
Its endpoint checks each request as the JSON API does (a 401 problem without a needed key
or with a bad one) before the SDK's transport sees it, and leaves the request's
:class:`~kioku.interfaces.http.tenants.Access` in the request's state; each call then runs
on that owner's service, in a worker thread (``Tenants.call``), so the event loop goes on
serving. A tool that changes memory, called with a read-only key, is a tool error.

The transport is stateless and answers in plain JSON: a request needs no session opened
before it, any request can carry any key, and a restarted server goes on answering the
clients it had (docs/mcp.md). The SDK is imported when the app is built, never by this
module's import.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.routing import Route

from kioku.interfaces.http.access import resolve_access
from kioku.interfaces.http.problems import MEDIA_TYPE, Problem, problem_body
from kioku.interfaces.http.tenants import Access
from kioku.interfaces.mcp.calls import CallError

if TYPE_CHECKING:
    from fastapi import FastAPI
    from mcp.server.fastmcp import Context, FastMCP
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import Receive, Scope, Send

    from kioku.interfaces.http.settings import ServerState
    from kioku.interfaces.mcp.calls import Work

__all__ = ["PATH", "mount", "running"]

_log = logging.getLogger("kioku.server")

PATH: Final = "/mcp"
#: Where the endpoint leaves a request's access, in the ASGI scope's state.
_ACCESS: Final = "kioku_access"
_READ_ONLY: Final = (
    "forbidden: this API key may only read, and this tool changes memory; nothing was done. "
    "Use a key created with `kioku keys create NAME --key-user USER --rights read-write`"
)


def _access_of(ctx: Context[Any, Any, Any]) -> Access:
    request = ctx.request_context.request
    access = getattr(getattr(request, "state", None), _ACCESS, None)
    if not isinstance(access, Access):  # only a request that came through _Endpoint
        raise CallError("this call came without a checked API key; nothing was done")
    return access


class _Owners:
    """The runner of the HTTP server: each call acts for its request's owner."""

    def __init__(self, state: ServerState) -> None:
        self.state = state

    async def __call__(
        self, ctx: Context[Any, Any, Any], work: Work, *, writes: bool
    ) -> dict[str, Any]:
        access = _access_of(ctx)
        if writes and not access.can_write:
            raise CallError(_READ_ONLY)
        return await self.state.tenants.call(access, work)


def _same_origin(conn: HTTPConnection) -> bool:
    """Whether the request comes from no web page, or from a page of this server."""
    origin = conn.headers.get("origin")
    if origin is None:
        return True
    return urlsplit(origin).netloc.lower() == conn.headers.get("host", "").lower()


class _Endpoint:
    """The ASGI app at ``/mcp``: checks the request's key, then hands it to the transport."""

    def __init__(self, state: ServerState, server: FastMCP[Any]) -> None:
        self.state = state
        self.server = server
        self.manager: StreamableHTTPSessionManager | None = None

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Run a session manager (a new one each time: one runs only once) until the end."""
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        manager = StreamableHTTPSessionManager(
            app=self.server._mcp_server,
            json_response=True,
            stateless=True,
            # The host and origin are checked here (and by resolve_access), not by the SDK,
            # whose defaults would refuse a server reached by another name with a key.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=self.state.max_body_bytes,
        )
        async with manager.run():
            self.manager = manager
            try:
                yield
            finally:
                self.manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        conn = HTTPConnection(scope)
        if scope["method"] != "POST":
            # Stateless: no session to end (DELETE), and no stream of the server's own
            # messages to open (GET), which would stay open with nothing to say.
            body = problem_body(
                405,
                "method-not-allowed",
                f"{scope['method']} is not served at {PATH}: send each MCP message as a POST",
                instance=conn.url.path,
            )
            answer = JSONResponse(body, 405, headers={"Allow": "POST"}, media_type=MEDIA_TYPE)
            await answer(scope, receive, send)
            return
        if not _same_origin(conn):
            raise Problem(
                403,
                "forbidden",
                f"MCP does not answer requests from web pages of other sites "
                f"(Origin {conn.headers.get('origin')!r})",
                hint="connect an MCP client to /mcp, not a web page",
            )
        state = self.state
        access = await anyio.to_thread.run_sync(
            lambda: resolve_access(conn, state.tenants, require_keys=state.require_keys)
        )
        manager = self.manager
        if manager is None:
            raise Problem(503, "busy", "MCP is not running yet", hint="try again in a moment")
        scope.setdefault("state", {})[_ACCESS] = access
        await manager.handle_request(scope, receive, send)


def mount(app: FastAPI, state: ServerState) -> None:
    """Serve MCP at ``/mcp`` (and ``/mcp/``), when the MCP SDK is installed."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        _log.warning("MCP is not served at /mcp: the MCP SDK is not installed")
        return
    from kioku.interfaces.mcp.server import build_server

    endpoint = _Endpoint(state, build_server(_Owners(state)))
    app.state.kioku_mcp = endpoint
    for path in (PATH, PATH + "/"):  # both, without a redirect from one to the other
        app.router.routes.append(Route(path, endpoint, include_in_schema=False))


@contextlib.asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[None]:
    """Keep the MCP transport running while the server runs."""
    endpoint: _Endpoint | None = getattr(app.state, "kioku_mcp", None)
    if endpoint is None:
        yield
        return
    async with endpoint.serving():
        yield
