"""Vector search on pgvector: one HNSW index (cosine) per embedding model and dimension.

The indexes are on ``memory_vectors``, the copy of each memory's vector that the schema's
triggers keep, not on ``memories``: an update of a memory's other columns (a score, a recall
mark) then leaves the graph alone, where on ``memories`` every such update would insert the
row into the graph again. A ``vector`` column holds vectors of any size, but an index holds
one size: each model's rows get a partial index over ``embedding::vector(dim)``, made in the
transaction that writes the model's first vector and listed in ``vector_indexes``. A search
orders by that same expression, so the planner can walk the index (approximate, fast at
scale), joined to ``memories`` for the scope; when the walk returns fewer than ``limit`` rows
(a selective scope filtered most of its candidates away) or reaches vectors pointing away
from the query, an exact scan of the model's rows in the scope answers instead. Zero vectors
have no cosine: they score 0, as on SQLite.

Quality: the index is built as :class:`HnswSettings` say (``[store] hnsw_m`` and
``hnsw_ef_construction``: 32 and 200 by default), and a walk keeps :func:`ef_search`
candidates: ``[store] hnsw_ef_search`` when set, else 400, or past 50,000 vectors 500 in a
graph of ``m`` 32 or more and 1000 in a sparser one, and 4 per result asked for.

Half precision (``[store] hnsw_type``): on pgvector 0.7 or newer an index may hold each
vector's unit vector as a ``halfvec`` (two bytes a value instead of four; the unit vector
because cosine ignores length and a float32 value may lie outside half precision's range): a
third smaller, its walk faster, at some cost in recall (docs/postgres.md). "auto", the
default, builds it only for models of 2,001-4,000 values, which a ``vector`` index cannot
take. A walk of such an index orders by half-precision distance, so it returns a few more
rows than asked for (:data:`RERANK_SPARE`) and they are ranked again by the exact distance of
the stored ``vector``. Which type an index holds is read from the server's catalogue at each
search, so an index built before a change of setting keeps working.

A batch of many vectors (:data:`REBUILD_MIN`, and at least a quarter of what the model has) is
loaded with the model's index dropped and built once after it (:func:`drop_for_bulk`,
:func:`rebuild`); until that transaction commits, searches of the store wait for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, cast

from psycopg import sql

from kioku.adapters.store.postgres.codec import VectorParam, vector_param
from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.queries import and_clause, scope_filter, where_clause
from kioku.adapters.store.sqlite.vector_lite import unit_query
from kioku.digests import blake2b
from kioku.errors import StoreError, ValidationError
from kioku.ports.store import MemoryFilter

__all__ = [
    "DEFAULT_HNSW",
    "HALFVEC_MAX_DIM",
    "HNSW_MAX_DIM",
    "REBUILD_MIN",
    "RERANK_SPARE",
    "HnswSettings",
    "build_memory_wanted",
    "choose_kind",
    "create_index",
    "drop_for_bulk",
    "ef_search",
    "embedding_models",
    "ensure_indexes",
    "index_kind",
    "index_name",
    "index_statement",
    "indexed_expression",
    "rebuild",
    "search",
]

#: The most dimensions pgvector's HNSW index takes for ``vector``; larger models search exactly
#: unless the index holds ``halfvec`` (up to :data:`HALFVEC_MAX_DIM`).
HNSW_MAX_DIM: Final = 2000
HALFVEC_MAX_DIM: Final = 4000
#: The first pgvector release with ``halfvec``.
HALFVEC_SINCE: Final = (0, 7, 0)
#: How many rows beyond those asked for a walk of a ``halfvec`` index returns, to rank them
#: again by exact distance: half precision (11 significant bits) can swap neighbours whose
#: distances it cannot tell apart, which matters only near the last place asked for.
RERANK_SPARE: Final = 10


@dataclass(frozen=True, slots=True)
class HnswSettings:
    """How each model's HNSW index is built (``m``, ``ef_construction``, ``kind``: "auto",
    "vector" or "halfvec") and walked (``ef_search``; 0: chosen by :func:`ef_search`).
    Validated by the configuration."""

    m: int = 32
    ef_construction: int = 200
    ef_search: int = 0
    kind: str = "auto"


DEFAULT_HNSW: Final = HnswSettings()
#: The candidate list of an HNSW walk (``hnsw.ef_search``): at least ``_EF_SMALL``, or once
#: the table holds more than ``_LARGE_ROWS`` rows ``_EF_DENSE`` in a graph of ``_DENSE_M``
#: links or more and ``_EF_SPARSE`` in a sparser one; and ``_EF_PER_RESULT`` per result asked
#: for, up to pgvector's limit ``_EF_MAX``. At a million vectors of the offline embedder,
#: ``m`` 32 / ``ef_construction`` 200 reach recall@10 0.981 of exact at 500, and ``m`` 16 /
#: 128 only 0.955 at 1000 (docs/benchmarks.md).
_EF_SMALL: Final = 400
_EF_DENSE: Final = 500
_EF_SPARSE: Final = 1000
_DENSE_M: Final = 32
_LARGE_ROWS: Final = 50_000
_EF_PER_RESULT: Final = 4
_EF_MAX: Final = 1000
#: How many more candidates than the scope's share suggests a second, wider walk keeps.
_WIDER_SPARE: Final = 1.25
#: ``maintenance_work_mem`` while an index is built: enough for the graph of the model's
#: rows (:func:`build_memory_mb`; pgvector builds far slower once the graph no longer fits),
#: at least ``_BUILD_MEMORY_MB`` and at most ``_BUILD_MEMORY_CAP_MB``; a higher server
#: setting is kept.
_BUILD_MEMORY_MB: Final = 512
_BUILD_MEMORY_CAP_MB: Final = 4096
#: Bytes of graph per vector beyond its values: each neighbour of the bottom layer (2 m of
#: them) and of the upper ones, as pgvector lays them out, with a margin for its headers.
_NEIGHBOUR_BYTES: Final = 10
_ELEMENT_BYTES: Final = 256
#: A batch of at least this many vectors of one model, and at least a quarter of what the
#: model already has, is inserted with the model's index dropped and built again afterwards.
REBUILD_MIN: Final = 2000


def ef_search(limit: int, rows: float, m: int, chosen: int = 0) -> int:
    """``hnsw.ef_search`` for a search of ``limit`` results in a table of about ``rows`` rows
    whose index has ``m`` links per node; ``chosen`` (when not 0) replaces the base."""
    if chosen:
        base = chosen
    elif rows > _LARGE_ROWS:
        base = _EF_DENSE if m >= _DENSE_M else _EF_SPARSE
    else:
        base = _EF_SMALL
    return min(_EF_MAX, max(base, limit * _EF_PER_RESULT))


def wider_ef(found: int, ef: int, limit: int) -> int | None:
    """The ``ef_search`` of a second walk after one of ``ef`` candidates left only ``found``
    of them (fewer than ``limit``) in the search's scope: the scope kept about ``found / ef``
    of the walk, so about ``limit / share`` candidates, a quarter more for the spread, should
    leave ``limit``. None when no walk would: nothing was kept (the scope holds too few
    vectors for a share to be read off the walk), the walk was already pgvector's longest, or
    even the longest is expected to leave fewer than ``limit``; the search is then exact, over
    the scope's own rows."""
    if found <= 0 or found >= limit or ef >= _EF_MAX:
        return None
    if found * _EF_MAX < limit * ef:  # the longest walk is expected to fall short
        return None
    return min(_EF_MAX, max(math.ceil(limit * ef * _WIDER_SPARE / found), ef + 1))


