"""Spec 004's memory_compression_rate from the lifecycle log."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.lifecycle.metrics import compression_stats, text_bytes

AT = datetime(2026, 3, 1, tzinfo=UTC)


def compress(mid: str, before: int, after: int, level: int = 1, sizes: bool = True) -> LogEntry:
    details: dict[str, object] = {"chars_before": before, "chars_after": after}
    if sizes:
        details |= {"bytes_before": before, "bytes_after": after}
    return LogEntry(
        Event.COMPRESS, mid, AT, "u", "a", level_before=level, level_after=level + 1,
        details=details,
    )  # fmt: skip


def test_text_bytes_counts_utf8() -> None:
    assert text_bytes("母の誕生日", "ok") == 15 + 2


def test_rate_is_saved_bytes_over_original_bytes_of_compressed_memories() -> None:
    entries = [
        compress("a", 600, 100),  # summarised
        compress("a", 100, 40, level=2),  # then keywords: 600 → 40
        compress("b", 400, 60),
    ]
    stats = compression_stats(entries)
    assert (stats.memories, stats.original_bytes, stats.compressed_bytes) == (2, 1000, 100)
    assert stats.rate == pytest.approx(0.9)
    assert stats.unknown == 0


def test_erased_memories_leave_and_unknown_sizes_are_counted_apart() -> None:
    erased = LogEntry(Event.DELETE, "b", AT, "u", "a")
    stats = compression_stats(
        [compress("a", 600, 100), compress("b", 400, 60), erased, compress("c", 9, 3, sizes=False)]
    )
    assert (stats.memories, stats.original_bytes, stats.unknown) == (1, 600, 1)
    assert stats.rate == pytest.approx(500 / 600)


def test_no_compression_has_no_rate() -> None:
    assert compression_stats([]).rate is None
