"""The two ends of a migration: a SQLite file or a PostgreSQL schema, opened for copying.

A source must exist. A target that does not exist yet is created, except on a dry run, which
counts against an empty stand-in and creates nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

from kioku.config.store_url import mask_url, schema_problem, url_problem
from kioku.errors import ConfigError, KiokuError, ValidationError
from kioku.ports.transfer.access import TableAccess
from kioku.ports.transfer.canonical import Row
from kioku.ports.transfer.tables import TableSpec
from kioku.service.paths import DB_FILENAME

__all__ = [
    "EmptyTables",
    "MissingStoreError",
    "check_server",
    "open_postgres",
    "open_sqlite",
    "sqlite_file",
]


class MissingStoreError(KiokuError):
    """The source of a migration does not exist."""

    exit_code = 2


class EmptyTables:
    """A target that does not exist yet, for a dry run: no tables, no rows, no writes."""

    def __init__(self, backend: str, where: str) -> None:
        self.backend = backend
        self._where = where

    def describe(self) -> str:
        return f"{self._where} (absent)"

    def table_names(self) -> set[str]:
        return set()

    def rows(self, spec: TableSpec, batch: int) -> Iterator[Sequence[Row]]:
        return iter(())

    def insert(self, spec: TableSpec, rows: Sequence[Row]) -> int:
        raise AssertionError("a dry run writes nothing")

    def set_state(self, key: str, value: str) -> None:
        raise AssertionError("a dry run writes nothing")

    def finish(self, spec: TableSpec) -> None:
        """Nothing was copied."""

    def close(self) -> None:
        """Nothing is open."""


def sqlite_file(path: Path) -> Path:
    """The database file that ``path`` (a home directory or the file) names."""
    return path / DB_FILENAME if path.is_dir() else path


def open_sqlite(path: Path, *, source: bool, dry_run: bool = False) -> TableAccess:
    """The SQLite store at ``path``: a source must exist; an absent target is created."""
    if not path.is_file():
        if source:
            raise MissingStoreError(
                f"there is no SQLite store at {path}",
                hint="pass --source with the memories.db to copy, or the home holding it",
            )
        if dry_run:
            return EmptyTables("sqlite", str(path))
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    from kioku.adapters.store.sqlite.transfer import open_sqlite_tables

    return open_sqlite_tables(path)


def check_server(url: str, schema: str) -> None:
    """Refuse a URL or a schema name kioku cannot use (exit 2), never printing a password."""
    problem = url_problem(url)
    if problem is not None:
        raise ValidationError(
            "URL",
            mask_url(url),
            f"a PostgreSQL URL ({problem})",
            hint="give a URL like postgresql://USER@HOST:5432/DATABASE",
        )
    problem = schema_problem(schema)
    if problem is not None:
        raise ValidationError("--schema", schema, "a plain schema name", hint=problem)


def open_postgres(
    url: str,
    schema: str,
    *,
    source: bool,
    dry_run: bool = False,
    hnsw: tuple[int, int, int, str] | None = None,
) -> TableAccess:
    """The store in ``schema`` at ``url``: a source schema must exist; an absent target
    schema is created (not on a dry run). ``hnsw``: ``[store] hnsw_m``,
    ``hnsw_ef_construction``, ``hnsw_ef_search`` and ``hnsw_type`` for the indexes a copy
    builds (None: the defaults)."""
    check_server(url, schema)
    try:
        from kioku.adapters.store.postgres.transfer import open_postgres_tables, schema_exists
    except ImportError as exc:
        raise ConfigError(
            "URL",
            mask_url(url),
            "a URL kioku can open: the postgres extra (psycopg 3) must be installed",
            hint=f"pip install 'kioku[postgres]' ({exc.name or 'psycopg'} is missing)",
        ) from None
    if not schema_exists(url, schema):
        if source:
            raise MissingStoreError(
                f"the server {mask_url(url)} has no schema {schema!r}: nothing to copy",
                hint="name the schema that holds the store with --schema",
            )
        if dry_run:
            return EmptyTables("postgres", f"{mask_url(url)} (schema {schema})")
    if hnsw is None:
        return open_postgres_tables(url, schema)
    from kioku.adapters.store.postgres.vectors import HnswSettings

    return open_postgres_tables(url, schema, HnswSettings(*hnsw))
