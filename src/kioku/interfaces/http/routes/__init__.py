"""The ``/v1`` routes, one module per area."""

from __future__ import annotations

from kioku.interfaces.http.routes import (
    erasure,
    insight,
    memories,
    memory_actions,
    meta,
    profiles,
    recall,
    sleep,
)

__all__ = ["ROUTERS"]

ROUTERS = (
    meta.router,
    memories.router,
    memory_actions.router,
    recall.router,
    profiles.router,
    insight.router,
    sleep.router,
    erasure.router,
)
