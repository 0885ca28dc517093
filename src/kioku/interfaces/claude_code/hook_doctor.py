"""``kioku doctor``'s checks of the Claude Code side: the inbox, its dead letters, the hooks.

Each check is ``(name, ok, detail)``; a problem's detail names the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Final

from kioku.errors import KiokuError
from kioku.interfaces.claude_code.inbox import dead_letters
from kioku.interfaces.claude_code.inbox_files import INBOX_NAME, entry_of, read_lines

__all__ = ["Check", "hook_checks"]

Check = tuple[str, bool, str]

#: An inbox entry older than this means no drain managed to ingest it.
STALE_INBOX: Final = timedelta(hours=1)


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def dead_letter_check(home: Path) -> Check:
    dead = dead_letters(home)
    if not dead.count:
        return ("ingest", True, "no captured session failed to be ingested")
    oldest = f", the oldest from {dead.oldest}" if dead.oldest else ""
    return (
        "ingest",
        False,
        f"{_plural(dead.count, 'captured session', 'captured sessions')} could not be "
        f"ingested ({dead.path}{oldest}); see the errors in that file and hooks.log, fix "
        "the cause, then run `kioku ingest --retry`",
    )


def inbox_check(home: Path, now: datetime) -> Check:
    lines = read_lines(home / INBOX_NAME)
    if not lines:
        return ("inbox", True, "empty")
    stamps: list[datetime] = []
    for line in lines:
        entry = entry_of(line)
        try:
            stamps.append(datetime.fromisoformat(str((entry or {}).get("at"))))
        except ValueError:
            continue
    waiting = _plural(len(lines), "session waits", "sessions wait")
    oldest = min(stamps) if stamps else None
    if oldest is not None and oldest.tzinfo is not None and now - oldest > STALE_INBOX:
        return (
            "inbox",
            False,
            f"{waiting} in {home / INBOX_NAME} since {oldest.isoformat(timespec='seconds')}; "
            "run `kioku hook drain` (errors go to hooks.log)",
        )
    return ("inbox", True, f"{waiting} in {home / INBOX_NAME} (being ingested)")


def hooks_check(settings_files: Mapping[str, Path]) -> Check:
    """Whether the kioku hooks installed in ``settings_files`` (scope → file) can run."""
    from kioku.interfaces.claude_code.settings import (
        command_problem,
        installed_commands,
        load_settings,
    )

    problems: list[str] = []
    installed: list[str] = []
    seen: dict[str, str | None] = {}
    for scope, path in settings_files.items():
        try:
            commands = installed_commands(load_settings(path))
        except KiokuError as exc:
            problems.append(str(exc))
            continue
        if not commands:
            continue
        installed.append(str(path))
        for event, found in commands.items():
            for command in found:
                if command not in seen:
                    seen[command] = command_problem(command)
                problem = seen[command]
                if problem is not None:
                    fix = "" if scope == "user" else f" --scope {scope}"
                    problems.append(
                        f"the {event} hook in {path} cannot run: {problem}; "
                        f"run `kioku hooks install{fix}` with the Python kioku is installed in"
                    )
    if problems:
        return ("hooks", False, "; ".join(dict.fromkeys(problems)))
    if not installed:
        return ("hooks", True, "not installed in Claude Code (`kioku hooks install` adds them)")
    return ("hooks", True, f"installed in {', '.join(installed)}; they run")


def hook_checks(home: Path, env: Mapping[str, str], cwd: Path) -> list[Check]:
    """The inbox, the dead letters and the installed hooks (user and project settings)."""
    from kioku.interfaces.claude_code.settings import settings_path

    files = {scope: settings_path(scope, env, cwd) for scope in ("user", "project")}
    checks = [inbox_check(home, datetime.now().astimezone()), dead_letter_check(home)]
    if files["project"].absolute() == files["user"].absolute():
        del files["project"]
    checks.append(hooks_check({s: p for s, p in files.items() if p.is_file()}))
    return checks
