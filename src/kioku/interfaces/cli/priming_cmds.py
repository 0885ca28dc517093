"""Commands of priming and the activity log: prime, activity."""

from __future__ import annotations

import json
from typing import Any

import click

from kioku.core.sanitize import for_terminal
from kioku.interfaces.cli.inputs import parse_time_option
from kioku.interfaces.cli.render import echo_json, table
from kioku.interfaces.cli.state import CliState
from kioku.service.priming.prime import TITLES, Priming

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
TYPES = click.Choice(["greeting", "question", "request", "heartbeat"])


def _priming_json(primed: Priming) -> dict[str, Any]:
    return {
        "message": primed.message,
        "message_type": primed.message_type.value,
        "total_budget": primed.total_budget,
        "channels": [
            {
                "channel": f.channel.letter,
                "name": TITLES[f.channel],
                "budget": f.budget,
                "used": f.used,
                "lines": list(f.lines),
                "why": list(f.reasons),
                "memory_ids": list(f.memory_ids),
                "skipped": f.skipped,
            }
            for f in primed.channels
        ],
        "block": primed.block,
        "chars": len(primed.block),
    }


@click.command("prime")
@click.argument("message")
@click.option("--sender", metavar="NAME", help="Who sent the message (channel A's profile).")
@click.option("--type", "message_type", type=TYPES, help="Message type (default: classified).")
@click.option("--session", "session_id", metavar="ID", help="Carry this session's emotion.")
@click.option("--explain", is_flag=True, help="Show each channel's budget, fill and reasons.")
@click.option("--mark", is_flag=True, help="Mark what is primed as recalled and log it.")
@json_option
@click.pass_obj
def prime_cmd(
    state: CliState,
    message: str,
    sender: str | None,
    message_type: str | None,
    session_id: str | None,
    explain: bool,
    mark: bool,
    as_json: bool,
) -> None:
    """Show what would be primed before MESSAGE (spec 001's automatic recall).

    The message type (greeting 500 tokens, question 1,500, request 3,000, heartbeat 200)
    sets the budget; channels share it: A sender profile (500), B recent activity (1,300),
    C related knowledge (700), D procedures (200), E episodes (800), scaled to the total,
    a quiet channel's share going to the others. Nothing is marked unless --mark.
    """
    with state.open() as kioku:
        primed = kioku.prime(
            message, sender=sender, message_type=message_type, session_id=session_id, mark=mark
        )
    if as_json:
        echo_json(_priming_json(primed))
        return
    if primed.block:
        click.echo(primed.block)
    else:
        click.echo("nothing primed", err=True)
    if explain:
        click.echo("")
        click.echo(
            f"type {primed.message_type.value}, budget {primed.total_budget} tokens, "
            f"block {len(primed.block)} characters"
        )
        rows = [
            [
                f"{f.channel.letter} {TITLES[f.channel]}",
                str(f.budget),
                str(f.used),
                str(len(f.lines)),
                str(f.skipped),
                for_terminal("; ".join(dict.fromkeys(f.reasons)))[:100] or "-",
            ]
            for f in primed.channels
        ]
        click.echo(table(["CHANNEL", "BUDGET", "USED", "LINES", "SKIPPED", "WHY"], rows))


@click.command("activity")
@click.option("--since", metavar="TIME", help="Only events at or after TIME (ISO 8601).")
@click.option("--until", metavar="TIME", help="Only events before TIME (ISO 8601).")
@click.option("--type", "types", multiple=True, help="Only events of this type (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), default=100, show_default=True)
@json_option
@click.pass_obj
def activity_cmd(
    state: CliState,
    since: str | None,
    until: str | None,
    types: tuple[str, ...],
    limit: int,
    as_json: bool,
) -> None:
    """Show the unified activity log (spec 001), oldest first: the newest LIMIT events.

    With --json, one event per line in spec 001's JSONL shape.
    """
    from kioku.core.activity.events import LABELS, EventType

    known = {t.value for t in EventType}
    for name in types:
        if name not in known:
            raise click.BadParameter(
                f"{name!r} is not an event type; use one of {', '.join(sorted(known))}",
                param_hint="--type",
            )
    with state.open() as kioku:
        tz = kioku.clock.tz
        rows = kioku.activity(
            since=parse_time_option(since, tz, "--since"),
            until=parse_time_option(until, tz, "--until"),
            types=types,
            limit=limit,
        )
    if as_json:
        for stored, _event in rows:
            click.echo(stored.line)
        return
    if not rows:
        click.echo("no activity", err=True)
        return
    for stored, event in rows:
        if event is None:
            data = json.loads(stored.line)
            click.echo(
                f"{for_terminal(str(data.get('ts', '?')))}  {data.get('type', '?')} (erased)"
            )
            continue
        text = event.content or event.summary or event.tool
        click.echo(
            f"{event.ts.isoformat(timespec='seconds')}  {LABELS[event.type]:<5} "
            f"{for_terminal(' '.join(text.split()))[:160]}"
        )


COMMANDS = (prime_cmd, activity_cmd)
