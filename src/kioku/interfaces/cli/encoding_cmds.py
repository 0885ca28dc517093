"""Commands of immediate encoding at session boundaries (spec 001): finalize, heartbeat."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kioku.interfaces.cli.inputs import parse_time_option
from kioku.interfaces.cli.render import echo_json, excerpt, plain
from kioku.interfaces.cli.state import CliState

if TYPE_CHECKING:
    from kioku.service.encoding import FinalizeReport

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
now_option = click.option(
    "--now", metavar="TIME", help="Run as of this time instead of now (ISO 8601)."
)


def _warn(message: str) -> None:
    click.echo(f"kioku: warning: {plain(message)}", err=True)


def _line(report: FinalizeReport) -> str:
    session = excerpt(report.session_id, 60)
    if not report.turn_ids:
        return f"session {session}: nothing new to finalize"
    span = f"turns {report.first_turn}\u2013{report.last_turn}"
    if report.summary_id is None:
        stored = "summary not stored (its source was erased)"
    elif report.already_stored:
        stored = f"summary {report.summary_id} (stored before)"
    else:
        stored = f"summary {report.summary_id}"
    return f"session {session}: {span} finalized, {stored}, {len(report.resolved)} resolved"


def _resolved_lines(report: FinalizeReport) -> list[str]:
    return [f"  resolved: {excerpt(item, 100)}" for item in report.resolved]


@click.command("finalize")
@click.argument("session_id", metavar="SESSION")
@now_option
@json_option
@click.pass_obj
def finalize_cmd(state: CliState, session_id: str, now: str | None, as_json: bool) -> None:
    """End SESSION now (spec 001's immediate encoding).

    The session's turns not finalized yet become one session-summary episode (its trigger
    "Session SESSION: turns A–B"), and each sentence of theirs that reports something
    resolved or fixed is logged as an issue_resolved event. Running it again stores
    nothing more until the session has new turns.
    """
    with state.open(on_warning=_warn) as kioku:
        moment = parse_time_option(now, kioku.clock.tz, "--now")
        report = kioku.finalize_session(session_id, now=moment)
    if as_json:
        echo_json(report.to_dict())
        return
    click.echo(_line(report))
    for line in _resolved_lines(report):
        click.echo(line)


@click.command("heartbeat")
@click.option(
    "--idle",
    "idle_minutes",
    type=click.FloatRange(min=0, max=525_600),
    default=10,
    show_default=True,
    metavar="MINUTES",
    help="A session ends when its last turn is this old.",
)
@now_option
@json_option
@click.pass_obj
def heartbeat_cmd(state: CliState, idle_minutes: float, now: str | None, as_json: bool) -> None:
    """Finalize every session that has gone quiet (spec 001's session boundary).

    Each session whose last turn is at least --idle minutes old and has turns not finalized
    yet is finalized as `kioku finalize` does. Meant to be run periodically.
    """
    with state.open(on_warning=_warn) as kioku:
        moment = parse_time_option(now, kioku.clock.tz, "--now")
        reports = kioku.heartbeat(now=moment, idle_minutes=idle_minutes)
    if as_json:
        echo_json({"finalized": [r.to_dict() for r in reports]})
        return
    if not reports:
        click.echo("no quiet session to finalize", err=True)
        return
    for report in reports:
        click.echo(_line(report))
        for line in _resolved_lines(report):
            click.echo(line)


COMMANDS = (finalize_cmd, heartbeat_cmd)
