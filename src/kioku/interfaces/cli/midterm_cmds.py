"""The mid-term tier: ``kioku midterm``."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from kioku.core.timefmt import format_ts
from kioku.interfaces.cli.inputs import parse_time_option
from kioku.interfaces.cli.render import echo_json, excerpt, plain, table
from kioku.interfaces.cli.state import CliState

if TYPE_CHECKING:
    from kioku.ports.store_records import MidTermEntry

__all__ = ["COMMANDS"]


def _when(moment: datetime) -> str:
    return format_ts(moment)[:16].replace("T", " ")


def _as_dict(entry: MidTermEntry, now: datetime) -> dict[str, Any]:
    return {
        "thread_id": entry.thread_id,
        "session_id": entry.session_id,
        "created": format_ts(entry.created),
        "hot": now < entry.hot_until,
        "hot_until": format_ts(entry.hot_until),
        "expires": format_ts(entry.expires),
        "turn_count": entry.turn_count,
        "summary": entry.summary,
        "keywords": list(entry.keywords),
        "turns": list(entry.turns),
    }


@click.command("midterm")
@click.option("--thread", "thread_id", metavar="ID", help="Only the entry of this thread.")
@click.option(
    "--resume", "resume", metavar="THREAD", help="Print a thread's summary and turns in full."
)
@click.option("--now", "now", metavar="ISO", help="As of this time (ISO 8601; default now).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_obj
def midterm_cmd(
    state: CliState, thread_id: str | None, resume: str | None, now: str | None, as_json: bool
) -> None:
    """List the mid-term tier: the threads of working-memory sessions (spec 003 §2, §4).

    When a thread ends, its most salient turns (the share long_term_share of [context],
    0.7 by default) go to long-term memory and every turn to the thread's mid-term entry,
    with a summary and keywords. An entry is hot for midterm_hot_hours (24) after its last turn and
    kept for midterm_days (7), to resume a session after an interruption. --resume THREAD
    prints that thread's summary and turns. Exit 2 for a thread without an unexpired entry.
    """
    if thread_id is not None and resume is not None:
        raise click.UsageError("give --thread or --resume, not both")
    wanted = resume if resume is not None else thread_id
    with state.open() as kioku:
        moment = parse_time_option(now, kioku.clock.tz, "--now") or kioku.clock.now()
        entries = kioku.store.midterm(kioku.user_id, kioku.agent_id, moment, thread_id=wanted)
    if wanted is not None and not entries:
        raise click.BadParameter(
            f"no unexpired mid-term entry for thread {wanted!r}; `kioku midterm` lists them",
            param_hint="--resume" if resume is not None else "--thread",
        )
    if as_json:
        data = [_as_dict(e, moment) for e in entries]
        echo_json(data[0] if resume is not None else data)
    elif resume is not None:
        _echo_resume(entries[0], moment)
    elif not entries:
        click.echo("the mid-term tier is empty")
    else:
        rows = [
            [
                e.thread_id,
                _when(e.created),
                "hot" if moment < e.hot_until else "-",
                _when(e.expires),
                str(e.turn_count),
                excerpt(e.summary, 60),
            ]
            for e in entries
        ]
        click.echo(table(["THREAD", "LAST TURN", "HOT", "EXPIRES", "TURNS", "SUMMARY"], rows))


def _echo_resume(entry: MidTermEntry, now: datetime) -> None:
    hot = f"hot until {_when(entry.hot_until)}" if now < entry.hot_until else "no longer hot"
    click.echo(f"thread {plain(entry.thread_id)} (session {plain(entry.session_id or '-')})")
    click.echo(
        f"last turn {_when(entry.created)}, {hot}, kept until {_when(entry.expires)}, "
        f"{entry.turn_count} turn(s)"
    )
    click.echo("summary:")
    for line in entry.summary.splitlines() or [""]:
        click.echo(f"  {plain(line)}")
    if entry.keywords:
        click.echo(f"keywords: {plain(', '.join(entry.keywords))}")
    click.echo("turns:")
    for number, text in enumerate(entry.turns, 1):
        lines = text.splitlines() or [""]
        click.echo(f"  [{number}] {plain(lines[0])}")
        for line in lines[1:]:
            click.echo(f"      {plain(line)}")


COMMANDS = [midterm_cmd]
