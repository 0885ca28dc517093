"""Which type a PostgreSQL HNSW index holds (:func:`vectors.choose_kind`): by pgvector's
version, the model's size and ``[store] hnsw_type``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.errors import KiokuError, StoreError

vectors = pytest.importorskip("kioku.adapters.store.postgres.vectors")

OLD, NEW = (0, 6, 2), (0, 8, 6)


@pytest.mark.parametrize(
    ("version", "dim", "kind", "expected"),
    [
        (NEW, 384, "auto", "vector"),
        (NEW, 384, "halfvec", "halfvec"),
        (NEW, 384, "vector", "vector"),
        ((0, 7, 0), 384, "halfvec", "halfvec"),
        (OLD, 384, "auto", "vector"),
        (OLD, 384, "vector", "vector"),
        (NEW, 2000, "auto", "vector"),
        (NEW, 2000, "vector", "vector"),
        (NEW, 2001, "vector", None),
        (NEW, 2001, "auto", "halfvec"),
        ((0, 7, 0), 3072, "auto", "halfvec"),
        (NEW, 4000, "auto", "halfvec"),
        (NEW, 4001, "auto", None),
        (NEW, 4001, "halfvec", None),
        (OLD, 2001, "auto", None),
        (NEW, 0, "auto", None),
        ((), 384, "auto", "vector"),  # no version read: the type every pgvector has
        ((), 3072, "auto", None),
    ],
)
def test_the_kind_of_a_new_index(
    version: tuple[int, ...], dim: int, kind: str, expected: str | None
) -> None:
    assert vectors.choose_kind(version, dim, kind) == expected


def test_halfvec_asked_of_an_old_pgvector_names_the_setting_and_the_fix() -> None:
    with pytest.raises(StoreError) as caught:
        vectors.choose_kind(OLD, 384, "halfvec")
    assert isinstance(caught.value, KiokuError)
    assert "hnsw_type" in str(caught.value)
    assert "0.6.2" in str(caught.value)
    assert "ALTER EXTENSION vector UPDATE" in (caught.value.hint or "")


@given(
    st.tuples(st.integers(0, 2), st.integers(0, 20), st.integers(0, 20)),
    st.integers(-5, 5000),
    st.sampled_from(["auto", "vector"]),
)
def test_an_index_never_holds_more_values_than_its_type_takes(
    version: tuple[int, int, int], dim: int, kind: str
) -> None:
    chosen = vectors.choose_kind(version, dim, kind)
    if chosen == "vector":
        assert 0 < dim <= vectors.HNSW_MAX_DIM
    elif chosen == "halfvec":  # only where a vector index cannot go, unless asked for
        assert kind == "auto"
        assert version >= vectors.HALFVEC_SINCE
        assert vectors.HNSW_MAX_DIM < dim <= vectors.HALFVEC_MAX_DIM
    else:
        assert dim <= 0 or dim > vectors.HNSW_MAX_DIM
