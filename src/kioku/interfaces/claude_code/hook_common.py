"""What every hook module shares: the events, the options, the error, the log, the home.

Standard library only (and kioku's root error), so the hook path stays light.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from kioku.errors import KiokuError, ValidationError
from kioku.records import Record

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = [
    "CAPTURE_EVENTS",
    "EVENTS",
    "LOG_NAME",
    "MAX_INPUT_BYTES",
    "HookError",
    "HookOptions",
    "ensure_home",
    "log_error",
    "quietly",
    "start_overdue_batch",
    "usable_session",
]

#: Command name → Claude Code event name.
EVENTS: Final = {
    "user-prompt-submit": "UserPromptSubmit",
    "session-start": "SessionStart",
    "session-end": "SessionEnd",
    "pre-compact": "PreCompact",
}
#: Events that only capture the transcript for the drain worker.
CAPTURE_EVENTS: Final = frozenset({"session-end", "pre-compact"})
#: The most hook input (Claude Code's JSON object) a hook reads: 4 MiB, more than a prompt
#: that fits the largest context window of a Claude model. Larger input is refused with its own
#: message (kept in step with ``hook_client._MAX_INPUT``).
MAX_INPUT_BYTES: Final = 4 << 20

LOG_NAME: Final = "hooks.log"
LOG_MAX_BYTES: Final = 1 << 20


class HookError(KiokuError):
    """A hook could not do its work (bad input, missing field); logged, never raised out."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class HookOptions(Record):
    """The global options of ``kioku`` as far as hooks need them."""

    home: Path | None = None
    config_path: Path | None = None
    user_id: str | None = None
    agent_id: str | None = None

    @property
    def resolved_home(self) -> Path:
        from kioku.service.paths import resolve_home

        return resolve_home(self.home)

    def open(self, on_warning: Callable[[str], None] | None = None) -> Kioku:
        from kioku.service.kioku import Kioku

        return Kioku.open(
            self.home,
            config_path=self.config_path,
            user_id=self.user_id,
            agent_id=self.agent_id,
            on_warning=on_warning,
        )

    def store_exists(self) -> bool:
        """Whether the home has a store: its memories.db, or a PostgreSQL server in its
        configuration (read only when the file is missing)."""
        from kioku.service.home import store_exists

        return store_exists(self.resolved_home, self.config_path)


def ensure_home(home: Path) -> None:
    """Create ``home`` owner-only (0700 whatever the umask) when it does not exist yet."""
    if home.is_dir():
        return
    home.parent.mkdir(parents=True, exist_ok=True)
    with suppress(FileExistsError):  # another hook made it meanwhile
        home.mkdir(mode=0o700)
        os.chmod(home, 0o700)  # a umask that takes owner bits away must not matter either


def log_error(home: Path | None, event: str, message: str, err: TextIO | None = None) -> None:
    """One line on stderr and appended to ``HOME/hooks.log``; never raises."""
    line = f"kioku hook {event}: {message}".replace("\n", " ")
    with suppress(Exception):  # fail open: a closed stderr must not matter
        print(line, file=err or sys.stderr)
    if home is None:
        return
    try:
        ensure_home(home)
        log = home / LOG_NAME
        try:
            if log.stat().st_size > LOG_MAX_BYTES:
                os.replace(log, log.with_name(LOG_NAME + ".1"))
        except OSError:
            pass
        stamp = datetime.now().astimezone().isoformat(timespec="seconds")
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, f"{stamp} {line}\n".encode())
        finally:
            os.close(fd)
    except Exception:  # noqa: S110 - fail open
        pass


def start_overdue_batch(kioku: Kioku, options: HookOptions, reason: str) -> int | None:
    """The spec's fallback trigger: start an overdue batch in the background; its pid."""
    from kioku.service.lifecycle.schedule import (
        auto_batch_disabled,
        batch_status,
        start_detached_batch,
    )

    if auto_batch_disabled(os.environ) or not batch_status(kioku).overdue:
        return None
    return start_detached_batch(options.resolved_home, options.config_path, reason)


def quietly(function: Callable[..., object], *args: object) -> None:
    """The background batch is a bonus: its failure never changes a hook's answer."""
    try:
        function(*args)
    except Exception:
        if os.environ.get("KIOKU_DEBUG"):
            raise


def usable_session(value: object) -> str | None:
    """``value`` when it is a session id kioku can use; None otherwise (blank, too long, with
    control characters or a lone surrogate), so the work goes on without it (a prompt answered
    without the session's mood, a transcript ingested under its own session id)."""
    if not isinstance(value, str) or not value:
        return None
    from kioku.core.validate import check_provenance_id

    try:
        return check_provenance_id("session_id", value)
    except ValidationError:
        return None
