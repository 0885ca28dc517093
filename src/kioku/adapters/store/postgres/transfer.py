"""The PostgreSQL store's tables in canonical form, for ``kioku migrate`` (see
:mod:`kioku.service.transfer`).

Rows are read through a server-side cursor in one repeatable-read snapshot per table, JSON as
text and vectors in pgvector's binary form (which is how they are written too). Each batch is
written with ``COPY`` into a staging table and from there with one ``INSERT ... ON CONFLICT DO
NOTHING`` (a row whose key is taken is left as it is; see :mod:`.bulk`), in one transaction
under the schema's advisory lock, with what the store derives from it: a memory's terms (the
counting triggers follow) and an original's terms. Ids that an identity hands out are written
with ``OVERRIDING SYSTEM VALUE``. :meth:`PostgresTables.finish` moves each identity past the
largest value copied and, after the memories, builds the HNSW index of each embedding model in
one pass.
"""

from __future__ import annotations

import json
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from typing import Final

import psycopg
from psycopg import sql

from kioku.adapters.store.postgres import bulk, lexical, vectors
from kioku.adapters.store.postgres.bulk import SentVector
from kioku.adapters.store.postgres.connection import redacted
from kioku.adapters.store.postgres.store import PostgresStore, open_postgres_schema
from kioku.adapters.store.sqlite.search import terms_text
from kioku.config.store_url import mask_url
from kioku.errors import StoreError
from kioku.ports.transfer.canonical import Row, canonical_value
from kioku.ports.transfer.tables import TableSpec

__all__ = ["PostgresTables", "open_postgres_tables", "schema_exists"]

#: How each column type is selected (vectors in pgvector's send format).
_READ: Final = {"json": "{}::text", "vector": "vector_send({})"}


def _original_terms(row: Sequence[object]) -> str:
    return " ".join(terms_text(str(row[2]), str(row[3]), ()).lower().split())


def _list(value: object) -> object:
    return [] if value == "[]" else json.loads(str(value))


def _vector(value: object) -> object:
    return SentVector.of(value) if isinstance(value, bytes) else value


#: How a canonical value of each kind is converted for this store's insert (others as they are).
_NATIVE: Final[dict[str, Callable[[object], object]]] = {
    "bool": bool,
    "list": _list,
    "vector": _vector,
}


def _natives(kinds: Sequence[str], rows: Sequence[Row]) -> list[tuple[object, ...]]:
    """Canonical rows as this store's insert takes them (None stays None)."""
    converts = [_NATIVE.get(kind) for kind in kinds]
    return [
        tuple(v if f is None or v is None else f(v) for f, v in zip(converts, r, strict=True))
        for r in rows
    ]


def _canonical(kind: str, value: object) -> object:
    if kind == "vector" and value is not None:
        return _sent_vector(bytes(value))  # type: ignore[call-overload]
    return canonical_value(kind, value)  # type: ignore[arg-type]


def _sent_vector(data: bytes) -> bytes:
    """Canonical bytes of pgvector's send format: dimension and a reserved word (two int16),
    then big-endian float32 values."""
    values = array("f")
    values.frombytes(data[4:])
    if sys.byteorder == "little":
        values.byteswap()
    return values.tobytes()


