"""Spec 004's lifecycle metrics from the lifecycle log, pure.

``memory_compression_rate`` is spec 004's compression ratio, ``(original size − compressed
size) / original size`` in bytes of UTF-8 text, taken over the memories that are compressed
now: the original size is the text (trigger + content) before its first compression from
Level 1, the compressed size the text after its last one, both recorded by the batch in the
``compress`` entries of the log. Erased memories no longer count. Memories compressed before
the log recorded sizes are counted apart (``unknown``), never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kioku.core.lifecycle.log import Event, LogEntry

__all__ = ["CompressionStats", "compression_stats", "text_bytes"]


def text_bytes(trigger: str, content: str) -> int:
    """The size a memory's text takes: UTF-8 bytes of its trigger and its content."""
    return len(trigger.encode("utf-8")) + len(content.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class CompressionStats:
    """Compressed memories with known sizes, their sizes, and those without."""

    memories: int
    original_bytes: int
    compressed_bytes: int
    unknown: int  # compressed memories whose sizes the log does not hold

    @property
    def rate(self) -> float | None:
        """``(original − compressed) / original`` over all of them; None when none is known."""
        if self.original_bytes <= 0:
            return None
        return (self.original_bytes - self.compressed_bytes) / self.original_bytes


def _size(details: object, key: str) -> int | None:
    value = details.get(key) if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def compression_stats(entries: Iterable[LogEntry]) -> CompressionStats:
    """Fold ``compress`` and ``delete`` entries, oldest first, into :class:`CompressionStats`."""
    original: dict[str, int | None] = {}
    current: dict[str, int | None] = {}
    for e in entries:
        if e.event == Event.DELETE:
            original.pop(e.memory_id, None)
            current.pop(e.memory_id, None)
        elif e.event == Event.COMPRESS:
            details = dict(e.details)
            if e.memory_id not in original or e.level_before == 1:
                original[e.memory_id] = _size(details, "bytes_before")
            current[e.memory_id] = _size(details, "bytes_after")
    known = [
        (size, current[mid])
        for mid, size in original.items()
        if size is not None and current.get(mid) is not None
    ]
    return CompressionStats(
        memories=len(known),
        original_bytes=sum(size for size, _ in known),
        compressed_bytes=sum(int(after or 0) for _, after in known),
        unknown=len(original) - len(known),
    )