def pgvector_version(conn: Conn) -> tuple[int, ...]:
    """The version of the ``vector`` extension installed in the database, as numbers."""
    row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    parts = str(row[0]).split(".") if row is not None else []
    return tuple(int(part) if part.isdigit() else 0 for part in parts)


def index_kind(conn: Conn, dim: int, hnsw: HnswSettings = DEFAULT_HNSW) -> str | None:
    """The type the HNSW index of a model of ``dim`` values holds on this server
    (:func:`choose_kind` with the installed pgvector's version)."""
    return choose_kind(pgvector_version(conn), dim, hnsw.kind)


def choose_kind(version: tuple[int, ...], dim: int, kind: str = "auto") -> str | None:
    """What the index of a model of ``dim`` values holds with pgvector ``version`` and
    ``[store] hnsw_type`` ``kind``: "vector" up to 2,000 values unless "halfvec" is asked for;
    "halfvec" when asked for, or by default past 2,000 values on pgvector 0.7 or newer; None
    when pgvector indexes no vector of that size (the model is then searched exactly).
    "halfvec" on an older pgvector is an error naming the fix."""
    if dim <= 0 or dim > HALFVEC_MAX_DIM:
        return None
    has_halfvec = version >= HALFVEC_SINCE
    if kind == "halfvec":
        if not has_halfvec:
            raise StoreError(
                'store.hnsw_type is "halfvec" but the server\'s pgvector '
                f"({'.'.join(map(str, version)) or 'unknown'}) is older than 0.7, which has none",
                hint='upgrade pgvector (ALTER EXTENSION vector UPDATE), or set hnsw_type = "auto"',
            )
        return "halfvec"
    if dim <= HNSW_MAX_DIM:
        return "vector"
    return "halfvec" if kind == "auto" and has_halfvec else None


