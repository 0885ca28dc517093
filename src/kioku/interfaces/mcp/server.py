"""kioku's MCP server: its tools (:mod:`.tools`) on a runner that says whose memory a call is for.

``kioku mcp`` serves one owner over stdio with :class:`Local`, which holds one
:class:`~kioku.Kioku` for the whole session. The SDK runs the tools on its event loop's
thread and :class:`Local` does each call's work there without awaiting, so the calls run
one at a time and the service is never used from two threads. ``kioku serve`` builds the
same server with a runner that acts for the owner of each request's API key
(:mod:`kioku.interfaces.http.mcp_mount`).

Every kioku error becomes a tool error that names the problem and the fix; the session
goes on. The SDK is imported by :func:`build_server` and the tools only: nothing a hook or
``kioku --help`` loads imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from kioku import __version__
from kioku.interfaces.mcp.calls import CallError, Runner, Work, problem

if TYPE_CHECKING:
    from mcp.server.fastmcp import Context, FastMCP
    from pydantic import ValidationError

    from kioku.service.kioku import Kioku

__all__ = ["CallError", "Local", "Runner", "build_server", "problem", "serve"]


class Local:
    """The runner of ``kioku mcp``: one open service, and the warnings of the current call."""

    def __init__(self, kioku: Kioku, warnings: list[str] | None = None) -> None:
        self.kioku = kioku
        self.warnings = [] if warnings is None else warnings

    async def __call__(
        self, ctx: Context[Any, Any, Any], work: Work, *, writes: bool
    ) -> dict[str, Any]:
        """``work``'s answer, with the warnings it raised (``warnings`` is the list the
        service's ``on_warning`` fills)."""
        self.warnings.clear()
        data = work(self.kioku)  # no await before it returns: calls run one at a time
        if self.warnings:
            data["warnings"] = list(self.warnings)
        return data


def _shown(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bad_arguments(tool: str, error: ValidationError) -> str:
    """Each argument of ``error`` that does not fit ``tool``'s input schema, and why."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        given = "" if item["type"] == "missing" else f" (got {_shown(item['input'])})"
        problems.append(f"{where}: {item['msg'].lower()}{given}")
    return f"invalid arguments for {tool}: {'; '.join(problems)}; see the tool's input schema"


def build_server(runner: Runner, **settings: Any) -> FastMCP[Any]:
    """The MCP server whose calls ``runner`` runs; ``settings`` go to FastMCP."""
    from mcp.server.fastmcp import FastMCP
    from mcp.server.fastmcp.exceptions import ToolError
    from mcp.types import ContentBlock
    from pydantic import ValidationError

    from kioku.interfaces.mcp import tools

    class _App(FastMCP[Any]):
        async def call_tool(
            self, name: str, arguments: dict[str, Any]
        ) -> Sequence[ContentBlock] | dict[str, Any]:
            """The tool's answer; arguments of the wrong shape are named one by one."""
            try:
                return await super().call_tool(name, arguments)
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise ToolError(_bad_arguments(name, exc.__cause__)) from None
                raise

    app = _App("kioku", instructions=tools.INSTRUCTIONS, log_level="WARNING", **settings)
    app._mcp_server.version = __version__  # the handshake names kioku's version, not the SDK's
    tools.register(app, runner)
    return app


def serve(open_kioku: Callable[[Callable[[str], None]], Kioku]) -> None:
    """Serve over stdin/stdout until the client leaves; ``open_kioku(on_warning)`` opens
    the service, which stays open for the session."""
    warnings: list[str] = []
    with open_kioku(warnings.append) as kioku:
        _ = kioku.store  # a locked or damaged store fails now, not at the first call
        build_server(Local(kioku, warnings)).run("stdio")
