"""The ``/v1`` routes, one module per area."""

from __future__ import annotations

from kioku.interfaces.http.routes import memories

__all__ = ["ROUTERS"]

ROUTERS = (memories.router,)
