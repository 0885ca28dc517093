"""Writing a batch of rows into a table with ``COPY``, keeping ``ON CONFLICT DO NOTHING``.

``COPY`` cannot skip a row whose key is taken, so a batch goes first into a temporary staging
table of the same columns (binary ``COPY``: every value travels exactly, vectors in pgvector's
binary form), then into the table with one ``INSERT ... SELECT ... ON CONFLICT DO NOTHING``:
a row whose key is taken is left as it is, the statement's row count is the rows inserted, and
the table's statement triggers run once for the batch. The staging table lives only in the
caller's transaction.
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Sequence
from typing import Final

import psycopg
from psycopg import pq, sql
from psycopg.adapt import Dumper

from kioku.ports.transfer.canonical import vector_values

__all__ = ["SentVector", "copy_insert"]

Conn = psycopg.Connection[tuple[object, ...]]

#: Each column kind's type in the staging table (its binary COPY type) and how the insert
#: selects it. ``words`` is space-separated text that becomes a ``text[]``.
_STAGE: Final = {
    "text": ("text", "{}"),
    "int": ("bigint", "{}"),
    "real": ("double precision", "{}"),
    "bool": ("boolean", "{}"),
    "json": ("text", "{}::jsonb"),
    "list": ("text[]", "{}"),
    "vector": ("vector", "{}"),
    "words": ("text", "string_to_array({}, ' ')"),
}
#: Built-in type oids of the staging columns (``vector`` is looked up on the server).
_OIDS: Final = {"text": 25, "bigint": 20, "double precision": 701, "boolean": 16, "text[]": 1009}


class SentVector(bytes):
    """A vector in pgvector's binary form (two int16, dimension and a reserved word, then
    big-endian float32 values), sent as it is."""

    @classmethod
    def of(cls, canonical: bytes) -> SentVector:
        values = vector_values(canonical)
        if sys.byteorder == "little":
            values.byteswap()
        return cls(struct.pack(">HH", len(values), 0) + values.tobytes())


def _vector_oid(conn: Conn) -> int:
    """pgvector's type oid; registers the dumper of :class:`SentVector` for it on ``conn``."""
    row = conn.execute("SELECT 'vector'::regtype::oid").fetchone()
    assert row is not None
    vector_oid = int(str(row[0]))

    class VectorDumper(Dumper):
        format = pq.Format.BINARY
        oid = vector_oid

        def dump(self, obj: object) -> bytes:
            assert isinstance(obj, bytes)
            return bytes(obj)

    conn.adapters.register_dumper(SentVector, VectorDumper)
    return vector_oid


def copy_insert(
    conn: Conn,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[object]],
    returning: str,
    *,
    overriding: bool = False,
) -> list[object]:
    """Insert ``rows`` (values of ``columns``: ``(name, kind)``) into ``table`` in ``conn``'s
    transaction, leaving out each row whose key (or another unique value) is taken; returns
    the ``returning`` column of each row inserted. ``overriding`` writes the values of
    identity columns."""
    if not rows:
        return []
    stage = sql.Identifier("pg_temp", f"kioku_copy_{table}")
    names = [sql.Identifier(name) for name, _ in columns]
    types = [_STAGE[kind][0] for _, kind in columns]
    vector = _vector_oid(conn) if "vector" in types else 0
    oids = [vector if t == "vector" else _OIDS[t] for t in types]
    conn.execute(
        sql.SQL("CREATE TEMP TABLE {stage} ({columns}) ON COMMIT DROP").format(
            stage=stage,
            columns=sql.SQL(", ").join(
                sql.SQL("{} {}").format(n, sql.SQL(t)) for n, t in zip(names, types, strict=True)
            ),
        )
    )
    with conn.cursor() as cursor:
        with cursor.copy(
            sql.SQL("COPY {stage} ({columns}) FROM STDIN (FORMAT BINARY)").format(
                stage=stage, columns=sql.SQL(", ").join(names)
            )
        ) as copy:
            copy.set_types(oids)
            for row in rows:
                copy.write_row(row)
        cursor.execute(
            sql.SQL(
                "INSERT INTO {table} ({columns}) {overriding}SELECT {values} FROM {stage} "
                "ON CONFLICT DO NOTHING RETURNING {returning}"
            ).format(
                table=sql.Identifier(table),
                columns=sql.SQL(", ").join(names),
                overriding=sql.SQL("OVERRIDING SYSTEM VALUE " if overriding else ""),
                values=sql.SQL(", ").join(
                    sql.SQL(_STAGE[kind][1]).format(n)
                    for n, (_, kind) in zip(names, columns, strict=True)
                ),
                stage=stage,
                returning=sql.Identifier(returning),
            )
        )
        inserted = [row[0] for row in cursor.fetchall()]
    # Dropped now, not only at commit, in case the caller's transaction writes another batch.
    conn.execute(sql.SQL("DROP TABLE {}").format(stage))
    return inserted
