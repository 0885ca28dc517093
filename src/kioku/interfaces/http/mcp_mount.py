"""MCP over streamable HTTP at ``/mcp``, for the owner of the key each request carries."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from kioku.interfaces.http.settings import ServerState

__all__ = ["mount", "running"]


def mount(app: FastAPI, state: ServerState) -> None:
    """Serve MCP at ``/mcp`` (to be built)."""


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[None]:
    """Keep the MCP session manager running while the server runs (to be built)."""
    yield
