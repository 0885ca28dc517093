"""What the root command passes to every subcommand, and how they open the service."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from kioku.core.validate import check_scope_id
from kioku.service.paths import resolve_home

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = ["CREATING_COMMANDS", "CliState"]

#: Commands that may create the home and its database when they do not exist yet. Every
#: other command only works on an existing store: pointed at a home without one (a mistyped
#: --home) it fails with a clear error instead of creating an empty store there.
CREATING_COMMANDS = frozenset(
    {"init", "remember", "add", "write", "profile", "import", "ingest", "context"}
)


def _command_name() -> str | None:
    """The subcommand of this invocation (``context`` for ``kioku context prune``)."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.find_root().invoked_subcommand


@dataclass(slots=True)
class CliState:
    """The global options of one ``kioku`` invocation."""

    home_arg: Path | None
    config_path: Path | None
    user_id: str | None
    agent_id: str | None
    #: Whether the command opened the service (the fallback batch trigger looks at it).
    opened: bool = False

    @property
    def home(self) -> Path:
        return resolve_home(self.home_arg)

    def open(
        self, on_warning: Callable[[str], None] | None = None, *, create: bool | None = None
    ) -> Kioku:
        """The service for this invocation (the store itself opens on first use).

        ``create`` says whether a missing store may be created; by default only the
        commands in CREATING_COMMANDS may.
        """
        if self.user_id is not None:
            check_scope_id("--user", self.user_id)
        if self.agent_id is not None:
            check_scope_id("--agent", self.agent_id)
        if create is None:
            name = _command_name()
            create = name is None or name in CREATING_COMMANDS
        from kioku.service.kioku import Kioku

        self.opened = True
        return Kioku.open(
            self.home_arg,
            config_path=self.config_path,
            user_id=self.user_id,
            agent_id=self.agent_id,
            on_warning=on_warning,
            create=create,
        )
