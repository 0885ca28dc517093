"""What the root command passes to every subcommand, and how they open the service."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kioku.service.kioku import Kioku, resolve_home

__all__ = ["CliState"]


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

    def open(self, on_warning: Callable[[str], None] | None = None) -> Kioku:
        """The service for this invocation (the store itself opens on first use)."""
        self.opened = True
        return Kioku.open(
            self.home_arg,
            config_path=self.config_path,
            user_id=self.user_id,
            agent_id=self.agent_id,
            on_warning=on_warning,
        )
