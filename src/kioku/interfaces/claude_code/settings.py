"""kioku's hooks in Claude Code's ``settings.json`` (Hook 設定): merge them in, take them out.

The file's format::

    {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "..."}]}]}}

Our entries are the hook commands that run kioku's entry point with ``hook``: the form we
write, ``PYTHON -P -c 'from kioku.interfaces.cli.entry import main; main()' hook EVENT`` (with
a fallback message when PYTHON is gone, see :func:`hook_command`), and the
``PYTHON -m kioku hook EVENT`` of earlier versions; everything else (other hooks, other
settings, key order) is kept as it is. :func:`command_problem` tells whether an installed
command can still run. The ``-c`` form spares every prompt the ``runpy``
machinery of ``-m`` (about 5 ms), and ``-P`` keeps the project directory Claude Code runs the
hook in off the import path, so a file there cannot shadow a module the hook imports. Writes
are atomic and keep the previous file as ``settings.json.bak``.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from kioku.errors import KiokuError
from kioku.interfaces.claude_code.hook_common import EVENTS

__all__ = [
    "ENTRY",
    "MARKER",
    "SCOPES",
    "SettingsChange",
    "SettingsError",
    "command_problem",
    "hook_command",
    "install_hooks",
    "installed_commands",
    "is_ours",
    "load_settings",
    "plan_install",
    "plan_uninstall",
    "render_settings",
    "settings_path",
    "uninstall_hooks",
    "write_settings",
]

#: The code our hook commands run (``python -P -c ENTRY ... hook EVENT``).
ENTRY: Final = "from kioku.interfaces.cli.entry import main; main()"
#: A hook command is ours when it contains this or ENTRY (or ``-m kioku``, options, ``hook``).
MARKER: Final = "-m kioku hook"
SCOPES: Final = ("user", "project")
#: What an installed hook command prints when kioku cannot run (``$?``: the exit status).
_BROKEN: Final = (
    "kioku hook {event}: kioku could not run (exit $?): its Python or kioku itself is gone; "
    "run kioku hooks install again (kioku doctor checks the installed hooks)"
)


class SettingsError(KiokuError):
    """settings.json cannot be read as a JSON object; nothing was written."""

    exit_code = 2


def settings_path(scope: str, env: Mapping[str, str], cwd: Path) -> Path:
    """``$CLAUDE_CONFIG_DIR/settings.json`` or ``~/.claude/settings.json`` for ``user``;
    ``CWD/.claude/settings.json`` for ``project``."""
    if scope == "project":
        return cwd / ".claude" / "settings.json"
    if scope != "user":
        raise ValueError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    base = env.get("CLAUDE_CONFIG_DIR", "").strip()
    if base:
        return Path(base).expanduser() / "settings.json"
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".claude" / "settings.json"


def hook_command(
    event: str,
    *,
    python: str | None = None,
    home: Path | None = None,
    config_path: Path | None = None,
    user_id: str | None = None,
    agent_id: str | None = None,
) -> str:
    """The shell command for ``kioku hook EVENT`` with this interpreter (absolute path).

    On POSIX the command ends with ``|| echo ... >&2``: when the interpreter is gone or can no
    longer import kioku (a virtual environment deleted or recreated without kioku), the shell
    prints one line that says to run ``kioku hooks install`` again, and the hook still exits
    0 so the conversation goes on. A working hook always exits 0, so the line never shows
    otherwise; the shell's cost is one fork (the shell runs the command either way)."""
    args = [python or os.path.abspath(sys.executable), "-P", "-c", ENTRY]
    if home is not None:
        args += ["--home", str(Path(home).expanduser().absolute())]
    if config_path is not None:
        args += ["--config", str(Path(config_path).expanduser().absolute())]
    if user_id:
        args += ["--user", user_id]
    if agent_id:
        args += ["--agent", agent_id]
    command = " ".join(shlex.quote(a) for a in [*args, "hook", event])
    if sys.platform == "win32":  # pragma: no cover - no POSIX shell to fall back in
        return command
    return f'{command} || echo "{_BROKEN.format(event=event)}" >&2'


def is_ours(hook: object) -> bool:
    """A hook entry that runs kioku's entry point (``-c ENTRY`` or ``-m kioku``), global
    options, then ``hook ...``."""
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    command: str = hook["command"]
    if MARKER in command:
        return True
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return any(
        words[i : i + 2] in (["-m", "kioku"], ["-c", ENTRY]) and "hook" in words[i + 2 :]
        for i in range(len(words) - 1)
    )


