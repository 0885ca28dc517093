"""The canonical form of a row, the same whichever store it was read from, and checksums.

Each value takes one form per column type (see :data:`.tables.ColumnType`): text as stored
(times included: they are ISO 8601 text on both stores), ``int``, ``float`` (float64, exact;
-0.0 is 0.0, since SQLite keeps no sign on a zero),
flags as 0 or 1, lists and JSON as compact JSON text with sorted keys, and vectors as the
bytes of their float32 values, little-endian. A row's digest is BLAKE2b of its ``repr``; a
table's checksum is BLAKE2b over its rows' digests in sorted order, so it does not depend on
the order either store returns rows in.
"""

from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Iterable, Sequence
from hashlib import blake2b
from typing import Final

from kioku.errors import ValidationError
from kioku.ports.transfer.tables import ColumnType

__all__ = [
    "Row",
    "TableSum",
    "canonical_json",
    "canonical_list",
    "canonical_value",
    "row_digest",
    "vector_bytes",
    "vector_values",
]

#: One row in canonical form: values in the order of the table's columns.
Row = tuple[object, ...]

_DIGEST: Final = 16


def canonical_json(text: object) -> str | None:
    """JSON text (or an already decoded value) in compact form with sorted keys."""
    if text is None:
        return None
    value = json.loads(text, parse_float=_float) if isinstance(text, (str, bytes)) else text
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _float(text: str) -> float:
    """A float with a zero's sign dropped (-0.0 is 0.0: SQLite keeps no sign on a zero)."""
    return float(text) + 0.0


def canonical_list(value: object) -> str:
    """A list of strings (a list, or its JSON text) as compact JSON text."""
    items = json.loads(value) if isinstance(value, (str, bytes)) else value
    if not isinstance(items, list):
        raise ValidationError("list column", value, "a JSON list of strings")
    return json.dumps([str(i) for i in items], separators=(",", ":"), ensure_ascii=False)


def vector_bytes(values: Iterable[float]) -> bytes:
    """The float32 little-endian bytes of ``values``."""
    packed = array("f", values)
    if sys.byteorder != "little":  # pragma: no cover - every supported platform is
        packed.byteswap()
    return packed.tobytes()


def vector_values(data: bytes) -> array[float]:
    """The float32 values of little-endian ``data``."""
    packed = array("f")
    packed.frombytes(data)
    if sys.byteorder != "little":  # pragma: no cover
        packed.byteswap()
    return packed


def canonical_value(kind: ColumnType, value: object) -> object:
    """``value`` of a column of type ``kind`` in canonical form (None stays None)."""
    if value is None:
        return None
    if kind == "text":
        return str(value)
    if kind in ("int", "bool"):
        return int(str(value)) if not isinstance(value, (int, bool)) else int(value)
    if kind == "real":
        return (float(str(value)) if not isinstance(value, (int, float)) else float(value)) + 0.0
    if kind == "list":
        return canonical_list(value)
    if kind == "json":
        return canonical_json(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise ValidationError("vector column", type(value).__name__, "float32 bytes")


def row_digest(row: Row) -> bytes:
    """The digest of one canonical row (floats by ``repr``, so exact; NaN equals NaN)."""
    return blake2b(repr(row).encode("utf-8", "surrogatepass"), digest_size=_DIGEST).digest()


class TableSum:
    """Row count and checksum of a table, fed one row digest at a time."""

    __slots__ = ("_digests",)

    def __init__(self) -> None:
        self._digests: list[bytes] = []

    def add(self, digest: bytes) -> None:
        self._digests.append(digest)

    def extend(self, digests: Sequence[bytes]) -> None:
        self._digests.extend(digests)

    @property
    def count(self) -> int:
        return len(self._digests)

    @property
    def checksum(self) -> str:
        """BLAKE2b of the sorted row digests, hex (32 characters)."""
        return blake2b(b"".join(sorted(self._digests)), digest_size=_DIGEST).hexdigest()
