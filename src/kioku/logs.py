"""Module loggers that import :mod:`logging` only when a record can go somewhere.

A hook process answers in a few hundred milliseconds, and importing ``logging`` (with
``traceback``, ``string`` and their regular expressions) is a noticeable share of that. Until
something has imported ``logging`` no handler can have been configured, so a debug or info
record would be dropped anyway; warnings and errors import it and go to its last-resort handler
(stderr), exactly as a plain ``logging.getLogger(name)`` would.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import logging

__all__ = ["LazyLogger"]


class LazyLogger:
    """A stand-in for ``logging.getLogger(name)`` with the methods kioku uses."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def _logger(self, *, quiet: bool) -> logging.Logger | None:
        if quiet and "logging" not in sys.modules:
            return None
        import logging

        return logging.getLogger(self._name)

    def debug(self, msg: str, *args: object) -> None:
        log = self._logger(quiet=True)
        if log is not None:
            log.debug(msg, *args, stacklevel=2)

    def info(self, msg: str, *args: object) -> None:
        log = self._logger(quiet=True)
        if log is not None:
            log.info(msg, *args, stacklevel=2)

    def warning(self, msg: str, *args: object) -> None:
        log = self._logger(quiet=False)
        assert log is not None
        log.warning(msg, *args, stacklevel=2)