def load_settings(path: Path) -> dict[str, Any] | None:
    """The settings in ``path`` (None when there is no file); SettingsError when it is not
    a JSON object or its ``hooks`` are not shaped as Claude Code expects."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SettingsError(
            f"{path} is not valid JSON ({exc}); fix it first, nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise SettingsError(f"{path} holds a JSON {type(data).__name__}, not an object")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise SettingsError(f'"hooks" in {path} is not an object; nothing was changed')
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list):
            raise SettingsError(f'"hooks.{event}" in {path} is not a list; nothing was changed')
    return data


@dataclass(frozen=True, slots=True)
class SettingsChange:
    """What installing or uninstalling does to one settings file."""

    path: Path
    before: dict[str, Any] | None  # None: no file
    after: dict[str, Any]
    actions: dict[str, str]  # event name → "add", "replace", "keep", "remove" or "none"

    @property
    def changed(self) -> bool:
        return self.after != (self.before if self.before is not None else {})

    def diff(self) -> str:
        old = "" if self.before is None else render_settings(self.before)
        return "".join(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                render_settings(self.after).splitlines(keepends=True),
                fromfile=f"{self.path} (now)",
                tofile=f"{self.path} (after)",
            )
        )

    def to_dict(self, *, dry_run: bool) -> dict[str, object]:
        return {
            "path": str(self.path),
            "changed": self.changed,
            "dry_run": dry_run,
            "events": dict(self.actions),
            "settings": self.after,
        }


def _without_ours(groups: Sequence[Any]) -> tuple[list[Any], int]:
    """``groups`` without our hook entries (a group left empty by that goes too)."""
    out: list[Any] = []
    removed = 0
    for group in groups:
        hooks = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(hooks, list) or not any(is_ours(h) for h in hooks):
            out.append(group)
            continue
        kept = [h for h in hooks if not is_ours(h)]
        removed += len(hooks) - len(kept)
        if kept:
            out.append({**group, "hooks": kept})
    return out, removed


def _ours(groups: Sequence[Any]) -> list[str]:
    return [
        h["command"]
        for g in groups
        if isinstance(g, dict) and isinstance(g.get("hooks"), list)
        for h in g["hooks"]
        if is_ours(h)
    ]


def plan_install(
    path: Path, before: dict[str, Any] | None, commands: Mapping[str, str]
) -> SettingsChange:
    """``before`` with ``commands`` (Claude Code event → command) as our hooks: an event that
    already has exactly that command is kept; older kioku entries are replaced."""
    after: dict[str, Any] = json.loads(json.dumps(before or {}))
    hooks = after.setdefault("hooks", {})
    actions: dict[str, str] = {}
    for event, command in commands.items():
        groups = hooks.get(event, [])
        if _ours(groups) == [command]:
            actions[event] = "keep"
            continue
        kept, removed = _without_ours(groups)
        kept.append({"hooks": [{"type": "command", "command": command}]})
        hooks[event] = kept
        actions[event] = "replace" if removed else "add"
    return SettingsChange(path, before, after, actions)


def plan_uninstall(path: Path, before: dict[str, Any] | None) -> SettingsChange:
    """``before`` without our hooks, and without the containers that held only them."""
    if before is None:
        return SettingsChange(path, None, {}, dict.fromkeys(EVENTS.values(), "none"))
    after: dict[str, Any] = json.loads(json.dumps(before))
    actions: dict[str, str] = {}
    hooks = after.get("hooks")
    if isinstance(hooks, dict):
        for event in list(hooks):
            kept, removed = _without_ours(hooks[event])
            if not removed:
                continue
            actions[event] = "remove"
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
        if not hooks and actions:
            del after["hooks"]
    for event in EVENTS.values():
        actions.setdefault(event, "none")
    return SettingsChange(path, before, after, actions)


def render_settings(data: Mapping[str, Any]) -> str:
    """JSON with an indent of 2, keys in their order, and a trailing newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_settings(path: Path, data: Mapping[str, Any]) -> Path | None:
    """Write ``data`` to ``path`` atomically; the previous file is kept as
    ``settings.json.bak`` (its path is returned, None when there was no file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup: Path | None = None
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        _write_atomic(backup, path.read_bytes(), _mode(path))
    _write_atomic(path, render_settings(data).encode("utf-8"), _mode(path))
    return backup


def _mode(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return 0o644


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)


def install_hooks(
    path: Path, commands: Mapping[str, str], *, dry_run: bool = False
) -> SettingsChange:
    """Merge our hooks into ``path`` (unless ``dry_run``)."""
    change = plan_install(path, load_settings(path), commands)
    if change.changed and not dry_run:
        write_settings(path, change.after)
    return change


def uninstall_hooks(path: Path, *, dry_run: bool = False) -> SettingsChange:
    """Take our hooks out of ``path`` (unless ``dry_run``); no file is created."""
    change = plan_uninstall(path, load_settings(path))
    if change.before is not None and change.changed and not dry_run:
        write_settings(path, change.after)
    return change


def installed_commands(data: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """Our hook commands in settings ``data``, per Claude Code event."""
    hooks = (data or {}).get("hooks")
    if not isinstance(hooks, dict):
        return {}
    found = {event: _ours(groups) for event, groups in hooks.items() if isinstance(groups, list)}
    return {event: commands for event, commands in found.items() if commands}


def _interpreter(command: str) -> str | None:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    for i in range(len(words) - 1):
        if words[i : i + 2] in (["-m", "kioku"], ["-c", ENTRY]) or words[i] == "-P":
            return words[i - 1] if i else None
    return None


def command_problem(command: str, *, timeout: float = 30.0) -> str | None:
    """Why an installed hook command cannot run kioku (its Python is missing, or cannot
    import kioku), or None when it can. Starts the interpreter once to try the import."""
    import subprocess

    python = _interpreter(command)
    if python is None:
        return None  # not a command we can judge (a plugin's `kioku hook ...`)
    if not os.path.isfile(python) or not os.access(python, os.X_OK):
        return f"its Python {python} does not exist any more"
    try:
        proc = subprocess.run(  # noqa: S603 - the interpreter the settings name
            [python, "-c", "import kioku.interfaces.cli.entry"],
            capture_output=True,
            cwd=os.path.abspath(os.sep),
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"its Python {python} does not start ({type(exc).__name__})"
    if proc.returncode != 0:
        return f"its Python {python} cannot import kioku"
    return None
