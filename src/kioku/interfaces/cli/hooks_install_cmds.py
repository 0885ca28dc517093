"""``kioku hooks install|uninstall``: kioku's hooks in Claude Code's settings.json."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from kioku.interfaces.claude_code.hook_common import EVENTS
from kioku.interfaces.claude_code.settings import (
    SCOPES,
    SettingsChange,
    command_problem,
    hook_command,
    install_hooks,
    installed_commands,
    load_settings,
    settings_path,
    uninstall_hooks,
)
from kioku.interfaces.cli.state import CliState
from kioku.service.home import resolve_home

__all__ = ["COMMANDS", "hooks_group"]

scope_option = click.option(
    "--scope",
    type=click.Choice(SCOPES),
    default="user",
    show_default=True,
    help="user: ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR); "
    "project: .claude/settings.json in the current directory.",
)
dry_run_option = click.option(
    "--dry-run", is_flag=True, help="Show what would change and write nothing."
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


@click.group("hooks")
def hooks_group() -> None:
    """Install kioku's hooks into Claude Code (UserPromptSubmit, SessionStart, SessionEnd,
    PreCompact), or take them out again.

    Other hooks and settings are kept; the previous file is saved as settings.json.bak.
    """


def _home_option(state: CliState) -> Path | None:
    """The home to name in the commands: only when it is not the default ~/.kioku."""
    home = state.home.expanduser().absolute()
    default = resolve_home(None, {}).expanduser().absolute()
    return None if home == default else home


def _broken(path: Path, commands: dict[str, str]) -> dict[str, str]:
    """The installed hook commands of ours that cannot run and that ``commands`` changes:
    event → the problem (checked before the file is touched)."""
    problems: dict[str, str] = {}
    checked: dict[str, str | None] = {}
    for event, old in installed_commands(load_settings(path)).items():
        for command in old:
            if command == commands.get(event):
                continue
            if command not in checked:
                checked[command] = command_problem(command)
            if checked[command] is not None:
                problems[event] = f"the installed command could not run: {checked[command]}"
    return problems


def _report(
    change: SettingsChange,
    *,
    dry_run: bool,
    as_json: bool,
    verb: str,
    broken: dict[str, str] | None = None,
) -> None:
    if as_json:
        data = change.to_dict(dry_run=dry_run)
        if broken is not None:
            data["broken"] = broken
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    for event, action in change.actions.items():
        note = f" ({broken[event]})" if broken and event in broken else ""
        click.echo(f"{event:<17} {action}{note}")
    if not change.changed:
        click.echo(f"{change.path}: nothing to change")
    elif dry_run:
        click.echo(f"{change.path}: would be {verb} (dry run, nothing written):")
        click.echo(change.diff(), nl=False)
    else:
        click.echo(f"{change.path}: {verb}")


@hooks_group.command("install")
@scope_option
@dry_run_option
@json_option
@click.pass_obj
def install_command(state: CliState, scope: str, dry_run: bool, as_json: bool) -> None:
    """Add kioku's hooks to Claude Code's settings.json (running it again changes nothing).

    Each hook runs this Python with kioku's entry point and `hook EVENT` (and --home when
    the home is not ~/.kioku), so it works without `kioku` on PATH. Should that Python go
    away (a deleted or recreated virtual environment), the hook prints one line saying to run
    this command again and the conversation goes on; installed commands that can no longer
    run are named when this command replaces them, and `kioku doctor` finds them.
    """
    home = _home_option(state)
    commands = {
        name: hook_command(
            event,
            python=os.path.abspath(sys.executable),
            home=home,
            config_path=state.config_path,
            user_id=state.user_id,
            agent_id=state.agent_id,
        )
        for event, name in EVENTS.items()
    }
    path = settings_path(scope, os.environ, Path.cwd())
    broken = _broken(path, commands)
    change = install_hooks(path, commands, dry_run=dry_run)
    _report(change, dry_run=dry_run, as_json=as_json, verb="updated", broken=broken)


@hooks_group.command("uninstall")
@scope_option
@dry_run_option
@json_option
@click.pass_obj
def uninstall_command(state: CliState, scope: str, dry_run: bool, as_json: bool) -> None:
    """Remove kioku's hooks from Claude Code's settings.json, leaving everything else."""
    del state
    path = settings_path(scope, os.environ, Path.cwd())
    change = uninstall_hooks(path, dry_run=dry_run)
    _report(change, dry_run=dry_run, as_json=as_json, verb="updated")


COMMANDS = [hooks_group]
