"""``/simulate``: the nightly batch replayed day after day on a throwaway store.

The simulation is kioku's own (:mod:`kioku.service.lifecycle.simulate`): a temporary store, no
provider called, nothing real written. By default a year; it runs in the background
(:mod:`kioku.interfaces.web.simulations`) and its page, ``/simulate/{run}``, follows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from fastapi import APIRouter, Request
from starlette.responses import Response

from kioku.core.model import Level
from kioku.errors import KiokuError
from kioku.interfaces.web.charts import stacked_chart
from kioku.interfaces.web.simulations import Job, Progress, Simulations

if TYPE_CHECKING:
    from kioku.interfaces.http.tenants import Access
    from kioku.interfaces.web.ui import Web
    from kioku.service.kioku import Kioku
    from kioku.service.lifecycle.simulate_checks import Simulation

__all__ = ["Params", "routes"]

MAX_DAYS: Final = 365
MAX_PER_DAY: Final = 20
_TRANSITIONS: Final = ("compressed_1_2", "compressed_2_3", "archived", "revived", "deleted")


@dataclass(frozen=True, slots=True)
class Params:
    days: int = 365
    per_day: int = 2
    seed: int = 0
    from_store: bool = False


def _number(fields: dict[str, str], name: str, low: int, high: int, problems: list[str]) -> int:
    raw = fields.get(name, "").strip()
    try:
        value = int(raw)
    except ValueError:
        problems.append(f"{name.replace('_', ' ')}: a whole number from {low} to {high}")
        return low
    if not low <= value <= high:
        problems.append(f"{name.replace('_', ' ')}: a whole number from {low} to {high}")
    return min(high, max(low, value))


def parse(fields: dict[str, str]) -> tuple[Params, list[str]]:
    problems: list[str] = []
    params = Params(
        days=_number(fields, "days", 1, MAX_DAYS, problems),
        per_day=_number(fields, "per_day", 0, MAX_PER_DAY, problems),
        seed=_number(fields, "seed", 0, 2**31 - 1, problems),
        from_store=fields.get("from_store") == "yes",
    )
    return params, problems


def _run(web: Web, access: Access, params: Params, progress: Progress) -> Simulation:
    """Simulate; a synthetic run never opens the store, so it does not take the owner's turn."""
    from kioku.service.lifecycle.simulate import simulate

    def replay(k: Kioku) -> Simulation:
        return simulate(
            k,
            days=params.days,
            per_day=params.per_day,
            from_store=params.from_store,
            seed=params.seed,
            progress=progress,
        )

    tenants = web.state.tenants
    if params.from_store:
        return tenants.call_sync(access, replay)
    return replay(tenants.call_sync(access, lambda k: k))


def _describe(exc: Exception) -> str | None:
    return exc.message if isinstance(exc, KiokuError) else None


def _report(result: Simulation) -> dict[str, Any]:
    days = result.days
    names = [f"L{n} {Level.NAMES[n]}" for n in (1, 2, 3, 4)]
    series = [[d.counts.level(n) for d in days] for n in (1, 2, 3, 4)]
    chart = stacked_chart([d.day for d in days], series, names)
    every = max(1, round(len(days) / 12))
    rows = [d for n, d in enumerate(days, start=1) if n % every == 0 or n in (1, len(days))]
    totals = {key: sum(d.transitions.get(key, 0) for d in days) for key in _TRANSITIONS}
    last = days[-1].counts
    return {
        "result": result,
        "chart": chart,
        "names": names,
        "rows": rows,
        "totals": totals,
        "added": sum(d.added for d in days),
        "recalled": sum(d.recalled for d in days),
        "last": [
            (names[n - 1], last.level(n), last.share(n), result.targets[n]) for n in (1, 2, 3, 4)
        ],
        "failures": result.failures[:10],
    }


def routes(web: Web) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    runs = Simulations()

    def page(
        request: Request,
        access: Access,
        p: Params,
        *,
        status: int = 200,
        problems: list[str] | None = None,
        job: Job | None = None,
    ) -> Response:
        report: dict[str, Any] = {}
        if job is not None and job.result is not None:
            report = _report(job.result)
        return web.render(
            request,
            "simulate.html",
            access=access,
            status=status,
            title="Simulate",
            p=p,
            problems=problems or [],
            job=job,
            error=job.error if job is not None else "",
            max_days=MAX_DAYS,
            max_per_day=MAX_PER_DAY,
            **report,
        )

    @router.get("/simulate")
    async def form(request: Request) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        return page(request, access, Params(), job=runs.running_for(access))

    @router.post("/simulate")
    async def run(request: Request) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        fields = await web.form(request, access)
        if isinstance(fields, Response):
            return fields
        params, problems = parse(fields)
        if problems:
            return page(request, access, params, status=422, problems=problems)
        job = runs.start(
            access,
            params,
            params.days,
            lambda progress: _run(web, access, params, progress),
            _describe,
        )
        return web.redirect(f"/simulate/{job.id}")

    @router.get("/simulate/{run_id}")
    async def follow(request: Request, run_id: str) -> Response:
        access = await web.access(request)
        if isinstance(access, Response):
            return access
        job = runs.get(access, run_id)
        if job is None:
            return web.error(
                request,
                404,
                "No such simulation",
                "This simulation is not known here: runs are kept in memory, a few at a time.",
                access=access,
                hint="start a new one from the Simulate page",
            )
        params = job.params if isinstance(job.params, Params) else Params()
        return page(request, access, params, job=job)

    return router
