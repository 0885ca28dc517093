"""One BLAS thread for small products, the pool for large ones (kioku.core.blas)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from kioku.core import blas

np.dot(np.ones(4, dtype=np.float32), np.ones(4, dtype=np.float32))  # BLAS is loaded


def _blas_threads() -> list[int]:
    return [int(info["num_threads"]) for info in threadpool_info() if info["user_api"] == "blas"]


@pytest.fixture(autouse=True)
def _no_user_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)


def test_a_small_product_runs_on_one_thread_and_the_pool_comes_back() -> None:
    before = _blas_threads()
    assert before, "numpy's BLAS is not visible to threadpoolctl"
    with blas.threads_for(blas.SMALL_PRODUCT - 1):
        assert _blas_threads() == [1] * len(before)
    assert _blas_threads() == before


def test_a_large_product_keeps_the_pool() -> None:
    before = _blas_threads()
    with blas.threads_for(blas.SMALL_PRODUCT):
        assert _blas_threads() == before


def test_the_users_choice_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    before = _blas_threads()
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    with blas.threads_for(10):
        assert _blas_threads() == before


def test_the_pool_comes_back_after_an_error() -> None:
    before = _blas_threads()
    with pytest.raises(ZeroDivisionError), blas.threads_for(10):
        raise ZeroDivisionError
    assert _blas_threads() == before
