"""``kioku hook EVENT``: the commands Claude Code runs for its hook events.

The usual way in is the fast path of :mod:`kioku.interfaces.claude_code.hook_fast` (the entry point
sends ``kioku hook ...`` there before click is loaded); these click commands give ``--help``
and the same behaviour when the fast path defers.
"""

from __future__ import annotations

import json
import os

import click

from kioku.interfaces.claude_code.hooks import EVENTS, HookOptions, drain, log_error, run_hook
from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS", "hook_group"]


def _options(state: CliState) -> HookOptions:
    return HookOptions(state.home_arg, state.config_path, state.user_id, state.agent_id)


@click.group("hook")
def hook_group() -> None:
    """Claude Code hook entry points (read the hook's JSON on stdin; always exit 0).

    Install them with `kioku hooks install`. Errors are one line on stderr and in
    HOME/hooks.log; the conversation is never blocked.

    \b
    user-prompt-submit  print the <memories> block for the prompt
    session-start       print the strongest few memories; start an overdue batch
    session-end         queue the transcript in HOME/inbox.jsonl and start `hook drain`
    pre-compact         the same as session-end, before the context is compacted
    drain               ingest the queued transcripts (the background worker)
    """


_HELP = {
    "user-prompt-submit": "Print the <memories> block relevant to the prompt (nothing for a "
    "slash command or an empty prompt).",
    "session-start": "Print the strongest few memories and start an overdue batch.",
    "session-end": "Queue the session's transcript and ingest it in the background.",
    "pre-compact": "Queue the transcript before compaction and ingest it in the background.",
}


def _event_command(event: str) -> click.Command:
    @click.pass_obj
    def command(state: CliState) -> None:
        run_hook(event, _options(state))

    command.__doc__ = _HELP[event]
    return click.command(event, help=_HELP[event])(command)


@click.command("drain")
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
@click.pass_obj
def drain_command(state: CliState, as_json: bool) -> None:
    """Ingest every transcript queued by the session-end and pre-compact hooks.

    One drain runs at a time; entries leave the queue only once ingested, so running it again
    after a crash is safe.
    """
    options = _options(state)
    home = options.resolved_home
    try:
        report = drain(options)
    except Exception as exc:
        if os.environ.get("KIOKU_DEBUG"):
            raise
        log_error(home, "drain", f"{type(exc).__name__}: {exc}")
        return
    for error in report.errors:
        log_error(home, "drain", error)
    if as_json:
        click.echo(json.dumps(report.to_dict(), ensure_ascii=False))
    elif report.busy:
        click.echo("another drain is running")
    else:
        click.echo(
            f"ingested {report.ingested} transcript(s), {report.added} new memories; "
            f"{report.failed} failed, {report.dead} moved to the dead-letter file"
        )


for _event in EVENTS:
    hook_group.add_command(_event_command(_event))
hook_group.add_command(drain_command)

COMMANDS = [hook_group]
