"""Consolidation: consolidate."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kioku.interfaces.cli.inputs import parse_time_option
from kioku.interfaces.cli.render import echo_json, excerpt, plain
from kioku.interfaces.cli.state import CliState

if TYPE_CHECKING:
    from kioku.service.consolidation.runner import ConsolidationReport

__all__ = ["COMMANDS"]


def _warn(message: str) -> None:
    click.echo(f"kioku: warning: {message}", err=True)


@click.command("consolidate")
@click.option("--daily", "daily", is_flag=True, help="Only the daily consolidation.")
@click.option("--weekly", "weekly", is_flag=True, help="The weekly integration, this week.")
@click.option("--monthly", "monthly", is_flag=True, help="The monthly forgetting, this month.")
@click.option("--dry-run", is_flag=True, help="Print the plan and write nothing.")
@click.option(
    "--now",
    "now",
    metavar="ISO",
    help="Run as of this time (ISO 8601); more than a day ahead needs --force.",
)
@click.option("--force", is_flag=True, help="Allow --now more than a day ahead of the clock.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_obj
def consolidate_cmd(
    state: CliState,
    daily: bool,
    weekly: bool,
    monthly: bool,
    dry_run: bool,
    now: str | None,
    force: bool,
    as_json: bool,
) -> None:
    """Consolidate memory as it sleeps (spec 001 記憶の固定化, 能動的忘却).

    Daily: the day's episodes become knowledge and procedures (validated against their
    sources), contradicted facts are superseded, merged or kept side by side, procedures a
    newer episode changes are reconsolidated, and knowledge and procedures long unused are
    marked low. Weekly: near-duplicate knowledge is merged, old unimportant episodes are
    summarised, tool sequences repeated in the activity log become procedures, and all
    knowledge is scanned for contradictions. Monthly: items low for 60 days are forgotten
    (archived: still found by `kioku search`), old versions pruned, the mid-term tier expired.

    With no level named, every period due runs, oldest first, each exactly once; the nightly
    batch runs this after itself (consolidation.enabled). Every change is written to the
    lifecycle log (`kioku log`). Without an LLM provider, extraction lifts sentences from
    the episodes and the LLM's steps are reported as skipped. See docs/consolidation.md.
    """
    levels = [n for n, on in (("daily", daily), ("weekly", weekly), ("monthly", monthly)) if on]
    with state.open(on_warning=_warn) as kioku:
        from kioku.service.lifecycle.batch_state import check_ahead

        moment = parse_time_option(now, kioku.clock.tz, "--now") or kioku.clock.now()
        check_ahead(moment, kioku.clock.now(), force)  # forgetting by days that have not passed
        report = kioku.consolidate(levels or None, now=moment, dry_run=dry_run)
    for warning in report.warnings:
        _warn(warning)
    if as_json:
        echo_json(report.to_dict())
    else:
        _echo(report)
    if report.status == "failed":
        raise SystemExit(1)


def _echo(report: ConsolidationReport) -> None:
    if report.status == "already_running":
        click.echo("a batch or consolidation is already running; nothing to do")
        return
    if not report.periods:
        click.echo("up to date: no consolidation is due")
        return
    if report.status == "dry_run":
        click.echo("dry run, nothing written:")
    for period in report.periods:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(period.counts().items())) or "no change"
        click.echo(f"{period.level} {period.period}: {period.status} ({counts})")
        for action in period.actions:
            ids = " ".join(action.ids[:3]) + (" …" if len(action.ids) > 3 else "")
            line = f"  {action.action:<24} {ids}"
            if action.text:
                line += f"  “{excerpt(action.text, 80)}”"
            click.echo(line.rstrip())
            click.echo(f"      why: {plain(action.why)}")
        if period.error:
            click.echo(f"  error: {plain(period.error)}")


COMMANDS = [consolidate_cmd]
