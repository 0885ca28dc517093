"""The web UI of ``kioku serve``, at ``/``: server-rendered pages and the files they use.

Every page works without JavaScript; the one small script only adds conveniences. Nothing is
loaded from another origin: the stylesheet and script ship in this package (``static/``)
and are served at ``/static/``. The pages call the owner's :class:`~kioku.Kioku` through the
server's tenants, never the store directly.

* ``/``: browse memories of every kind (filters and pages) or search them on purpose
  (:mod:`.browse`);
* ``/memories/{id}``: one memory: its text, retention curve, explanation, relations and
  history, with edit, protect and forget (:mod:`.memory_page`);
* ``/timeline`` and ``/stats`` (:mod:`.insights`), ``/simulate`` (:mod:`.simulate_page`);
* ``/login`` and ``/logout`` (:mod:`.auth`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from fastapi import APIRouter
from starlette.responses import Response

from kioku.interfaces.web import auth, browse, insights, memory_page, simulate_page
from kioku.interfaces.web.ui import HEADERS, HERE, Web

if TYPE_CHECKING:
    from fastapi import FastAPI

    from kioku.interfaces.http.settings import ServerState

__all__ = ["mount"]

#: The files served at /static/: name → media type. Nothing else is.
STATIC: Final = {
    "kioku.css": "text/css; charset=utf-8",
    "kioku.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}


def _assets() -> APIRouter:
    router = APIRouter(include_in_schema=False)
    files = {name: (HERE / "static" / name).read_bytes() for name in STATIC}

    @router.get("/static/{name}")
    async def asset(name: str) -> Response:
        if name not in files:
            return Response(
                "not found", status_code=404, media_type="text/plain", headers=dict(HEADERS)
            )
        return Response(files[name], media_type=STATIC[name], headers=dict(HEADERS))

    @router.get("/favicon.ico")
    async def favicon() -> Response:
        svg = "favicon.svg"
        return Response(files[svg], media_type=STATIC[svg], headers=dict(HEADERS))

    return router


def mount(app: FastAPI, state: ServerState) -> None:
    """Serve the UI at ``/`` beside the API (``/v1``) and MCP (``/mcp``)."""
    web = Web(state)
    app.include_router(_assets())
    for module in (browse, memory_page, insights, simulate_page, auth):
        app.include_router(module.routes(web))
