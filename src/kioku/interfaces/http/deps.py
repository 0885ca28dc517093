"""What a route gets: the caller, who can run work on its owner's service.

Routes declare ``caller: Reader`` or ``caller: Writer``; a writer needs a read-write key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, TypeVar

import anyio.to_thread
from fastapi import Depends, Request

from kioku.interfaces.http.access import resolve_access
from kioku.interfaces.http.problems import Problem

if TYPE_CHECKING:
    from kioku.interfaces.http.settings import ServerState
    from kioku.interfaces.http.tenants import Access
    from kioku.service.kioku import Kioku

__all__ = ["Caller", "Reader", "Writer", "reader", "server_state", "writer"]

T = TypeVar("T")


def server_state(request: Request) -> ServerState:
    state: ServerState = request.app.state.kioku
    return state


@dataclass(slots=True)
class Caller:
    """The access of one request and the way to its owner's service."""

    access: Access
    state: ServerState

    async def run(self, work: Callable[[Kioku], T]) -> T:
        """``work(kioku)`` on the caller's owner, in a worker thread."""
        return await self.state.tenants.call(self.access, work)


async def reader(request: Request) -> Caller:
    state = server_state(request)
    access = await anyio.to_thread.run_sync(
        lambda: resolve_access(request, state.tenants, require_keys=state.require_keys)
    )
    return Caller(access, state)


async def writer(request: Request) -> Caller:
    caller = await reader(request)
    if not caller.access.can_write:
        raise Problem(
            403,
            "forbidden",
            "this API key may only read",
            hint="use a key created with `kioku keys create --rights read-write`",
        )
    return caller


Reader = Annotated[Caller, Depends(reader)]
Writer = Annotated[Caller, Depends(writer)]
