"""The nightly batch and its record: batch, log."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

import click

from kioku.core.lifecycle.log import Event
from kioku.core.timefmt import format_ts
from kioku.interfaces.cli.inputs import parse_time_option
from kioku.interfaces.cli.render import echo_json, excerpt, table
from kioku.interfaces.cli.state import CliState

if TYPE_CHECKING:
    from kioku.core.lifecycle.log import LogEntry
    from kioku.service.lifecycle.batch import BatchReport, DaySummary

__all__ = ["COMMANDS", "echo_shares"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")

_DAY_HEADERS = [
    "DAY",
    "MEMORIES",
    "REINFORCED",
    "L1→2",
    "L2→3",
    "ARCHIVED",
    "RATIO",
    "REVIVED",
    "DEFERRED",
    "DELETED",
    "LINKS +/-/TURNED",
    "SECONDS",
]


def _day_row(d: DaySummary) -> list[str]:
    return [
        d.day,
        str(d.memories),
        str(d.reinforced),
        str(d.compressed.get("1->2", 0)),
        str(d.compressed.get("2->3", 0)),
        str(d.archived),
        str(d.ratio_forced),
        str(d.revived),
        str(d.revivals_deferred),
        str(d.deleted),
        f"{d.linked}/{d.unlinked}/{d.turned}",
        f"{d.seconds:.2f}",
    ]


def echo_shares(
    shares: Mapping[str, Mapping[str, int]], targets: Mapping[int, float], min_memories: int
) -> None:
    """Per scope: each level's count and share of the non-protected memories vs its target."""
    for scope, counts in shares.items():
        total = counts["total"]
        note = "" if total >= min_memories else f"; ratios enforced from {min_memories}"
        click.echo(f"{scope}: {total} non-protected memories{note}")
        for level, key in ((1, "level1"), (2, "level2"), (3, "level3"), (4, "archived")):
            count = counts[key]
            share = count / total if total else 0.0
            target = f"target ≤ {targets[level]:.0%}" if level < 4 else "the rest"
            click.echo(f"  L{level}  {count:>7}  {share:6.1%}  ({target})")


def _warn(message: str) -> None:
    click.echo(f"kioku: warning: {message}", err=True)


def _next_batch(report: BatchReport, hour: int, like: Any) -> str | None:
    from kioku.core.lifecycle.days import batch_moment

    if report.last_day is None:
        return None
    day = date.fromisoformat(report.last_day) + timedelta(days=1)
    return format_ts(batch_moment(day, hour, like))


@click.command("batch")
@click.option(
    "--now",
    "now",
    metavar="ISO",
    help="Run as of this time instead of now (ISO 8601); more than a day ahead needs --force.",
)
@click.option("--force", is_flag=True, help="Allow --now more than a day ahead of the clock.")
@click.option(
    "--auto",
    is_flag=True,
    help="Run as the scheduler does: catch up at most batch.max_auto_catch_up_days days.",
)
@click.option("--dry-run", is_flag=True, help="Plan the next due day and write nothing.")
@json_option
@click.pass_obj
def batch_cmd(
    state: CliState, now: str | None, force: bool, auto: bool, dry_run: bool, as_json: bool
) -> None:
    """Run the nightly batch: every day due since the last one, oldest first.

    Each day, as spec 000 lays it out: recalled memories are reinforced and the others age a
    day, scores are recomputed, memories below a threshold are summarised, reduced to
    keywords or archived, levels over their target share are compressed (ratio enforcement),
    relations are checked, new memories are linked, requested revivals and auto-deletion
    happen. Each day is one transaction and is applied exactly once; a batch started while
    another runs returns at once. Every change is written to the lifecycle log (`kioku log`).

    Schedule it with `kioku schedule install`. When it has not run for
    compression.interval_hours, other commands start it in the background (set
    KIOKU_NO_AUTO_BATCH=1 to turn that off). Those automatic batches run with --auto: they
    catch up at most batch.max_auto_catch_up_days days and say how to apply the rest. A
    clock before the last batch day changes nothing. See docs/batch.md.
    """
    from kioku.service.lifecycle.batch import check_ahead

    with state.open(on_warning=_warn) as kioku:
        moment = parse_time_option(now, kioku.clock.tz, "--now") or kioku.clock.now()
        check_ahead(moment, kioku.clock.now(), force)
        show = not as_json and sys.stderr.isatty()
        with click.progressbar(length=1, label="batch", file=sys.stderr, hidden=not show) as bar:

            def progress(label: str, done: int, total: int) -> None:
                bar.length = max(total, 1)
                bar.label = label
                bar.update(done - bar.pos)

            # The process exits next: it waits for the vector graph the batch leaves to build.
            report = kioku.batch(
                now=moment, dry_run=dry_run, progress=progress, auto=auto, wait_for_vectors=True
            )
            bar.update((bar.length or 1) - bar.pos)
        compression = kioku.config.compression
        from kioku.core.lifecycle.plan import ratio_targets

        targets = ratio_targets(kioku.config)
        next_at = _next_batch(report, compression.schedule_hour, moment)
        home = kioku.home
    if as_json:
        echo_json({**report.to_dict(), "next_batch_at": next_at})
        return
    if report.status == "clock_behind":
        click.echo(f"nothing done: the clock is before the last batch day ({report.last_day})")
        return
    if report.status == "already_running":
        click.echo(f"a batch is already running for {home}; nothing to do")
        return
    if report.status == "up_to_date":
        click.echo(
            f"up to date: the last batch day was {report.last_day}; "
            f"the next batch is due at {next_at}"
        )
        return
    if report.status == "dry_run":
        due = report.due
        span = due[0] if len(due) == 1 else f"{due[0]} … {due[-1]}"
        click.echo(
            f"dry run, nothing written: {len(due)} day(s) due ({span}); the plan of {due[0]}:"
        )
    click.echo(table(_DAY_HEADERS, [_day_row(d) for d in report.days]))
    if report.days and report.days[-1].shares:
        last = report.days[-1]
        click.echo("")
        click.echo(f"level shares after {last.day}:")
        echo_shares(last.shares, targets, compression.ratio_min_memories)


