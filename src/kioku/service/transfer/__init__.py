"""Moving a store between SQLite and PostgreSQL (``kioku migrate``, issue #17).

:mod:`.tables` says what is copied, :mod:`.canonical` the backend-independent form of a row
and the checksums, :mod:`.copy` the copy and its verification; each adapter reads and
writes its own tables (``kioku.adapters.store.<backend>.transfer``).
"""

from __future__ import annotations

from kioku.ports.transfer.access import TableAccess
from kioku.ports.transfer.tables import DERIVED, TABLES, TableSpec, uncovered
from kioku.service.transfer.copy import (
    MigrationConflictError,
    MigrationReport,
    TableReport,
    copy_store,
)

__all__ = [
    "DERIVED",
    "TABLES",
    "MigrationConflictError",
    "MigrationReport",
    "TableAccess",
    "TableReport",
    "TableSpec",
    "copy_store",
    "uncovered",
]
