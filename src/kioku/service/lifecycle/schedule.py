"""When the nightly batch is due, how it is started in the background, and the files that let
the operating system run it every night (圧縮処理のスケジューリング).

Three ways to run ``python -m kioku --home HOME batch`` every day at a fixed hour:

* ``systemd``: a user service and timer (``OnCalendar=*-*-* HH:00:00``, ``Persistent=true`` so
  a night missed while the machine was off runs at the next boot) in
  ``$XDG_CONFIG_HOME/systemd/user`` (default ``~/.config/systemd/user``);
* ``cron``: one crontab line (``0 HH * * *``);
* ``launchd`` (macOS): a LaunchAgent plist in ``~/Library/LaunchAgents``.

Everything here that depends on the machine (environment, platform, which programs exist)
is a parameter, so the files can be generated and checked anywhere.
"""

from __future__ import annotations

import hashlib
import os
import plistlib
import shlex
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Final

from kioku.core.lifecycle.days import batch_moment, due_days, is_overdue
from kioku.core.timefmt import format_ts

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = [
    "AUTO_BATCH_ENV",
    "METHODS",
    "BatchStatus",
    "CronTab",
    "SchedulePlan",
    "UnitFile",
    "auto_batch_disabled",
    "batch_command",
    "batch_status",
    "default_method",
    "plan_schedule",
    "start_detached_batch",
    "without_entry",
]

#: Set to 1 to stop commands from starting an overdue batch in the background.
AUTO_BATCH_ENV: Final = "KIOKU_NO_AUTO_BATCH"
METHODS: Final = ("systemd", "cron", "launchd")
LOG_NAME: Final = "batch.log"
#: batch.log is moved to batch.log.1 when it grows past this.
LOG_MAX_BYTES: Final = 1 << 20


# -- is a batch due? -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BatchStatus:
    """Where the batch stands for a store, as of ``now``."""

    last_day: date | None  # the last batch day applied
    last_run: datetime | None  # when a batch last finished
    due: tuple[date, ...]  # days a batch run now would apply
    overdue: bool  # due, and no batch for ``interval_hours``: the fallback would start one
    next_at: datetime  # the first due day's batch time, or the next one when none is due

    def to_dict(self) -> dict[str, object]:
        return {
            "last_day": None if self.last_day is None else self.last_day.isoformat(),
            "last_run": None if self.last_run is None else format_ts(self.last_run),
            "due_days": len(self.due),
            "overdue": self.overdue,
            "next_batch_at": format_ts(self.next_at),
        }


def batch_status(engine: Engine, now: datetime | None = None) -> BatchStatus:
    """The batch state of ``engine``'s store: the fallback trigger of the spec is
    ``is_overdue(last_compression_run)`` and at least one day due."""
    from kioku.service.lifecycle.batch_state import last_day, last_run

    moment = now or engine.clock.now()
    compression = engine.config.compression
    done = last_day(engine)
    ran = last_run(engine)
    due = tuple(due_days(done, moment, compression.schedule_hour))
    overdue = bool(due) and is_overdue(ran, moment, compression.interval_hours)
    if due:
        next_at = batch_moment(due[0], compression.schedule_hour, moment)
    else:
        assert done is not None  # nothing is due only once a day was applied
        next_at = batch_moment(done + timedelta(days=1), compression.schedule_hour, moment)
    return BatchStatus(done, ran, due, overdue, next_at)


def auto_batch_disabled(env: Mapping[str, str]) -> bool:
    """``KIOKU_NO_AUTO_BATCH`` set to anything but empty, 0, false or no."""
    return env.get(AUTO_BATCH_ENV, "").strip().lower() not in ("", "0", "false", "no")


# -- the command ---------------------------------------------------------------------------


def batch_command(
    home: Path, config_path: Path | None = None, python: str | None = None
) -> list[str]:
    """``python -m kioku --home HOME [--config FILE] batch --auto``, with absolute paths.

    ``--auto``: a batch nobody started by hand catches up at most
    ``batch.max_auto_catch_up_days`` days, so a clock gone wrong cannot age the whole store.
    """
    command = [python or os.path.abspath(sys.executable), "-m", "kioku"]
    command += ["--home", str(Path(home).expanduser().absolute())]
    if config_path is not None:
        command += ["--config", str(Path(config_path).expanduser().absolute())]
    return [*command, "batch", "--auto"]


