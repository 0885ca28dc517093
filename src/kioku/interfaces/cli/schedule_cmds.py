"""Running the batch every night with the operating system's scheduler: schedule."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import click

from kioku.errors import KiokuError
from kioku.interfaces.cli.render import echo_json
from kioku.interfaces.cli.state import CliState

if TYPE_CHECKING:
    from kioku.service.lifecycle.schedule import SchedulePlan

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
hour_option = click.option(
    "--hour",
    type=click.IntRange(0, 23),
    help="Hour of the day (local time) [default: compression.schedule_hour].",
)
method_option = click.option(
    "--method",
    type=click.Choice(["auto", "systemd", "cron", "launchd"]),
    default="auto",
    show_default=True,
    help="auto: launchd on macOS, a systemd user timer where systemctl exists, else cron.",
)
no_activate_option = click.option(
    "--no-activate",
    is_flag=True,
    help="Only write or remove the files; run no systemctl, launchctl or crontab.",
)


class ScheduleError(KiokuError):
    """The scheduler refused a change."""


def _method(choice: str) -> str:
    from kioku.service.lifecycle.schedule import default_method

    if choice != "auto":
        return choice
    if sys.platform not in ("darwin", "linux") and not sys.platform.startswith("freebsd"):
        raise ScheduleError(
            f"kioku schedule does not know the scheduler of {sys.platform}",
            hint="create a daily task yourself that runs the command `kioku schedule show "
            "--method cron` prints",
        )
    return default_method(sys.platform, shutil.which)


def _plan(state: CliState, method: str, hour: int | None) -> SchedulePlan:
    from kioku.service.lifecycle.schedule import plan_schedule

    with state.open() as kioku:
        at = kioku.config.compression.schedule_hour if hour is None else hour
        batch_hour = kioku.config.compression.schedule_hour
    if at < batch_hour:
        click.echo(
            f"kioku: warning: {at:02d}:00 is before compression.schedule_hour ({batch_hour:02d}:00)"
            "; each run applies the previous day only",
            err=True,
        )
    try:
        return plan_schedule(method, state.home, state.config_path, at, env=os.environ)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _run(command: tuple[str, ...]) -> None:
    program = shutil.which(command[0])
    if program is None:
        raise ScheduleError(f"{command[0]} was not found", hint="install it or use --no-activate")
    done = subprocess.run(  # noqa: S603 - a fixed command, its program found on PATH
        [program, *command[1:]], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()
        raise ScheduleError(
            f"`{' '.join(command)}` failed: {why[-1] if why else f'exit {done.returncode}'}",
            hint="fix the scheduler, or pass --no-activate and enable the files yourself",
        )


def _write(plan: SchedulePlan) -> None:
    for unit in plan.files:
        unit.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = unit.path.with_name(unit.path.name + ".tmp")
        tmp.write_text(unit.text, encoding="utf-8")
        os.replace(tmp, unit.path)


def _remove(plan: SchedulePlan) -> list[str]:
    removed = []
    for unit in plan.files:
        if unit.path.exists():
            unit.path.unlink()
            removed.append(str(unit.path))
    return removed


def _crontab() -> Any:
    from kioku.service.lifecycle.schedule import CronTab

    program = shutil.which("crontab")
    return None if program is None else CronTab(program)


def _install_cron(plan: SchedulePlan, activate: bool) -> bool:
    """Add the plan's lines to the crontab (replacing an older entry); False if it cannot."""
    from kioku.service.lifecycle.schedule import without_entry

    tab = _crontab() if activate else None
    if tab is None:
        return False
    try:
        lines = without_entry(tab.read(), plan.name)
        tab.write([*lines, *plan.cron_lines])
    except OSError as exc:
        raise ScheduleError(f"the crontab could not be changed: {exc}") from None
    return True


def _echo_plan(plan: SchedulePlan) -> None:
    click.echo(f"method   {plan.method} (every day at {plan.hour:02d}:00)")
    click.echo(f"command  {' '.join(plan.command)}")
    for unit in plan.files:
        click.echo(f"\n# {unit.path}\n{unit.text.rstrip()}")
    if plan.cron_lines:
        click.echo("\n# crontab\n" + "\n".join(plan.cron_lines))
    if plan.activate:
        click.echo("\nthen: " + "; ".join(" ".join(c) for c in plan.activate))


@click.group("schedule")
def schedule_group() -> None:
    """Run the nightly batch with the operating system's scheduler.

    Linux: a systemd user service and timer (Persistent=true: a night missed while the
    machine was off runs at the next start) in ~/.config/systemd/user, or a crontab line
    where systemd is not available; macOS: a LaunchAgent in ~/Library/LaunchAgents. The
    scheduler runs this Python with -m kioku --home HOME batch. See docs/batch.md.
    """


