"""Where token usage of paid providers goes: the ``UsageSink`` port (the records it takes are
:mod:`kioku.core.usage`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kioku.core.usage import Usage

__all__ = ["UsageSink"]


@runtime_checkable
class UsageSink(Protocol):
    def record_usage(self, usage: Usage) -> None:
        """Keep one call's usage. Must not raise for storage trouble that can wait."""
        ...
