"""``kioku daemon start|stop|status``: the warm recall server Claude Code hooks talk to."""

from __future__ import annotations

import time

import click

from kioku.interfaces.cli.render import echo_json
from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


@click.group("daemon")
def daemon_group() -> None:
    """The warm recall daemon: keeps the store and vector cache open for hooks.

    The UserPromptSubmit hook starts it on demand and asks it first; it stops by itself after
    30 minutes without a request. It listens on HOME/daemon.sock (owner-only). Set
    KIOKU_NO_DAEMON=1 to make hooks answer in their own process instead.
    """


def _show(state: CliState, as_json: bool, extra: dict[str, object] | None = None) -> None:
    from kioku.interfaces.claude_code import daemon_client

    info: dict[str, object] = {**daemon_client.status(state.home), **(extra or {})}
    if as_json:
        echo_json(info)
    elif info["running"]:
        click.echo(f"running (pid {info['pid']}) on {info['socket']}")
    else:
        click.echo(f"not running ({info['socket']})")


@daemon_group.command("start")
@click.option(
    "--idle",
    type=click.FloatRange(min=1),
    default=1800.0,
    show_default=True,
    help="Seconds without a request before it stops.",
)
@json_option
@click.pass_obj
def start_cmd(state: CliState, idle: float, as_json: bool) -> None:
    """Start the daemon for this home in the background (nothing if one runs)."""
    from kioku.interfaces.claude_code import daemon_client

    if not daemon_client.supported():
        raise click.UsageError("the recall daemon needs Unix sockets (not available here)")
    pid = daemon_client.start_detached(state.home, state.config_path, idle)
    deadline = time.monotonic() + 30
    while pid is not None and time.monotonic() < deadline:
        if daemon_client.status(state.home)["running"]:
            break
        time.sleep(0.05)
    _show(state, as_json, {"started": pid is not None})


@daemon_group.command("stop")
@json_option
@click.pass_obj
def stop_cmd(state: CliState, as_json: bool) -> None:
    """Stop the daemon for this home (nothing if none runs)."""
    from kioku.interfaces.claude_code import daemon_client

    pid = daemon_client.stop(state.home)
    deadline = time.monotonic() + 10
    while (
        pid is not None
        and time.monotonic() < deadline
        and daemon_client.status(state.home)["running"]
    ):
        time.sleep(0.05)
    if pid is None or as_json:
        _show(state, as_json, {"stopped": pid is not None, "stopped_pid": pid})
    elif daemon_client.status(state.home)["running"]:
        click.echo(f"asked the daemon (pid {pid}) to stop; it still answers", err=True)
        raise click.exceptions.Exit(1)
    else:
        click.echo(f"stopped the daemon (pid {pid})")


@daemon_group.command("status")
@json_option
@click.pass_obj
def status_cmd(state: CliState, as_json: bool) -> None:
    """Whether a daemon answers for this home."""
    _show(state, as_json)


COMMANDS = [daemon_group]
