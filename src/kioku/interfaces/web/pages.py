"""The web UI's pages (to be built)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fastapi import FastAPI

    from kioku.interfaces.http.settings import ServerState

__all__ = ["mount"]


def mount(app: FastAPI, state: ServerState) -> None:
    """Serve the UI at ``/`` (to be built)."""
