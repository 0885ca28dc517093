"""Replaying the batch on a throwaway store: simulate."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kioku.errors import KiokuError
from kioku.interfaces.cli.render import echo_json, table
from kioku.interfaces.cli.state import CliState

if TYPE_CHECKING:
    from kioku.service.lifecycle.simulate_checks import SimDay, Simulation

__all__ = ["COMMANDS"]

_TRANSITIONS = ("compressed_1_2", "compressed_2_3", "archived", "revived", "deleted")


class MissingExtraError(KiokuError):
    """An optional dependency a flag needs is not installed."""

    exit_code = 2


def _require_matplotlib() -> None:
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        raise MissingExtraError(
            "--plot needs matplotlib, which is not installed",
            hint='install it with pip install "kioku[plot]" (or pip install matplotlib)',
        ) from None


def _cell(day: SimDay, level: int) -> str:
    count = day.counts.free[level - 1]
    return f"{count} ({day.counts.share(level):.0%})"


def _rows(result: Simulation, every: int) -> list[list[str]]:
    rows: list[list[str]] = []
    sums = dict.fromkeys(("added", "recalled", *_TRANSITIONS), 0)
    for n, day in enumerate(result.days, start=1):
        sums["added"] += day.added
        sums["recalled"] += day.recalled
        for key in _TRANSITIONS:
            sums[key] += day.transitions.get(key, 0)
        if n % every and n != len(result.days) and day.ok:
            continue
        failed = [c.name for c in day.checks if not c.ok]
        rows.append(
            [
                str(day.index),
                day.day,
                str(day.counts.total),
                *(_cell(day, level) for level in (1, 2, 3, 4)),
                str(sum(day.counts.protected)),
                str(sums["added"]),
                str(sums["recalled"]),
                f"{sums['compressed_1_2']}/{sums['compressed_2_3']}",
                str(sums["archived"]),
                str(sums["revived"]),
                "FAIL " + ",".join(failed) if failed else "ok",
            ]
        )
        sums = dict.fromkeys(sums, 0)
    return rows


def _summary(result: Simulation, seed: int) -> None:
    days = result.days
    last = days[-1]
    c = last.counts
    total = {k: sum(d.transitions.get(k, 0) for d in days) for k in (*_TRANSITIONS, "ratio_forced")}
    added = sum(d.added for d in days)
    recalled = sum(d.recalled for d in days)
    source = "a copy of the store" if result.mode == "from_store" else f"synthetic, seed {seed}"
    click.echo("")
    click.echo(
        f"simulated {len(days)} day(s) ({source}): {added} memories added, {recalled} recalls, "
        f"{sum(d.revival_requests for d in days)} revival requests"
    )
    click.echo(f"after the batch of {last.day}, of {c.total_free} non-protected memories:")
    for level in (1, 2, 3, 4):
        target = result.targets[level]
        note = f"target ≤ {target:.0%}" if level < 4 else f"the rest, {target:.0%}"
        click.echo(f"  L{level}  {c.free[level - 1]:>7}  {c.share(level):6.1%}  ({note})")
    click.echo(
        f"protected   {sum(c.protected)} ({c.protected[0]} at Level 1); "
        f"{c.compression_rate:.1%} at Level 2 or lower"
    )
    click.echo(
        f"transitions {total['compressed_1_2']} summarised, {total['compressed_2_3']} reduced to "
        f"keywords, {total['archived']} archived ({total['ratio_forced']} moves forced by the "
        f"ratios), {total['revived']} revived, {total['deleted']} deleted"
    )
    failures = result.failures
    if not failures:
        click.echo(f"checks      ratios, protected, log: passed after all {len(days)} batches")
    else:
        bad_days = len({d.index for d, _ in failures})
        click.echo(f"checks      FAILED after {bad_days} of {len(days)} batches:")
        for day, check in failures[:10]:
            click.echo(f"  day {day.index} ({day.day}) {check.name}: {check.detail}")
    click.echo(f"time        {result.seconds:.1f} s ({result.seconds / len(days):.2f} s per day)")


@click.command("simulate")
@click.option(
    "--days",
    type=click.IntRange(1, 3650),
    default=365,
    show_default=True,
    help="How many daily batches to run.",
)
@click.option(
    "--per-day",
    type=click.IntRange(0, 100_000),
    help="Synthetic memories added each day [default: 20; 0 with --from-store].",
)
@click.option(
    "--from-store", is_flag=True, help="Start from a copy of this home's store (read only)."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")
@click.option(
    "--every",
    type=click.IntRange(min=1),
    help="Text output: a table row every N days [default: about 12 rows].",
)
@click.option(
    "--plot",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE.png",
    help='Draw the level distribution over time (needs pip install "kioku[plot]").',
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list, one item per day).")
@click.pass_obj
def simulate_cmd(
    state: CliState,
    days: int,
    per_day: int | None,
    from_store: bool,
    seed: int,
    every: int | None,
    plot: Path | None,
    as_json: bool,
) -> None:
    """Replay the nightly batch day after day on a temporary store; nothing real is written.

    Without --from-store the store starts empty and gets PER_DAY synthetic memories a day
    (casual/work/decision/emotional about 35/35/15/15 %, intensities 5-100, most 20-60, a few
    protected); some memories are recalled each day, and a recall of an archived one asks for
    its revival. With --from-store it starts from a copy of this home's memories. The
    configuration is this home's; no provider is called (offline embeddings, and compression
    keeps the first words of each field instead of summarising).

    After each batch three checks run: no level holds more than its target share (ratios),
    protected memories stay at Level 1 (protected), and the lifecycle log accounts for every
    level change (log). Exits 1 when a check fails.
    """
    if plot is not None:
        _require_matplotlib()
        if not plot.expanduser().absolute().parent.is_dir():
            raise click.BadParameter(
                f"{plot.parent} is not a directory; create it or choose another path",
                param_hint="--plot",
            )
    from kioku.service.lifecycle.simulate import simulate

    daily = per_day if per_day is not None else (0 if from_store else 20)
    with state.open() as kioku:
        show = not as_json and sys.stderr.isatty()
        with click.progressbar(
            length=days, label="simulating", file=sys.stderr, hidden=not show
        ) as bar:

            def progress(done: int, total: int) -> None:
                bar.update(done - bar.pos)

            result = simulate(
                kioku, days=days, per_day=daily, from_store=from_store, seed=seed, progress=progress
            )
    if plot is not None:
        from kioku.interfaces.cli.simulate_plot import draw

        draw(result, plot.expanduser())
    if as_json:
        echo_json(result.day_dicts())
    else:
        headers = [
            "DAY",
            "DATE",
            "MEMORIES",
            "L1",
            "L2",
            "L3",
            "L4",
            "P",
            "+NEW",
            "RECALLED",
            "L1→2/L2→3",
            "ARCHIVED",
            "REVIVED",
            "CHECKS",
        ]
        step = every or max(1, round(days / 12))
        click.echo(
            f"levels: non-protected memories (share); transitions are summed since the row "
            f"before; targets L1 ≤ {result.targets[1]:.0%}, L2 ≤ {result.targets[2]:.0%}, "
            f"L3 ≤ {result.targets[3]:.0%}"
        )
        click.echo(table(headers, _rows(result, step)))
        _summary(result, seed)
    if plot is not None:
        click.echo(f"plot written to {plot}", err=as_json)
    if not result.ok:
        raise click.exceptions.Exit(1)


COMMANDS = [simulate_cmd]