@schedule_group.command("show")
@hour_option
@method_option
@json_option
@click.pass_obj
def show_cmd(state: CliState, hour: int | None, method: str, as_json: bool) -> None:
    """Print what `kioku schedule install` would write and run; change nothing."""
    plan = _plan(state, _method(method), hour)
    if as_json:
        echo_json(plan.to_dict())
    else:
        _echo_plan(plan)


@schedule_group.command("install")
@hour_option
@method_option
@no_activate_option
@json_option
@click.pass_obj
def install_cmd(
    state: CliState, hour: int | None, method: str, no_activate: bool, as_json: bool
) -> None:
    """Install (or replace) the nightly batch of this home in the scheduler."""
    chosen = _method(method)
    plan = _plan(state, chosen, hour)
    fell_back: str | None = None
    if plan.method == "systemd" and not no_activate:
        _write(plan)
        try:
            for command in plan.activate:
                _run(command)
        except ScheduleError as exc:
            _remove(plan)
            if method != "auto":
                raise
            fell_back = str(exc)
            plan = _plan(state, "cron", hour)
    elif plan.method != "cron":
        _write(plan)
        if not no_activate:
            if plan.method == "launchd":
                with_unload = plan.deactivate[0]
                subprocess.run(  # noqa: S603 - launchctl found on PATH, fixed arguments
                    [shutil.which("launchctl") or "launchctl", *with_unload[1:]],
                    capture_output=True,
                    check=False,
                )
            for command in plan.activate:
                _run(command)
    installed_cron = plan.method == "cron" and _install_cron(plan, not no_activate)
    activated = not no_activate and (plan.method != "cron" or installed_cron)
    if as_json:
        echo_json(
            {
                **plan.to_dict(),
                "activated": activated,
                "fallback_reason": fell_back,
            }
        )
        return
    if fell_back:
        click.echo(f"systemd is not usable here ({fell_back}); using cron instead", err=True)
    if plan.method == "cron":
        if installed_cron:
            click.echo(f"added to your crontab (every day at {plan.hour:02d}:00):")
            click.echo("\n".join(plan.cron_lines))
        else:
            click.echo("add these lines to your crontab (`crontab -e`):")
            click.echo("\n".join(plan.cron_lines))
        return
    for unit in plan.files:
        click.echo(f"wrote {unit.path}")
    if activated:
        click.echo(f"enabled: the batch runs every day at {plan.hour:02d}:00")
    else:
        click.echo("not activated; to enable it run:")
        for command in plan.activate:
            click.echo("  " + " ".join(command))


@schedule_group.command("uninstall")
@method_option
@no_activate_option
@json_option
@click.pass_obj
def uninstall_cmd(state: CliState, method: str, no_activate: bool, as_json: bool) -> None:
    """Remove the nightly batch of this home from the scheduler."""
    from kioku.service.lifecycle.schedule import without_entry

    chosen = _method(method)
    plan = _plan(state, chosen, None)
    removed: list[str] = []
    if plan.method != "cron":
        present = [u for u in plan.files if u.path.exists()]
        if present and not no_activate:
            for command in plan.deactivate:
                try:
                    _run(command)
                except ScheduleError as exc:
                    click.echo(f"kioku: warning: {exc}", err=True)
        removed = _remove(plan)
        if plan.method == "systemd" and present and not no_activate:
            try:
                _run(plan.activate[0])  # daemon-reload
            except ScheduleError as exc:
                click.echo(f"kioku: warning: {exc}", err=True)
    cron_removed = False
    tab = None if no_activate else _crontab()
    if tab is not None and plan.method in ("cron", "systemd"):
        cron_plan = _plan(state, "cron", None) if plan.method != "cron" else plan
        try:
            lines = tab.read()
            kept = without_entry(lines, cron_plan.name)
            if kept != lines:
                tab.write(kept)
                cron_removed = True
        except OSError as exc:
            raise ScheduleError(f"the crontab could not be changed: {exc}") from None
    if as_json:
        echo_json(
            {"method": plan.method, "removed": removed, "crontab_entry_removed": cron_removed}
        )
        return
    for path in removed:
        click.echo(f"removed {path}")
    if cron_removed:
        click.echo("removed the entry from your crontab")
    if not removed and not cron_removed:
        click.echo("nothing was installed for this home")


COMMANDS = [schedule_group]
