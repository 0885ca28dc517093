"""The ``kioku`` entry point: global options, command registry and error handling."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Final

import click

from kioku import __version__
from kioku.errors import KiokuError
from kioku.interfaces.cli.autobatch import after_command
from kioku.interfaces.cli.state import CliState

__all__ = ["cli", "main"]

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

#: Each command and the module (in this package) that defines it. A command's module is
#: imported when the command runs (or ``--help`` lists them all), so a command pays only for
#: what it uses: the whole set costs a few hundred milliseconds to import.
COMMAND_MODULES: Final = {
    **dict.fromkeys(("init", "stats", "doctor", "backup"), "admin_cmds"),
    **dict.fromkeys(("add", "list", "show", "protect", "unprotect", "forget"), "memory_cmds"),
    "edit": "edit_cmds",
    **dict.fromkeys(("remember", "analyze", "compress"), "turn_cmds"),
    **dict.fromkeys(("recall", "reembed"), "recall_cmds"),
    "import": "import_cmds",
    **dict.fromkeys(("search", "write", "outcome"), "kinds_cmds"),
    **dict.fromkeys(("prime", "activity"), "priming_cmds"),
    "profile": "profile_cmds",
    "ingest": "ingest_cmds",
    "context": "context_cmds",
    **dict.fromkeys(("batch", "log"), "batch_cmds"),
    "consolidate": "consolidate_cmds",
    "midterm": "midterm_cmds",
    **dict.fromkeys(("finalize", "heartbeat"), "encoding_cmds"),
    "daemon": "daemon_cmds",
    "simulate": "simulate_cmds",
    "schedule": "schedule_cmds",
    "hook": "hook_cmds",
    "hooks": "hooks_install_cmds",
    "erase": "erase_cmds",
    **dict.fromkeys(("vacuum", "reindex", "recover"), "maintenance_cmds"),
    "export": "mirror_cmds",
    "mcp": "mcp_cmds",
    "serve": "serve_cmds",
    "keys": "keys_cmds",
    "config": "config_cmds",
    "migrate": "migrate_cmds",
}


class LazyGroup(click.Group):
    """The root group: commands are looked up in COMMAND_MODULES and imported on use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            module = importlib.import_module(f"kioku.interfaces.cli.{COMMAND_MODULES[cmd_name]}")
            for command in getattr(module, "COMMANDS", ()):
                self.commands.setdefault(str(command.name), command)
        return self.commands.get(cmd_name)

    def all_commands(self) -> dict[str, click.Command]:
        """Every command, each module imported (for documentation and tests)."""
        for name in COMMAND_MODULES:
            self.get_command(click.Context(self), name)
        return dict(sorted(self.commands.items()))


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
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
