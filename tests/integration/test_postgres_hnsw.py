"""The HNSW index settings of ``[store]`` on PostgreSQL: ``hnsw_m`` and
``hnsw_ef_construction`` shape each new index (read back from the server's catalogue),
``hnsw_ef_search`` sets the walk, an index keeps what it was built with, and bad values stop
the CLI with exit 2 before anything is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kioku import Kioku
from kioku.adapters.store.postgres import vectors
from kioku.ports.store import MemoryFilter
from tests.cli.conftest import run_kioku
from tests.postgres_server import postgres_url, schema_fixture  # noqa: F401 (a fixture)

pg_env = schema_fixture("hnsw_")


def _options(kioku: Kioku) -> dict[str, str]:
    """The storage options of the offline embedder's HNSW index, as the server keeps them."""
    model = kioku.embedder.model_id
    name = vectors.index_name(model, kioku.embedder.dim)
    with kioku.store._reading() as conn:  # type: ignore[attr-defined]
        rows = conn.execute(
            "SELECT o.option_name, o.option_value FROM pg_class AS i, "
            "pg_options_to_table(i.reloptions) AS o WHERE i.oid = to_regclass(%s)",
            (name,),
        ).fetchall()
    return {str(k): str(v) for k, v in rows}


def _nearest(kioku: Kioku, text: str, limit: int) -> list[str]:
    """The ids of the ``limit`` memories whose vectors are nearest to ``text``'s."""
    model = kioku.embedder.model_id
    query = list(kioku.embedder.embed([text])[0])
    found = kioku.store.vector_search(model, query, MemoryFilter(), limit)
    return [memory_id for memory_id, _ in found]


def _open(env: dict[str, str], home: Path, **settings: str) -> Kioku:
    extra = {f"KIOKU_STORE__{k.upper()}": v for k, v in settings.items()}
    return Kioku.open(home, env={**env, **extra})


def test_a_new_index_is_built_with_the_default_dense_graph(
    pg_env: dict[str, str], tmp_path: Path
) -> None:
    with _open(pg_env, tmp_path / "a") as kioku:
        kioku.remember_turn("The lighthouse keeper paints the stairs blue every spring.")
        assert _options(kioku) == {"m": "32", "ef_construction": "200"}


def test_configured_settings_shape_the_index_and_an_index_keeps_them(
    pg_env: dict[str, str], tmp_path: Path
) -> None:
    with _open(pg_env, tmp_path / "a", hnsw_m="8", hnsw_ef_construction="24") as kioku:
        cat = kioku.remember_turn("Mika adopted a grey cat called Tama last winter.").memory
        assert _options(kioku) == {"m": "8", "ef_construction": "24"}
    # Other settings later: the index there is kept (and searched), not built again.
    with _open(pg_env, tmp_path / "b", hnsw_m="12", hnsw_ef_construction="40") as kioku:
        kioku.remember_turn("Tama sleeps on the piano in the afternoon.")
        assert _options(kioku) == {"m": "8", "ef_construction": "24"}
        assert _nearest(kioku, "Mika adopted a grey cat called Tama last winter.", 1) == [cat.id]


@pytest.mark.parametrize("ef", ["1", "40", "1000"])
def test_a_chosen_ef_search_still_finds_the_nearest(
    pg_env: dict[str, str], tmp_path: Path, ef: str
) -> None:
    texts = [f"note {n}: the ferry to island {n} leaves at {n % 12 + 1} o'clock" for n in range(60)]
    with _open(pg_env, tmp_path / "a", hnsw_ef_search=ef) as kioku:
        ids = [kioku.remember_turn(text).memory.id for text in texts]
        found = _nearest(kioku, texts[17], 5)
        assert len(found) == 5
        assert found[0] == ids[17]


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"KIOKU_STORE__HNSW_EF_CONSTRUCTION": "50"}, "store.hnsw_ef_construction"),
        (
            {"KIOKU_STORE__HNSW_M": "16", "KIOKU_STORE__HNSW_EF_CONSTRUCTION": "20"},
            "store.hnsw_ef_construction",
        ),
        ({"KIOKU_STORE__HNSW_M": "1"}, "store.hnsw_m"),
        ({"KIOKU_STORE__HNSW_EF_SEARCH": "1001"}, "store.hnsw_ef_search"),
        ({"KIOKU_STORE__HNSW_EF_CONSTRUCTION": "many"}, "store.hnsw_ef_construction"),
        ({"KIOKU_STORE__HNSW_TYPE": "half"}, "store.hnsw_type"),
    ],
)
def test_bad_settings_stop_with_exit_2_and_name_the_key(
    pg_env: dict[str, str], settings: dict[str, str], named: str
) -> None:
    result = run_kioku("remember", "--user", "a note", env={**pg_env, **settings}, timeout=120)
    assert result.code == 2, result.err
    assert named in result.err
    with Kioku.open(Path(pg_env["KIOKU_HOME"]), env=pg_env) as kioku:
        assert kioku.store.count(MemoryFilter()) == 0
