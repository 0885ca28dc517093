"""``/timeline`` (the lifecycle and activity logs, day by day) and ``/stats`` (the counts)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from fastapi import APIRouter, Request
from starlette.responses import Response

from kioku.core.model import Level
from kioku.interfaces.web.charts import bar_chart

if TYPE_CHECKING:
    from kioku.interfaces.web.ui import Web
    from kioku.service.kioku import Kioku

__all__ = ["routes"]

#: The most rows of each log a timeline shows.
MAX_ROWS: Final = 1000
DAY_CHOICES: Final = (1, 7, 30, 90, 365)
_SNIPPET: Final = 240
#: The days of mood balance the statistics page shows.
MOOD_DAYS: Final = 7


@dataclass(frozen=True, slots=True)
class Row:
    """One line of a timeline: when, what, about which memories, and more words."""

    at: datetime
    what: str
    text: str
    memory_ids: tuple[str, ...] = ()
    change: str = ""


@dataclass(slots=True)
class Day:
    day: str
    rows: list[Row] = field(default_factory=list)


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 1] + "…"


def _days(rows: Iterable[Row]) -> list[Day]:
    """Rows grouped by local day, newest day first, newest row first within a day."""
    out: dict[str, Day] = {}
    for row in sorted(rows, key=lambda r: r.at, reverse=True):
        day = row.at.astimezone().strftime("%Y-%m-%d")
        out.setdefault(day, Day(day)).rows.append(row)
    return list(out.values())


def _level(n: int | None) -> str:
    return "" if n is None else f"L{n} {Level.NAMES.get(n, '')}".strip()


def _timeline(k: Kioku, days: int) -> dict[str, Any]:
    since = k.clock.now() - timedelta(days=days)
    lifecycle: list[Row] = []
    for entry in k.lifecycle_log(since=since)[-MAX_ROWS:]:
        change = ""
        if entry.level_before is not None or entry.level_after is not None:
            change = f"{_level(entry.level_before)} → {_level(entry.level_after)}"
        if entry.score_before is not None and entry.score_after is not None:
            change += f" (score {entry.score_before:.1f} → {entry.score_after:.1f})"
        details = ", ".join(f"{key}: {value}" for key, value in entry.details.items())
        lifecycle.append(
            Row(entry.at, entry.event.value, _snippet(details), (entry.memory_id,), change.strip())
        )
    activity: list[Row] = []
    for _stored, event in k.activity(since=since, limit=MAX_ROWS):
        if event is None:
            continue
        words = event.summary or event.content
        who = " → ".join(x for x in (event.from_, event.to) if x)
        extra = ", ".join(x for x in (who, event.tool, event.channel) if x)
        activity.append(
            Row(event.ts, event.type.value, _snippet(words), event.memory_ids[:20], extra)
        )
    return {"lifecycle": _days(lifecycle), "activity": _days(activity)}


def _stats(k: Kioku) -> dict[str, Any]:
    from kioku.service.recall.balance import mood_balance

    s = k.stats()
    store = s.store
    levels = [(f"L{n} {Level.NAMES[n]}", store.by_level.get(n, 0)) for n in (1, 2, 3, 4)]
    categories = sorted(store.by_category.items(), key=lambda kv: (-kv[1], kv[0]))
    kinds = [
        (kind, store.by_kind.get(kind, 0))
        for kind in ("episode", "knowledge", "procedure", "profile")
    ]
    kinds += [(kind, n) for kind, n in sorted(store.by_kind.items()) if kind not in dict(kinds)]
    return {
        "s": s,
        "mood": mood_balance(k, MOOD_DAYS),
        "charts": [
            ("levels", "Episodes per level", bar_chart(levels)),
            ("categories", "Episodes per category", bar_chart(categories)),
            ("kinds", "Memories per kind", bar_chart(kinds)),
        ],
    }


def routes(web: Web) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/timeline")
    async def timeline(request: Request) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        raw = request.query_params.get("days", "30")
        days = int(raw) if raw.isdigit() and int(raw) in DAY_CHOICES else 30
        found = await web.run(access, lambda k: _timeline(k, days))
        return web.render(
            request,
            "timeline.html",
            access=access,
            title="Timeline",
            days=days,
            day_choices=DAY_CHOICES,
            **found,
        )

    @router.get("/stats")
    async def stats(request: Request) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        found = await web.run(access, _stats)
        return web.render(request, "stats.html", access=access, title="Statistics", **found)

    return router
