"""``/login`` and ``/logout``: an API key kept in an HttpOnly, SameSite=Strict cookie."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import anyio.to_thread
from fastapi import APIRouter, Request
from starlette.responses import Response

from kioku.errors import KiokuError
from kioku.interfaces.http.access import KEY_COOKIE

if TYPE_CHECKING:
    from kioku.interfaces.web.ui import Web

__all__ = ["routes", "safe_next"]

#: The longest key accepted by the form (keys are far shorter).
MAX_KEY_CHARS: Final = 200


def safe_next(target: str) -> str:
    """Where to go after signing in: a path of this server, never another site."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    if any(ord(c) < 0x20 for c in target):
        return "/"
    return target


def routes(web: Web) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    state = web.state

    async def keys_needed() -> bool:
        return state.require_keys or await anyio.to_thread.run_sync(state.tenants.keys_in_use)

    @router.get("/login")
    async def login_form(request: Request) -> Response:
        return web.render(
            request,
            "login.html",
            title="Sign in",
            needed=await keys_needed(),
            next=safe_next(request.query_params.get("next", "/")),
            error="",
        )

    @router.post("/login")
    async def login(request: Request) -> Response:
        fields = await web.form(request, None)
        if isinstance(fields, Response):
            return fields
        target = safe_next(fields.get("next", "/"))
        plain = fields.get("key", "").strip()[:MAX_KEY_CHARS]
        try:
            if not plain:
                raise KiokuError("enter an API key")
            from kioku.service.keys import verify_key

            await anyio.to_thread.run_sync(
                lambda: state.tenants.keyring(lambda k: verify_key(k, plain, touch=False))
            )
        except KiokuError:
            return web.render(
                request,
                "login.html",
                status=401,
                title="Sign in",
                needed=await keys_needed(),
                next=target,
                error="That key is not valid: it is unknown, revoked or mistyped.",
            )
        response = web.redirect(target)
        response.set_cookie(
            KEY_COOKIE,
            plain,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
            path="/",
        )
        return response

    @router.get("/logout")
    async def logout_form(request: Request) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        return web.render(request, "logout.html", access=access, title="Sign out")

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access  # not signed in (any more): the cookie is cleared on the way
        fields = await web.form(request, access)
        if isinstance(fields, Response):
            return fields
        response = web.redirect("/login?notice=signed-out")
        response.delete_cookie(KEY_COOKIE, path="/", httponly=True, samesite="strict")
        return response

    return router