def start_detached_batch(home: Path, config_path: Path | None, reason: str) -> int:
    """Start ``kioku batch --json`` in its own session, output appended to ``HOME/batch.log``,
    and return at once with its process id (never waits for it)."""
    log = Path(home) / LOG_NAME
    try:
        if log.stat().st_size > LOG_MAX_BYTES:
            os.replace(log, log.with_name(LOG_NAME + ".1"))
    except OSError:
        pass
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        stamp = datetime.now().astimezone().isoformat(timespec="seconds")
        os.write(fd, f"# {stamp} overdue batch started by {reason}\n".encode())
        env = dict(os.environ)
        env[AUTO_BATCH_ENV] = "1"
        options: dict[str, object] = {}
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            flags = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
            options["creationflags"] = flags
        else:
            options["start_new_session"] = True
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
            [*batch_command(home, config_path), "--json"],
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            close_fds=True,
            cwd=str(home),
            env=env,
            **options,  # type: ignore[call-overload]
        )
    finally:
        os.close(fd)
    return int(process.pid)


# -- files for the operating system --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UnitFile:
    """A file the scheduler installs, and what it holds."""

    path: Path
    text: str


@dataclass(frozen=True, slots=True)
class SchedulePlan:
    """What ``kioku schedule install`` writes and runs for one home."""

    method: str  # "systemd", "cron" or "launchd"
    name: str  # unit name / launchd label / crontab marker
    hour: int
    command: tuple[str, ...]  # the batch command the scheduler runs
    files: tuple[UnitFile, ...]  # files to write (none for cron)
    activate: tuple[tuple[str, ...], ...]  # commands that enable it
    deactivate: tuple[tuple[str, ...], ...]  # commands that disable it
    cron_lines: tuple[str, ...] = ()  # the crontab lines (cron only)

    def to_dict(self) -> dict[str, object]:
        return {
            "method": self.method,
            "name": self.name,
            "hour": self.hour,
            "command": list(self.command),
            "files": [{"path": str(f.path), "content": f.text} for f in self.files],
            "activate": [list(c) for c in self.activate],
            "deactivate": [list(c) for c in self.deactivate],
            "cron_lines": list(self.cron_lines),
        }


def default_method(platform: str, which: Callable[[str], str | None]) -> str:
    """launchd on macOS; systemd where ``systemctl`` exists; cron otherwise."""
    if platform == "darwin":
        return "launchd"
    if which("systemctl"):
        return "systemd"
    return "cron"


def _unit_name(home: Path, env: Mapping[str, str]) -> str:
    """``kioku-batch`` for ``~/.kioku``; other homes get a suffix from their path."""
    default = _user_home(env) / ".kioku"
    if home == default:
        return "kioku-batch"
    digest = hashlib.sha256(str(home).encode()).hexdigest()[:8]
    return f"kioku-batch-{digest}"


def _user_home(env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) if env.get("HOME") else Path.home()


def _systemd_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CONFIG_HOME", "").strip()
    root = Path(base) if base and Path(base).is_absolute() else _user_home(env) / ".config"
    return root / "systemd" / "user"


def _systemd_quote(arg: str) -> str:
    """One ExecStart argument: double-quoted, with systemd's escapes for \\ " % and $."""
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("%", "%%").replace("$", "$$") + '"'


def _systemd_text(text: str) -> str:
    """A free-text value (Description): specifiers escaped."""
    return text.replace("%", "%%")


def _check_paths(command: Sequence[str]) -> None:
    for arg in command:
        if "\n" in arg or "\r" in arg or "\x00" in arg:
            raise ValueError(f"a path with a line break cannot be scheduled: {arg!r}")


