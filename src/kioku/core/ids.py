"""Memory ids: ``mem_YYYYMMDD_HHMMSS_xxxxxxxx``.

The spec's ``mem_YYYYMMDD_XXX`` counts memories per day, which races when two processes
write at once. We use the spec's own safe form (``mem_20250115_143052_a1b2``) with a
longer random suffix: 32 random bits per second of creation time, and the store refuses a
duplicate so the service can draw again. The date part keeps ids readable and sortable.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final

__all__ = ["ID_PATTERN", "is_memory_id", "make_memory_id"]

SUFFIX_HEX: Final = 8
ID_PATTERN: Final = re.compile(r"^mem_\d{8}_\d{6}_[0-9a-f]{8}$")
# Ids from other sources (the spec's count-based form, imports) are accepted too.
_ANY_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


def make_memory_id(created: datetime, suffix: str) -> str:
    """Build an id from the creation time (its own wall clock) and ``suffix`` (8 hex digits)."""
    if len(suffix) != SUFFIX_HEX or any(c not in "0123456789abcdef" for c in suffix):
        raise ValueError(f"id suffix must be {SUFFIX_HEX} lowercase hex digits, got {suffix!r}")
    # Formatted field by field: ``%Y`` is not zero-padded for years before 1000 on every
    # platform, which would give an id of the wrong shape.
    c = created
    day = f"{c.year:04d}{c.month:02d}{c.day:02d}"
    return f"mem_{day}_{c.hour:02d}{c.minute:02d}{c.second:02d}_{suffix}"


def is_memory_id(text: str) -> bool:
    """Whether ``text`` is an acceptable memory id (ours, or an imported one)."""
    return bool(_ANY_ID.match(text))
