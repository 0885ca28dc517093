"""A vector search that leaves some kinds out reads the memories of those kinds by an index.

The SQLite store's vector cache knows scope and archive only; a search of some kinds first
reads the scope's few memories of the other kinds (``KindsPart._other_kinds``). Scoped by an
owner without an agent, or not at all, that read once scanned every memory (a second at a
million); schema 14 adds an index by kind first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kioku.adapters.store.sqlite.store import SqliteStore
from kioku.ports.store import MemoryFilter
from tests.contract.conftest import vector_memory

MODEL = "test-model"


@pytest.mark.parametrize(
    "flt",
    [
        MemoryFilter(kind="episode"),
        MemoryFilter(user_id="ann", kind="episode"),
        MemoryFilter(user_id="ann", agent_id="a1", kind="episode"),
        MemoryFilter(agent_id="a1", kind="episode"),
    ],
)
def test_the_memories_of_other_kinds_are_read_through_an_index(
    tmp_path: Path, flt: MemoryFilter
) -> None:
    """A vector search of some kinds first reads the memories of the others: by an index
    whatever the scope names (schema 14), never a scan of every memory."""
    store = SqliteStore(tmp_path / "memories.db")
    try:
        store.add_many([vector_memory(n, (1.0, float(n), 0.0, 0.0)) for n in range(1, 6)])
        seen: list[str] = []
        conn = store._conn
        assert conn is not None
        conn.set_trace_callback(seen.append)
        try:
            store.vector_search(MODEL, (1.0, 0.0, 0.0, 0.0), flt, 3)
        finally:
            conn.set_trace_callback(None)
        [query] = [q for q in seen if "kind IN" in q]
        plan = " ".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + query))
        assert "USING INDEX" in plan or "USING COVERING INDEX" in plan, plan
        assert "SCAN memories" not in plan, plan
    finally:
        store.close()