def _arrow(before: object, after: object, fmt: str) -> str:
    def one(value: object) -> str:
        return "–" if value is None else format(value, fmt)

    if before is None and after is None:
        return ""
    if before == after:
        return one(before)
    return f"{one(before)}→{one(after)}"


def _details(details: Mapping[str, object]) -> str:
    parts: list[str] = []
    for key, value in details.items():
        if isinstance(value, list) and len(value) == 2:
            a, b = value
            shown = (
                f"{a:g}→{b:g}" if isinstance(a, int | float) and isinstance(b, int | float) else ""
            )
            parts.append(f"{key} {shown or value}")
        elif isinstance(value, float):
            parts.append(f"{key}={value:g}")
        else:
            parts.append(f"{key}={value}")
    return " ".join(parts)


def log_entry_to_dict(e: LogEntry) -> dict[str, Any]:
    return {
        "seq": e.seq,
        "at": format_ts(e.at),
        "event": e.event.value,
        "memory_id": e.memory_id,
        "user_id": e.user_id,
        "agent_id": e.agent_id,
        "batch_day": e.batch_day,
        "level_before": e.level_before,
        "level_after": e.level_after,
        "score_before": e.score_before,
        "score_after": e.score_after,
        "details": dict(e.details),
    }


def _log_rows(entries: Sequence[LogEntry], tz: Any, scopes: bool) -> list[list[str]]:
    rows = []
    for e in entries:
        row = [
            format_ts(e.at.astimezone(tz))[:16].replace("T", " "),
            e.event.value,
            e.memory_id,
            _arrow(e.level_before, e.level_after, "d"),
            _arrow(e.score_before, e.score_after, ".1f"),
            excerpt(_details(e.details), 60),
        ]
        if scopes:
            row.insert(1, f"{e.user_id}/{e.agent_id}")
        rows.append(row)
    return rows


@click.command("log")
@click.option("--id", "memory_id", metavar="ID", help="Only this memory.")
@click.option("--since", metavar="ISO", help="Only entries at or after this time (ISO 8601).")
@click.option(
    "--event",
    "events",
    multiple=True,
    type=click.Choice([e.value for e in Event], case_sensitive=False),
    help="Only these events (repeatable).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=100,
    show_default=True,
    help="Show the newest N entries (still oldest first).",
)
@click.option("--all-scopes", is_flag=True, help="Every user and agent, not only this one.")
@json_option
@click.pass_obj
def log_cmd(
    state: CliState,
    memory_id: str | None,
    since: str | None,
    events: tuple[str, ...],
    limit: int,
    all_scopes: bool,
    as_json: bool,
) -> None:
    """Show the lifecycle log, oldest first: what the batch and `kioku forget` did.

    Events: reinforce (a recall applied), compress (Level 1→2 summary, 2→3 keywords),
    archive (to Level 4), revive (back to Level 3), defer (a revival turned down: Level 3
    full), delete (auto-delete or forget), link and unlink (relations).
    """
    with state.open() as kioku:
        since_at = parse_time_option(since, kioku.clock.tz, "--since")
        entries = kioku.lifecycle_log(
            memory_id=memory_id,
            since=since_at,
            events=[e.lower() for e in events] or None,
            limit=limit,
            all_scopes=all_scopes,
        )
        tz = kioku.clock.tz
    if as_json:
        echo_json([log_entry_to_dict(e) for e in entries])
        return
    if not entries:
        click.echo("no log entries match", err=True)
        return
    headers = ["TIME", "EVENT", "MEMORY", "LEVEL", "SCORE", "DETAILS"]
    if all_scopes:
        headers.insert(1, "SCOPE")
    click.echo(table(headers, _log_rows(entries, tz, all_scopes)))
    if len(entries) == limit:
        click.echo(f"(the newest {limit}; use --limit or --since for others)", err=True)


COMMANDS = [batch_cmd, log_cmd]
