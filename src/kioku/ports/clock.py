"""The Clock port: where "now" comes from. Core code never reads a clock itself."""

from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Protocol, runtime_checkable

__all__ = ["Clock"]


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware, in the local zone."""
        ...

    @property
    def tz(self) -> tzinfo:
        """The local zone: naive user input is read in it, batch hours are wall time in it."""
        ...
