"""The ``kioku`` entry point: global options, command registry and error handling."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from kioku import __version__
from kioku.errors import KiokuError
from kioku.interfaces.cli import (
    admin_cmds,
    batch_cmds,
    consolidate_cmds,
    context_cmds,
    daemon_cmds,
    edit_cmds,
    encoding_cmds,
    erase_cmds,
    hook_cmds,
    hooks_install_cmds,
    ingest_cmds,
    keys_cmds,
    kinds_cmds,
    maintenance_cmds,
    mcp_cmds,
    memory_cmds,
    midterm_cmds,
    mirror_cmds,
    priming_cmds,
    profile_cmds,
    recall_cmds,
    schedule_cmds,
    serve_cmds,
    simulate_cmds,
    turn_cmds,
)
from kioku.interfaces.cli.autobatch import after_command
from kioku.interfaces.cli.config_cmds import config_group
from kioku.interfaces.cli.state import CliState

__all__ = ["cli", "main"]

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(context_settings=CONTEXT_SETTINGS)
@click.option(
    "--home",
    type=click.Path(path_type=Path, file_okay=False),
    envvar="KIOKU_HOME",
    help="Home directory with config.toml and memories.db [env KIOKU_HOME; default ~/.kioku].",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    envvar="KIOKU_CONFIG",
    help="Config file, TOML or .json [env KIOKU_CONFIG; default HOME/config.toml].",
)
@click.option(
    "--user", "user_id", metavar="ID", help="Owner of the memories (default from config)."
)
@click.option("--agent", "agent_id", metavar="ID", help="Agent the memories belong to.")
@click.version_option(__version__, "-V", "--version", prog_name="kioku")
@click.pass_context
def cli(
    ctx: click.Context,
    home: Path | None,
    config_path: Path | None,
    user_id: str | None,
    agent_id: str | None,
) -> None:
    """kioku (記憶): long-term memory that remembers and forgets the way people do.

    Emotional moments last, small talk fades, what is recalled gets stronger. Everything
    runs offline on an embedded SQLite store in the home directory.

    Exit codes: 0 success, 1 runtime error (e.g. locked or corrupt database, unknown id),
    2 bad input (usage, validation, configuration).

    A command that finds the nightly batch overdue starts it in the background (see
    `kioku batch`); set KIOKU_NO_AUTO_BATCH=1 to turn that off.
    """
    ctx.obj = CliState(home, config_path, user_id, agent_id)


@cli.result_callback()
@click.pass_context
def _after(ctx: click.Context, _result: object, /, **_options: object) -> None:
    """After a command succeeded: the spec's fallback trigger for an overdue batch."""
    if isinstance(ctx.obj, CliState):
        after_command(ctx.obj, ctx.invoked_subcommand)


for _command in [
    *admin_cmds.COMMANDS,
    *memory_cmds.COMMANDS,
    *edit_cmds.COMMANDS,
    *turn_cmds.COMMANDS,
    *recall_cmds.COMMANDS,
    *kinds_cmds.COMMANDS,
    *priming_cmds.COMMANDS,
    *profile_cmds.COMMANDS,
    *ingest_cmds.COMMANDS,
    *context_cmds.COMMANDS,
    *batch_cmds.COMMANDS,
    *consolidate_cmds.COMMANDS,
    *midterm_cmds.COMMANDS,
    *encoding_cmds.COMMANDS,
    *daemon_cmds.COMMANDS,
    *simulate_cmds.COMMANDS,
    *schedule_cmds.COMMANDS,
    *hook_cmds.COMMANDS,
    *hooks_install_cmds.COMMANDS,
    *erase_cmds.COMMANDS,
    *maintenance_cmds.COMMANDS,
    *mirror_cmds.COMMANDS,
    *mcp_cmds.COMMANDS,
    *serve_cmds.COMMANDS,
    *keys_cmds.COMMANDS,
    config_group,
]:
    cli.add_command(_command)


def _fail(message: str, code: int) -> None:
    click.echo(f"kioku: error: {message}", err=True)
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; errors become one line on stderr and an exit code."""
    try:
        code = cli.main(args=argv, prog_name="kioku", standalone_mode=False)
    except click.exceptions.Abort:
        _fail("aborted", 130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KiokuError as exc:
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except BrokenPipeError:
        sys.stderr.close()
        sys.exit(1)
    except Exception as exc:
        if os.environ.get("KIOKU_DEBUG"):
            raise
        _fail(f"internal error: {type(exc).__name__}: {exc} (set KIOKU_DEBUG=1 for details)", 1)
    else:
        sys.exit(code if isinstance(code, int) else 0)
