"""The memory an HNSW build asks for: enough for the graph, within a floor and a cap."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("psycopg")

from kioku.adapters.store.postgres.vectors import build_memory_mb

rows = st.integers(min_value=0, max_value=50_000_000)
dims = st.integers(min_value=1, max_value=2000)
links = st.integers(min_value=2, max_value=100)


@given(rows, dims, links)
def test_within_the_floor_and_the_cap(n: int, dim: int, m: int) -> None:
    assert 512 <= build_memory_mb(n, dim, m) <= 4096


@given(rows, rows, dims, links)
def test_more_rows_never_ask_for_less(a: int, b: int, dim: int, m: int) -> None:
    low, high = sorted((a, b))
    assert build_memory_mb(low, dim, m) <= build_memory_mb(high, dim, m)


@given(rows, dims, links, links)
def test_more_links_never_ask_for_less(n: int, dim: int, a: int, b: int) -> None:
    low, high = sorted((a, b))
    assert build_memory_mb(n, dim, low) <= build_memory_mb(n, dim, high)


def test_a_million_offline_vectors_get_more_than_their_index_on_disk() -> None:
    """A million 384-value vectors with m 32 made a 2,026 MB index: the build gets more."""
    assert 2026 < build_memory_mb(1_000_000, 384, 32) < 4096
    assert build_memory_mb(36_500, 384, 32) == 512
