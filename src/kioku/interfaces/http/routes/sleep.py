"""What happens while memory sleeps: ``/v1/batch`` (the nightly batch) and
``/v1/consolidation`` (knowledge and procedures made from episodes).

The nightly batch works on the whole store, every owner at once, and reports on all of them:
only the server's keyless default owner (a server without keys, on loopback) may run it, dry
or not; a key only reads where it stands. Consolidation works on the caller's owner alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StrictBool

from kioku.interfaces.http import views
from kioku.interfaces.http.deps import Reader, Writer
from kioku.interfaces.http.problems import Problem

if TYPE_CHECKING:
    from datetime import datetime

    from kioku.service.kioku import Kioku

__all__ = ["router"]

router = APIRouter(prefix="/v1", tags=["sleep"])

Level = Literal["daily", "weekly", "monthly"]


class BatchRun(BaseModel):
    """A run of the nightly batch."""

    model_config = ConfigDict(extra="forbid")

    dry_run: StrictBool = Field(False, description="Plan the next due day; write nothing.")
    now: AwareDatetime | None = Field(
        None, description="Run as of this time (at most a day ahead of the clock)."
    )


class ConsolidationRun(BaseModel):
    """A consolidation of the caller's memories."""

    model_config = ConfigDict(extra="forbid")

    levels: list[Level] | None = Field(
        None, description="Only these levels, for the current period (default: every due one)."
    )
    dry_run: StrictBool = Field(False, description="Plan; write nothing.")
    now: AwareDatetime | None = Field(
        None, description="Run as of this time (at most a day ahead of the clock)."
    )


def _checked_now(k: Kioku, now: datetime | None) -> datetime:
    from kioku.service.lifecycle.batch_state import check_ahead

    moment = now or k.clock.now()
    check_ahead(moment, k.clock.now(), force=False)
    return moment


def _batch_status(k: Kioku) -> dict[str, Any]:
    from kioku.service.lifecycle.schedule import batch_status

    return {"store_wide": True, **batch_status(k).to_dict()}


@router.get("/batch", summary="Where the nightly batch stands: last day, last run, what is due")
async def batch_state(caller: Reader) -> dict[str, Any]:
    return await caller.run(_batch_status)


@router.post(
    "/batch",
    summary="Run the nightly batch (every owner's memories): the keyless default owner only",
    description="Applies every due day, oldest first, or with `dry_run` plans the next one "
    "and writes nothing. The batch changes and reports on every owner of the store, so only "
    "a server without keys (its default owner) runs it here; with keys, schedule "
    "`kioku batch` instead (`kioku schedule install`).",
)
async def run_batch(body: BatchRun, caller: Writer) -> dict[str, Any]:
    if caller.access.key_id is not None or caller.access.user_id is not None:
        raise Problem(
            403,
            "forbidden",
            "the nightly batch works on every owner of the store, not only on this key's",
            hint="run `kioku batch` on the server's machine, or schedule it with "
            "`kioku schedule install`",
        )

    def work(k: Kioku) -> dict[str, Any]:
        report = k.batch(now=_checked_now(k, body.now), dry_run=body.dry_run)
        return report.to_dict()

    return await caller.run(work)


@router.get("/consolidation", summary="The caller's recorded consolidation runs, newest first")
async def consolidation_runs(
    caller: Reader,
    level: Annotated[Level | None, Query(description="Only runs of this level.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> dict[str, Any]:
    runs = await caller.run(lambda k: views.consolidation_runs(k, level, limit))
    return {"items": runs, "count": len(runs)}


@router.post("/consolidation", summary="Consolidate the caller's memories (or plan it, dry)")
async def consolidate(body: ConsolidationRun, caller: Writer) -> dict[str, Any]:
    def work(k: Kioku) -> dict[str, Any]:
        report = k.consolidate(body.levels, now=_checked_now(k, body.now), dry_run=body.dry_run)
        return report.to_dict()

    return await caller.run(work)