def indexed_expression(kind: str, dim: int, operand: str) -> str:
    """The SQL of what an index of ``kind`` holds for ``operand`` (a column, or ``%s`` for a
    query parameter), which a search must order by to walk it. A ``halfvec`` index holds the
    unit vector: cosine distance ignores length, and every value of a unit vector is within
    half precision's range (±65,504), which any finite float32 vector's need not be."""
    if kind == "halfvec":
        return f"l2_normalize({operand}::vector({int(dim)}))::halfvec({int(dim)})"
    return f"{operand}::vector({int(dim)})"


def create_index(conn: Conn, model: str, dim: int, hnsw: HnswSettings = DEFAULT_HNSW) -> str | None:
    """Build the HNSW index of ``(model, dim)`` over the rows already there; the type it holds,
    or None (no index) when :func:`index_kind` says pgvector cannot index them."""
    kind = index_kind(conn, dim, hnsw)
    if kind is None:
        return None
    wanted = build_memory_wanted(conn, model, dim, kind, hnsw)
    if wanted is not None:
        conn.execute("SELECT set_config('maintenance_work_mem', %s, true)", (f"{wanted}MB",))
    conn.execute(index_statement(index_name(model, dim), kind, model, dim, hnsw))
    return kind


def build_memory_wanted(
    conn: Conn, model: str, dim: int, kind: str, hnsw: HnswSettings
) -> int | None:
    """The ``maintenance_work_mem`` (MB) a build of ``(model, dim)``'s index should have, or
    None when the server's setting is already as large."""
    row = conn.execute(
        "SELECT current_setting('maintenance_work_mem'), "
        "(SELECT count(*) FROM memory_vectors WHERE model = %s AND dim = %s)",
        (model, dim),
    ).fetchone()
    current = _megabytes(str(row[0])) if row is not None else 0
    rows = int(str(row[1])) if row is not None else 0
    wanted = build_memory_mb(rows, dim, hnsw.m, 2 if kind == "halfvec" else 4)
    return wanted if current < wanted else None


def index_statement(
    name: str, kind: str, model: str, dim: int, hnsw: HnswSettings, *, concurrently: bool = False
) -> sql.Composed:
    """``CREATE INDEX`` of the HNSW index ``name`` of type ``kind`` over ``(model, dim)``'s rows
    (``concurrently``: without blocking writes, outside a transaction block)."""
    # DDL takes no parameters: the model is quoted as a literal by psycopg.
    return sql.SQL(
        "CREATE INDEX {how} IF NOT EXISTS {name} ON memory_vectors USING hnsw "
        "(({indexed}) {ops}) "
        "WITH (m = {m}, ef_construction = {efc}) "
        "WHERE model = {model} AND dim = {dim}"
    ).format(
        how=sql.SQL("CONCURRENTLY" if concurrently else ""),
        name=sql.Identifier(name),
        indexed=sql.SQL(indexed_expression(kind, dim, "embedding")),
        ops=sql.SQL(f"{kind}_cosine_ops"),
        dim=sql.Literal(dim),
        model=sql.Literal(model),
        m=sql.Literal(hnsw.m),
        efc=sql.Literal(hnsw.ef_construction),
    )


def build_memory_mb(rows: int, dim: int, m: int, value_bytes: int = 4) -> int:
    """Megabytes of ``maintenance_work_mem`` for building a graph of ``rows`` vectors of
    ``dim`` values of ``value_bytes`` each (4: ``vector``, 2: ``halfvec``) with ``m`` links: a
    third more than its estimated size, within the floor and the cap of the module."""
    per_vector = value_bytes * dim + 3 * m * _NEIGHBOUR_BYTES + _ELEMENT_BYTES
    estimate = math.ceil(rows * per_vector * 4 / 3 / (1024 * 1024))
    return max(_BUILD_MEMORY_MB, min(_BUILD_MEMORY_CAP_MB, estimate))


def _megabytes(setting: str) -> int:
    """A memory setting as PostgreSQL shows it (``64MB``, ``1GB``, ``512kB``) in megabytes."""
    units = {"kB": 1 / 1024, "MB": 1, "GB": 1024, "TB": 1024 * 1024}
    for unit, factor in units.items():
        if setting.endswith(unit):
            return int(float(setting[: -len(unit)]) * factor)
    return 0