def plan_schedule(
    method: str,
    home: Path,
    config_path: Path | None,
    hour: int,
    *,
    env: Mapping[str, str],
    python: str | None = None,
) -> SchedulePlan:
    """The files and commands that run the batch of ``home`` every day at ``hour``:00."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    if not 0 <= hour <= 23:
        raise ValueError(f"hour must be 0 to 23, not {hour}")
    home = Path(home).expanduser().absolute()
    command = tuple(batch_command(home, config_path, python))
    _check_paths(command)
    name = _unit_name(home, env)
    if method == "systemd":
        return _systemd_plan(name, home, command, hour, env)
    if method == "launchd":
        return _launchd_plan(name, home, command, hour, env)
    return _cron_plan(name, home, command, hour)


def _systemd_plan(
    name: str, home: Path, command: tuple[str, ...], hour: int, env: Mapping[str, str]
) -> SchedulePlan:
    folder = _systemd_dir(env)
    header = "# Written by `kioku schedule install`; remove with `kioku schedule uninstall`.\n"
    service = (
        f"{header}[Unit]\n"
        f"Description={_systemd_text(f'kioku nightly memory batch for {home}')}\n\n"
        "[Service]\n"
        "Type=oneshot\n"
        f"ExecStart={' '.join(_systemd_quote(a) for a in command)}\n"
    )
    timer = (
        f"{header}[Unit]\n"
        f"Description=Run the kioku batch every day at {hour:02d}:00\n\n"
        "[Timer]\n"
        f"OnCalendar=*-*-* {hour:02d}:00:00\n"
        "Persistent=true\n\n"
        "[Install]\n"
        "WantedBy=timers.target\n"
    )
    systemctl = ("systemctl", "--user")
    return SchedulePlan(
        method="systemd",
        name=name,
        hour=hour,
        command=command,
        files=(
            UnitFile(folder / f"{name}.service", service),
            UnitFile(folder / f"{name}.timer", timer),
        ),
        activate=(
            (*systemctl, "daemon-reload"),
            (*systemctl, "enable", "--now", f"{name}.timer"),
        ),
        deactivate=((*systemctl, "disable", "--now", f"{name}.timer"),),
    )


def _launchd_plan(
    name: str, home: Path, command: tuple[str, ...], hour: int, env: Mapping[str, str]
) -> SchedulePlan:
    label = name.replace("kioku-batch", "kioku.batch").replace("-", ".")
    path = _user_home(env) / "Library" / "LaunchAgents" / f"{label}.plist"
    log = str(home / LOG_NAME)
    plist = {
        "Label": label,
        "ProgramArguments": list(command),
        "StartCalendarInterval": {"Hour": hour, "Minute": 0},
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }
    text = plistlib.dumps(plist, sort_keys=False).decode("utf-8")
    return SchedulePlan(
        method="launchd",
        name=label,
        hour=hour,
        command=command,
        files=(UnitFile(path, text),),
        activate=(("launchctl", "load", "-w", str(path)),),
        deactivate=(("launchctl", "unload", "-w", str(path)),),
    )


def _cron_plan(name: str, home: Path, command: tuple[str, ...], hour: int) -> SchedulePlan:
    log = shlex.quote(str(home / LOG_NAME))
    run = " ".join(shlex.quote(a) for a in command)
    line = f"0 {hour} * * * {run} >> {log} 2>&1".replace("%", "\\%")
    return SchedulePlan(
        method="cron",
        name=name,
        hour=hour,
        command=command,
        files=(),
        activate=(),
        deactivate=(),
        cron_lines=(f"# {name}: kioku nightly batch for {home}".replace("\n", " "), line),
    )


# -- crontab -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CronTab:
    """Reading and writing the user's crontab with the ``crontab`` program."""

    program: str

    def read(self) -> list[str]:
        done = subprocess.run(  # noqa: S603 - crontab found on PATH, fixed arguments
            [self.program, "-l"], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            if "no crontab" in done.stderr.lower():
                return []
            raise OSError(done.stderr.strip() or f"crontab -l exited {done.returncode}")
        return done.stdout.splitlines()

    def write(self, lines: Sequence[str]) -> None:
        text = "\n".join(lines).rstrip("\n") + "\n" if lines else ""
        done = subprocess.run(  # noqa: S603 - crontab found on PATH, fixed arguments
            [self.program, "-"], input=text, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise OSError(done.stderr.strip() or f"crontab - exited {done.returncode}")


def without_entry(lines: Sequence[str], name: str) -> list[str]:
    """``lines`` without the marker comment of ``name`` and the line after it."""
    out: list[str] = []
    skip = False
    for line in lines:
        if skip:
            skip = False
            continue
        if line.startswith(f"# {name}: "):
            skip = True
            continue
        out.append(line)
    return out
