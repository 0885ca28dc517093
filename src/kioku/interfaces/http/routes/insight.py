"""What the caller's memory has been through: ``/v1/stats``, ``/v1/mood``, ``/v1/activity``,
``/v1/lifecycle``, ``/v1/midterm``, ``/v1/resolutions`` and ``/v1/export``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Annotated, Any, Final

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse
from pydantic import AwareDatetime

from kioku.core.lifecycle.log import Event
from kioku.interfaces.http import views
from kioku.interfaces.http.deps import Caller, Reader
from kioku.ports.store import Order

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.service.kioku import Kioku

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["insight"])

#: Memories read from the store per step of an export.
_EXPORT_PAGE: Final = 200

Since = Annotated[
    AwareDatetime | None, Query(description="Only at or after this time (ISO 8601, offset).")
]


@router.get("/stats", summary="Counts of the caller's memories: levels, kinds, protection")
async def stats(caller: Reader) -> dict[str, Any]:
    return views.stats(await caller.run(lambda k: k.stats()))


@router.get(
    "/mood",
    summary="The valence balance of what was primed or recalled, per day",
    description="The mood-balance monitor of `kioku stats --days N`: for each of the last "
    "`days` days (today included, oldest first), how many memories were primed or recalled by "
    "valence and how many were negative and intense, with the limiter's settings.",
)
async def mood(
    caller: Reader, days: Annotated[int, Query(ge=1, le=366, description="1 to 366.")] = 7
) -> dict[str, Any]:
    from kioku.service.recall.balance import mood_balance

    return (await caller.run(lambda k: mood_balance(k, days))).as_dict()


@router.get("/activity", summary="The activity log, oldest first (the newest `limit` events)")
async def activity(
    caller: Reader,
    since: Since = None,
    until: Annotated[
        AwareDatetime | None, Query(description="Only before this time (ISO 8601, offset).")
    ] = None,
    types: Annotated[list[str] | None, Query(alias="type", description="Only these.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    rows = await caller.run(
        lambda k: k.activity(since=since, until=until, types=types or (), limit=limit)
    )
    return {"items": [views.activity_entry(s, e) for s, e in rows], "count": len(rows)}


@router.get(
    "/lifecycle",
    summary="The lifecycle log of the caller's memories, newest page first",
    description="Each page is oldest first; `offset` counts entries back from the newest, "
    "and `next_offset` is the offset of the page before it (null at the start of the log).",
)
async def lifecycle_log(
    caller: Reader,
    memory_id: Annotated[str | None, Query(description="Only this memory.")] = None,
    since: Since = None,
    events: Annotated[list[Event] | None, Query(alias="event", description="Only these.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
) -> dict[str, Any]:
    wanted = None if not events else [e.value for e in events]
    entries = await caller.run(
        lambda k: k.lifecycle_log(
            memory_id=memory_id, since=since, events=wanted, limit=offset + limit + 1
        )
    )
    newest_first = entries[::-1][offset:]
    chosen, next_offset = views.page(newest_first, offset, limit)
    return {
        "items": [views.log_entry(e) for e in reversed(chosen)],
        "offset": offset,
        "limit": limit,
        "next_offset": next_offset,
    }


@router.get("/lifecycle/summary", summary="The lifecycle view: policy, capacity, archive, runs")
async def lifecycle_summary(caller: Reader) -> dict[str, Any]:
    found: dict[str, Any] = await caller.run(lambda k: k.lifecycle())
    plain: dict[str, Any] = json.loads(json.dumps(found, default=str))  # dates as text
    return plain


@router.get("/midterm", summary="The unexpired threads of the mid-term tier, newest first")
async def midterm(
    caller: Reader,
    thread_id: Annotated[str | None, Query(description="Only this thread.")] = None,
) -> dict[str, Any]:
    found = await caller.run(lambda k: k.midterm(thread_id))
    return {"items": [views.midterm_entry(e) for e in found], "count": len(found)}


@router.get("/resolutions", summary="What any agent of the caller's user reported resolved")
async def resolutions(caller: Reader, since: Since = None) -> dict[str, Any]:
    found = await caller.run(lambda k: k.resolutions(since))
    return {"items": [views.resolution(r) for r in found], "count": len(found)}


def _export_page(offset: int) -> Callable[[Kioku], list[Memory]]:
    def read(k: Kioku) -> list[Memory]:
        return k.list(
            kind=None, archived=None, limit=_EXPORT_PAGE, offset=offset, order=Order.CREATED_ASC
        )

    return read


async def _export_lines(caller: Caller) -> AsyncIterator[bytes]:
    offset = 0
    while True:
        batch = await caller.run(_export_page(offset))
        for memory in batch:
            yield (json.dumps(views.memory(memory), ensure_ascii=False) + "\n").encode()
        if len(batch) < _EXPORT_PAGE:
            return
        offset += _EXPORT_PAGE


@router.get(
    "/export",
    summary="Every memory of the caller, archived ones too, as JSON lines",
    description="One memory per line (`application/x-ndjson`), every kind, oldest first, "
    "each as GET /v1/memories/{id} shows it. It is read page by page while it streams: a "
    "memory erased meanwhile may shift the rest by one.",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}}},
)
async def export(caller: Reader) -> StreamingResponse:
    await caller.run(lambda k: k.store)  # a store that cannot open fails now, as a problem
    return StreamingResponse(_export_lines(caller), media_type="application/x-ndjson")