def drop_for_bulk(conn: Conn, counts: dict[tuple[str, int], int]) -> list[tuple[str, int]]:
    """Drop the index of each model about to receive ``counts[(model, dim)]`` vectors when that
    batch is large (at least :data:`REBUILD_MIN`, and a quarter of the model's rows or more):
    building the index once after the insert is much faster than inserting each vector into
    it. Returns the models whose index must be built again (:func:`rebuild`)."""
    dropped: list[tuple[str, int]] = []
    for (model, dim), count in sorted(counts.items()):
        if count < REBUILD_MIN or not 0 < dim <= HALFVEC_MAX_DIM:
            continue
        row = conn.execute(
            "SELECT count(*) FROM memory_vectors WHERE model = %s AND dim = %s",
            (model, dim),
        ).fetchone()
        existing = 0 if row is None else int(str(row[0]))
        if existing == 0 or count * 4 < existing:
            continue
        conn.execute(
            sql.SQL("DROP INDEX IF EXISTS {name}").format(
                name=sql.Identifier(index_name(model, dim))
            )
        )
        dropped.append((model, dim))
    return dropped


def rebuild(
    conn: Conn,
    dropped: Iterable[tuple[str, int]],
    inserted: int,
    hnsw: HnswSettings = DEFAULT_HNSW,
) -> None:
    """Build again the indexes :func:`drop_for_bulk` dropped, in this transaction; after a
    large batch (``inserted`` rows, at least :data:`REBUILD_MIN`), gather the table's
    statistics again, or the planner, still counting the rows there were, may order a scan of
    the table by distance instead of walking an index."""
    for model, dim in dropped:
        create_index(conn, model, dim, hnsw)
    if inserted >= REBUILD_MIN:
        conn.execute("ANALYZE memories, memory_vectors")


def index_name(model: str, dim: int) -> str:
    digest = blake2b(f"{model}\0{dim}".encode(), digest_size=8).hexdigest()
    return f"memories_hnsw_{digest}"


def ensure_indexes(
    conn: Conn, pairs: Iterable[tuple[str, int]], hnsw: HnswSettings = DEFAULT_HNSW
) -> None:
    """Make the HNSW index of every ``(model, dim)`` that has none, in this transaction."""
    wanted = sorted(set(pairs))
    if not wanted:
        return
    known = {
        (str(model), int(str(dim)))
        for model, dim in conn.execute(
            "SELECT model, dim FROM vector_indexes WHERE model = ANY(%s::text[])",
            ([model for model, _ in wanted],),
        )
    }
    for model, dim in wanted:
        if (model, dim) in known:
            continue
        built = create_index(conn, model, dim, hnsw)
        name = index_name(model, dim) if built is not None else None
        conn.execute(
            "INSERT INTO vector_indexes (model, dim, index_name) VALUES (%s, %s, %s)",
            (model, dim, name),
        )


def _query_param(model: str, query: Sequence[float]) -> VectorParam | None:
    """The query divided by its length, as the SQLite store divides it (cosine ignores
    length, and pgvector's single-precision sums overflow on a long query), as a ``vector``
    parameter; None for a zero vector."""
    try:
        values = [float(v) for v in query]
    except (TypeError, ValueError) as exc:
        raise ValidationError("query", model, "a sequence of numbers") from exc
    unit = unit_query(values, len(values))
    if unit is None:
        raise ValidationError("query", model, "a vector of finite numbers")
    if not any(unit):
        return None
    return vector_param(unit, "query")


def _check_dimension(conn: Conn, model: str, dim: int, registered: Sequence[int]) -> bool:
    """Whether ``model`` has vectors of ``dim`` values (``registered``: the sizes
    ``vector_indexes`` lists for it); StoreError when its vectors have another size (the
    embedder changed), False when it has none at all."""
    if dim in registered:
        return True
    row = conn.execute(
        "SELECT embedding_dim FROM memories WHERE embedding_model = %s LIMIT 1", (model,)
    ).fetchone()
    if row is None:
        return False
    raise StoreError(
        f"the query vector has dimension {dim} but the stored vectors of "
        f"model {model!r} have dimension {int(str(row[0]))}",
        hint=(
            "the embedding model changed its output size: run `kioku reembed` to "
            "recompute the stored vectors with the configured model"
        ),
    )


