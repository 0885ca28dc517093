"""What a call of an MCP tool is: work on an owner's service, run by a runner, or refused.

Shared by the tools (:mod:`.tools`), the stdio server (:mod:`.server`) and the HTTP one
(:mod:`kioku.interfaces.http.mcp_mount`). Nothing here imports the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from kioku.errors import KiokuError, MemoryNotFoundError, ProtectedMemoryError

if TYPE_CHECKING:
    from mcp.server.fastmcp import Context

    from kioku.service.kioku import Kioku

__all__ = ["CallError", "Runner", "Work", "guarded", "problem"]

#: The work of one call on an owner's service; it answers with a JSON-ready dict.
Work = Callable[["Kioku"], dict[str, Any]]


class CallError(Exception):
    """A call the service refused; its text names the problem and the fix."""


class Runner(Protocol):
    """Runs a call's work on the service of the owner the call is for.

    ``ctx`` is the call's MCP context (in HTTP, its request names the owner); ``writes``
    says that the work changes memory. A refusal is a :class:`CallError`.
    """

    async def __call__(
        self, ctx: Context[Any, Any, Any], work: Work, *, writes: bool
    ) -> dict[str, Any]: ...


def problem(exc: KiokuError) -> str:
    """What to tell the model about a kioku error: the problem, then how to fix it here."""
    if isinstance(exc, MemoryNotFoundError):
        return f"{exc.message}; search_memory finds the ids that exist"
    if isinstance(exc, ProtectedMemoryError):
        return (
            f"{exc.message}, and protected memories are not erased over MCP; the user can "
            f"run `kioku unprotect {exc.memory_id}` (or `kioku forget --force "
            f"{exc.memory_id}`) first"
        )
    return str(exc)


def guarded(work: Work) -> Work:
    """``work``, with a kioku error turned into a CallError that names the fix."""

    def run(kioku: Kioku) -> dict[str, Any]:
        try:
            return work(kioku)
        except KiokuError as exc:
            raise CallError(problem(exc)) from None

    return run
