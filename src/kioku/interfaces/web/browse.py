"""``/``: browse memories of every kind with filters and pages, or search them on purpose."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from starlette.responses import Response

from kioku.core.model import Level
from kioku.errors import KiokuError
from kioku.service.scope import scoped

if TYPE_CHECKING:
    from collections.abc import Mapping

    from kioku.interfaces.web.ui import Web
    from kioku.service.kioku import Kioku

__all__ = ["Filters", "routes"]

PAGE_SIZE: Final = 25
SEARCH_SIZE: Final = 50
KINDS: Final = ("episode", "knowledge", "procedure", "profile")
ARCHIVE_CHOICES: Final = ("active", "archived", "all")
PROTECTED_CHOICES: Final = ("", "yes", "no")
MAX_QUERY: Final = 500


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


@dataclass(slots=True)
class Filters:
    """What the browse form asks for; ``problems`` names what it could not read."""

    q: str = ""
    kind: str = ""
    level: int | None = None
    category: str = ""
    protected: str = ""
    archived: str = "active"
    since: date | None = None
    until: date | None = None
    page: int = 1
    problems: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> Filters:
        f = cls()
        f.q = params.get("q", "").strip()[:MAX_QUERY]
        kind = params.get("kind", "")
        if kind in KINDS:
            f.kind = kind
        elif kind:
            f.problems.append(f"unknown kind {kind!r}")
        level = params.get("level", "")
        if level in ("1", "2", "3", "4"):
            f.level = int(level)
        elif level:
            f.problems.append(f"unknown level {level!r}")
        f.category = params.get("category", "").strip()[:100]
        protected = params.get("protected", "")
        f.protected = protected if protected in PROTECTED_CHOICES else ""
        archived = params.get("archived", "active")
        f.archived = archived if archived in ARCHIVE_CHOICES else "active"
        for name in ("from", "to"):
            text = params.get(name, "").strip()
            day = _day(text) if text else None
            if text and day is None:
                f.problems.append(f"{name!r} is not a date (YYYY-MM-DD)")
            if name == "from":
                f.since = day
            else:
                f.until = day
        page = params.get("page", "1")
        f.page = int(page) if page.isdigit() and 0 < int(page) < 100_000 else 1
        return f

    def moments(self) -> tuple[datetime | None, datetime | None]:
        """From the start of ``since`` to the end of ``until``, in local time."""
        since = None if self.since is None else datetime.combine(self.since, time()).astimezone()
        until = (
            None
            if self.until is None
            else datetime.combine(self.until + timedelta(days=1), time()).astimezone()
        )
        return since, until

    def query(self, **change: object) -> str:
        """The query string of these filters, with ``change`` applied."""
        values: dict[str, object] = {
            "q": self.q,
            "kind": self.kind,
            "level": self.level or "",
            "category": self.category,
            "protected": self.protected,
            "archived": "" if self.archived == "active" else self.archived,
            "from": self.since.isoformat() if self.since else "",
            "to": self.until.isoformat() if self.until else "",
            "page": "" if self.page == 1 else self.page,
        }
        values.update(change)
        return urlencode({k: v for k, v in values.items() if v not in ("", None)})


@dataclass(slots=True)
class Listing:
    items: list[Any]
    more: bool
    categories: tuple[str, ...]
    searched: bool
    error: str = ""


def _list(k: Kioku, f: Filters) -> Listing:
    since, until = f.moments()
    archived: bool | None = {"active": False, "archived": True, "all": None}[f.archived]
    if f.level == Level.ARCHIVED and archived is False:
        archived = None
    flt = scoped(
        k,
        kind=f.kind or None,
        levels=None if f.level is None else (f.level,),
        categories=(f.category,) if f.category else None,
        protected={"yes": True, "no": False}.get(f.protected),
        archived=archived,
        created_after=since,
        created_before=until,
        limit=PAGE_SIZE + 1,
        offset=(f.page - 1) * PAGE_SIZE,
    )
    found = k.store.list(flt)
    return Listing(found[:PAGE_SIZE], len(found) > PAGE_SIZE, k.config.categories, False)


def _search(k: Kioku, f: Filters) -> Listing:
    since, until = f.moments()
    try:
        result = k.search_memory(
            f.q,
            kinds=[f.kind] if f.kind else None,
            since=since,
            until=until,
            include_archive=True,
            top_k=SEARCH_SIZE,
        )
    except KiokuError as exc:
        return Listing([], False, k.config.categories, True, exc.message)
    return Listing(list(result.items), False, k.config.categories, True)


def routes(web: Web) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    async def browse(request: Request) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        f = Filters.parse(request.query_params)
        listing = await web.run(access, lambda k: _search(k, f) if f.q else _list(k, f))
        return web.render(
            request,
            "browse.html",
            access=access,
            title="Search" if f.q else "Memories",
            f=f,
            listing=listing,
            kinds=KINDS,
            level_names=Level.NAMES,
        )

    return router