#: In one round trip before a search: the sizes ``vector_indexes`` lists for the model, the
#: table's size, and the ``m`` and operator class the model's index was built with (it may
#: predate the current settings).
_BEFORE_SEARCH: Final = (
    "SELECT ARRAY(SELECT dim FROM vector_indexes WHERE model = %s), t.reltuples, "
    "(SELECT o.option_value FROM pg_class AS i, pg_options_to_table(i.reloptions) AS o "
    "WHERE i.oid = to_regclass(%s) AND o.option_name = 'm'), (SELECT c.opcname FROM pg_index "
    "AS x JOIN pg_opclass AS c ON c.oid = x.indclass[0] WHERE x.indexrelid = to_regclass(%s)) "
    "FROM pg_class AS t WHERE t.oid = to_regclass('memory_vectors')"
)


def _similarity(distance: object) -> float | None:
    value = float(str(distance)) if distance is not None else math.nan
    if math.isnan(value):
        return None
    return min(1.0, max(-1.0, 1.0 - value))


def search(
    conn: Conn,
    model: str,
    query: Sequence[float],
    flt: MemoryFilter,
    limit: int,
    hnsw: HnswSettings = DEFAULT_HNSW,
) -> list[tuple[str, float]]:
    """``(id, cosine similarity)`` of the ``limit`` nearest memories of ``model`` in the scope
    and ``archived`` of ``flt``, best first; the walk keeps ``hnsw.ef_search`` candidates
    (0: chosen from the table's size and the ``m`` the model's index was built with)."""
    if limit <= 0:
        return []
    dim = len(query)
    name = index_name(model, dim)
    info = conn.execute(_BEFORE_SEARCH, (model, name, name)).fetchone()
    dims, reltuples, m_option, opcname = info if info is not None else ([], 0.0, None, None)
    registered = [int(str(d)) for d in cast("list[object]", dims)]
    if not _check_dimension(conn, model, dim, registered):
        return []
    text = _query_param(model, query)
    if text is None:
        return []
    scope, scope_params = and_clause(scope_filter(flt), "m.")
    opclass = None if opcname is None else str(opcname)
    if opclass is not None or dim <= HNSW_MAX_DIM:
        table_rows = float(str(reltuples))
        built_m = 16 if m_option is None else int(str(m_option))
        half = opclass == "halfvec_cosine_ops"
        fetch = limit + RERANK_SPARE if half else limit
        # A halfvec index is walked by the half-precision distance (the expression it holds);
        # the exact distance of the stored vector ranks what the walk returned.
        approximate = sql.SQL(
            "SELECT v.memory_id, v.embedding::vector({dim}) <=> %s::vector({dim}) AS distance "
            "FROM memory_vectors AS v JOIN memories AS m ON m.id = v.memory_id "
            "WHERE v.model = %s AND v.dim = %s{scope} ORDER BY {order} LIMIT %s"
        ).format(
            dim=sql.Literal(dim),
            scope=sql.SQL(scope),
            order=sql.SQL(
                indexed_expression("halfvec", dim, "v.embedding")
                + " <=> "
                + indexed_expression("halfvec", dim, "%s")
                if half
                else "distance"
            ),
        )
        params = [text, model, dim, *scope_params, *([text] if half else []), fetch]
        ef: int | None = ef_search(fetch, table_rows, built_m, hnsw.ef_search)
        while ef is not None:
            # pgvector 0.6 checks the scope on the ef candidates the walk keeps: a scope with
            # a share of the rows leaves about that share of them (then one wider walk).
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef),))
            found = [
                (str(i), s)
                for i, d in conn.execute(approximate, params, prepare=False)
                if (s := _similarity(d)) is not None
            ]
            if len(found) >= limit:
                if half:
                    found.sort(key=lambda pair: -pair[1])
                if found[limit - 1][1] >= 0.0:
                    return found[:limit]
                break
            ef = wider_ef(len(found), ef, limit)
    scope, scope_params = and_clause(scope_filter(flt), "")
    exact = sql.SQL(
        "SELECT id, embedding <=> %s::vector AS distance "
        "FROM memories WHERE embedding_model = %s AND embedding_dim = %s{scope} "
        "ORDER BY COALESCE(NULLIF(embedding <=> %s::vector, 'NaN'), 1.0), id LIMIT %s"
    ).format(scope=sql.SQL(scope))
    rows = conn.execute(exact, [text, model, dim, *scope_params, text, limit], prepare=False)
    return [(str(i), _similarity(d) or 0.0) for i, d in rows]


def embedding_models(conn: Conn, flt: MemoryFilter) -> dict[str | None, int]:
    """How many memories of each embedding model (None: without a vector) ``flt`` holds."""
    where, params = where_clause(scope_filter(flt))
    return {
        None if model is None else str(model): int(str(count))
        for model, count in conn.execute(
            f"SELECT embedding_model, COUNT(*) FROM memories{where} GROUP BY embedding_model",
            params,
        )
    }
