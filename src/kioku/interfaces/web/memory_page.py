"""``/memories/{id}``: one memory, its curve and history; edit, protect, unprotect, forget."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from fastapi import APIRouter, Request
from starlette.responses import Response

from kioku.core.model import ALL_TAGS, Level
from kioku.errors import KiokuError, MemoryNotFoundError, ValidationError
from kioku.interfaces.http.problems import status_of
from kioku.interfaces.web.memory_view import load_view

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.interfaces.http.tenants import Access
    from kioku.interfaces.web.ui import Web
    from kioku.service.kioku import Kioku

__all__ = ["routes"]

_WORDS: Final = re.compile(r"[,\s]+")


def _href(memory_id: str) -> str:
    return "/memories/" + quote(memory_id, safe="")


def _words(text: str) -> list[str]:
    return [w for w in _WORDS.split(text.strip().lower()) if w]


def _changes(memory: Memory, fields: dict[str, str]) -> dict[str, Any]:
    """The fields of the edit form that differ from the memory (ValidationError if unreadable)."""
    out: dict[str, Any] = {}
    for name in ("trigger", "content", "category"):
        if name in fields and fields[name] != getattr(memory, name):
            out[name] = fields[name]
    raw = fields.get("intensity", "").strip()
    if raw:
        try:
            intensity = int(raw)
        except ValueError:
            raise ValidationError("intensity", raw, "a whole number from 0 to 100") from None
        if intensity != memory.emotional_intensity:
            out["intensity"] = intensity
    if "tags" in fields:
        tags = _words(fields["tags"])
        if tuple(tags) != memory.emotional_tags:
            out["tags"] = tags
    return out


def routes(web: Web) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    async def failed(request: Request, access: Access, exc: KiokuError) -> Response:
        status, _ = status_of(exc)
        if isinstance(exc, MemoryNotFoundError):
            return web.error(
                request, 404, "Not found", "there is no such memory", access=access,
                hint="it may have been forgotten; go back to the list",
            )  # fmt: skip
        title = {409: "Not possible", 422: "Not valid", 503: "Busy"}.get(status, "Failed")
        return web.error(request, status, title, exc.message, access=access, hint=exc.hint)

    @router.get("/memories/{memory_id}")
    async def show(request: Request, memory_id: str) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        try:
            view = await web.run(access, lambda k: load_view(k, memory_id))
        except KiokuError as exc:
            return await failed(request, access, exc)
        return web.render(
            request,
            "memory.html",
            access=access,
            title=f"Memory {view.memory.id}",
            v=view,
            m=view.memory,
            href=_href(view.memory.id),
            level_names=Level.NAMES,
        )

    async def edit_page(
        request: Request,
        access: Access,
        memory: Memory,
        *,
        values: dict[str, str] | None = None,
        error: str = "",
        status: int = 200,
    ) -> Response:
        categories = await web.run(access, lambda k: k.config.categories)
        shown = values or {
            "trigger": memory.trigger,
            "content": memory.content,
            "category": memory.category,
            "intensity": str(memory.emotional_intensity),
            "tags": ", ".join(memory.emotional_tags),
        }
        return web.render(
            request,
            "edit.html",
            access=access,
            status=status,
            title=f"Edit {memory.id}",
            m=memory,
            href=_href(memory.id),
            values=shown,
            error=error,
            categories=categories,
            all_tags=sorted(ALL_TAGS),
        )

    @router.get("/memories/{memory_id}/edit")
    async def edit_form(request: Request, memory_id: str) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        try:
            memory = await web.run(access, lambda k: k.get(memory_id))
        except KiokuError as exc:
            return await failed(request, access, exc)
        return await edit_page(request, access, memory)

    @router.post("/memories/{memory_id}/edit")
    async def edit(request: Request, memory_id: str) -> Response:
        got = await web.writer_form(request)
        if isinstance(got, Response):
            return got
        access, fields = got

        def work(k: Kioku) -> Memory:
            memory = k.get(memory_id)
            changes = _changes(memory, fields)
            return k.edit_memory(memory_id, **changes) if changes else memory

        try:
            await web.run(access, work)
        except ValidationError as exc:
            try:
                memory = await web.run(access, lambda k: k.get(memory_id))
            except KiokuError as gone:
                return await failed(request, access, gone)
            values = {n: fields.get(n, "") for n in ("trigger", "content", "category")}
            values |= {n: fields.get(n, "") for n in ("intensity", "tags")}
            return await edit_page(
                request, access, memory, values=values, error=exc.message, status=422
            )
        except KiokuError as exc:
            return await failed(request, access, exc)
        return web.redirect(_href(memory_id) + "?notice=saved")

    def protection(path: str, protect: bool) -> None:
        @router.post(path)
        async def change(request: Request, memory_id: str) -> Response:
            got = await web.writer_form(request)
            if isinstance(got, Response):
                return got
            access, _ = got
            try:
                await web.run(
                    access, lambda k: k.protect(memory_id) if protect else k.unprotect(memory_id)
                )
            except KiokuError as exc:
                return await failed(request, access, exc)
            notice = "protected" if protect else "unprotected"
            return web.redirect(_href(memory_id) + "?notice=" + notice)

    protection("/memories/{memory_id}/protect", True)
    protection("/memories/{memory_id}/unprotect", False)

    @router.get("/memories/{memory_id}/forget")
    async def forget_form(request: Request, memory_id: str) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        try:
            memory = await web.run(access, lambda k: k.get(memory_id))
        except KiokuError as exc:
            return await failed(request, access, exc)
        return web.render(
            request,
            "forget.html",
            access=access,
            title=f"Forget {memory.id}?",
            m=memory,
            href=_href(memory.id),
        )

    @router.post("/memories/{memory_id}/forget")
    async def forget(request: Request, memory_id: str) -> Response:
        got = await web.writer_form(request)
        if isinstance(got, Response):
            return got
        access, fields = got
        if fields.get("confirm") != "yes":
            return web.redirect(_href(memory_id))
        force = fields.get("force") == "yes"
        try:
            await web.run(access, lambda k: k.erase(memory_id, force=force))
        except KiokuError as exc:
            return await failed(request, access, exc)
        return web.redirect("/?notice=forgotten")

    return router
