"""What the copy needs of a store: its tables' canonical rows, and idempotent writes."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Protocol

from kioku.ports.transfer.canonical import Row
from kioku.ports.transfer.tables import TableSpec

__all__ = ["TableAccess"]


class TableAccess(Protocol):
    """One store's tables, read and written in canonical form (see :mod:`.canonical`).

    The adapters implement it in ``kioku.adapters.store.<backend>.transfer``.
    """

    #: ``"sqlite"`` or ``"postgres"``.
    backend: str

    def describe(self) -> str:
        """The store, for messages (never a password)."""
        ...

    def table_names(self) -> set[str]:
        """Every table the store's file or schema holds."""
        ...

    def rows(self, spec: TableSpec, batch: int) -> Iterator[Sequence[Row]]:
        """The table's rows in canonical form, ``batch`` at a time."""
        ...

    def insert(self, spec: TableSpec, rows: Sequence[Row]) -> int:
        """Insert ``rows`` in one transaction, leaving out any whose key is taken (so a
        batch written twice is written once), with what the store derives from them; the
        number inserted."""
        ...

    def set_state(self, key: str, value: str) -> None:
        """Replace one ``state`` row (the erasure key of a target that holds nothing)."""
        ...

    def finish(self, spec: TableSpec) -> None:
        """After a table's copy: make its identity or sequence continue after the copied
        values."""
        ...

    def close(self) -> None: ...
