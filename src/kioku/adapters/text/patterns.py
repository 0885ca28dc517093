"""Regular expressions compiled on first use.

A character class over large Unicode ranges (every kanji, every kana) takes milliseconds to
compile, and a hook process that only ever sees English text should not pay for it: the
patterns here are built when a text first needs them, then shared by the process.
"""

from __future__ import annotations

import re
import threading

__all__ = ["LazyPattern"]


class LazyPattern:
    """``re.compile(source, flags)``, deferred until :meth:`get` is first called."""

    __slots__ = ("_compiled", "_flags", "_lock", "_source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def get(self) -> re.Pattern[str]:
        compiled = self._compiled
        if compiled is None:
            with self._lock:
                if self._compiled is None:
                    self._compiled = re.compile(self._source, self._flags)
                compiled = self._compiled
        return compiled