class PostgresTables:
    """The tables of one PostgreSQL schema (see :class:`kioku.service.transfer.TableAccess`)."""

    backend = "postgres"

    def __init__(self, store: PostgresStore, where: str) -> None:
        self._store = store
        self._where = where

    def describe(self) -> str:
        return self._where

    def table_names(self) -> set[str]:
        with self._store._reading() as conn:
            rows = conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            ).fetchall()
        return {str(r[0]) for r in rows}

    def rows(self, spec: TableSpec, batch: int) -> Iterator[Sequence[Row]]:
        kinds = [kind for _, kind in spec.columns]
        columns = sql.SQL(", ").join(
            sql.SQL(_READ.get(kind, "{}")).format(sql.Identifier(name))
            for name, kind in spec.columns
        )
        query = sql.SQL("SELECT {} FROM {}").format(columns, sql.Identifier(spec.name))
        with self._store._reading() as conn, conn.cursor(name="kioku_transfer") as cursor:
            cursor.itersize = batch
            cursor.execute(query)
            while chunk := cursor.fetchmany(batch):
                yield [
                    tuple(_canonical(k, v) for k, v in zip(kinds, row, strict=True))
                    for row in chunk
                ]

    def insert(self, spec: TableSpec, rows: Sequence[Row]) -> int:
        if not rows:
            return 0
        values = _natives([kind for _, kind in spec.columns], rows)
        columns: list[tuple[str, str]] = list(spec.columns)
        if spec.name == "originals":
            columns.append(("terms", "words"))
            values = [(*v, _original_terms(v)) for v in values]
        with self._store._writing() as conn:
            inserted = bulk.copy_insert(
                conn, spec.name, columns, values, spec.key[0], overriding=spec.serial is not None
            )
            if spec.name == "memories":
                # Only the memories inserted: one whose id was taken keeps its own terms.
                new, at = set(inserted), spec.key_index[0]
                _derive_memories(conn, spec, [r for r in rows if r[at] in new])
        return len(inserted)

    def set_state(self, key: str, value: str) -> None:
        with self._store._writing() as conn:
            conn.execute(
                "INSERT INTO state (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    def finish(self, spec: TableSpec) -> None:
        if spec.name == "memories":
            self._index_vectors()
        if spec.serial is None:
            return
        column = sql.Identifier(spec.serial)
        query = sql.SQL(
            "SELECT setval(pg_get_serial_sequence({name}, {col}), MAX({column})) "
            "FROM {table} HAVING MAX({column}) IS NOT NULL"
        ).format(
            name=sql.Literal(spec.name),
            col=sql.Literal(spec.serial),
            column=column,
            table=sql.Identifier(spec.name),
        )
        with self._store._writing() as conn:
            conn.execute(query)

    def _index_vectors(self) -> None:
        """Make the HNSW index of each embedding model once its memories are all in: one
        build over every vector is much faster than adding them to the index one by one."""
        with self._store._writing() as conn:
            pairs = conn.execute(
                "SELECT DISTINCT embedding_model, embedding_dim FROM memories "
                "WHERE embedding_model IS NOT NULL"
            ).fetchall()
            vectors.ensure_indexes(
                conn, {(str(m), int(str(d))) for m, d in pairs}, self._store.hnsw
            )
            # Fresh statistics, so the planner walks the new index rather than scanning a
            # table it still believes small.
            conn.execute("ANALYZE memories, memory_terms, memory_vectors")

    def close(self) -> None:
        self._store.close()


def _derive_memories(
    conn: psycopg.Connection[tuple[object, ...]], spec: TableSpec, rows: Sequence[Row]
) -> None:
    """Index the memories' terms (their vector indexes are made by ``finish``)."""
    at = [spec.names.index(c) for c in ("id", "trigger", "content", "keywords")]
    items = []
    for row in rows:
        memory_id, trigger, content, keywords = (row[i] for i in at)
        words = json.loads(str(keywords))
        items.append((str(memory_id), terms_text(str(trigger), str(content), words)))
    lexical.index_memories(conn, items)


def schema_exists(url: str, schema: str) -> bool:
    """Whether ``schema`` exists on the server at ``url`` (without creating it)."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=30) as conn:
            row = conn.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
            ).fetchone()
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot connect to {redacted(url)}: {str(exc).splitlines()[0] if str(exc) else exc}",
            hint="check the URL, that the server runs, and the role's password",
        ) from exc
    return row is not None


def open_postgres_tables(
    url: str, schema: str, hnsw: vectors.HnswSettings = vectors.DEFAULT_HNSW
) -> PostgresTables:
    """The tables of ``schema`` on the server at ``url`` (created and migrated when missing);
    the HNSW indexes a copy builds are built as ``hnsw`` says."""
    store = open_postgres_schema(url, schema, hnsw=hnsw)
    return PostgresTables(store, f"{mask_url(url)} (schema {schema})")
