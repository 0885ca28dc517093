"""The PostgreSQL store adapter (psycopg 3, pgvector): ``pip install 'kioku[postgres]'``."""

from kioku.adapters.store.postgres.store import (
    PostgresStore,
    open_postgres_schema,
    open_postgres_store,
)

__all__ = ["PostgresStore", "open_postgres_schema", "open_postgres_store"]
