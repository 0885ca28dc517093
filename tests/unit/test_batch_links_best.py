"""The typed-link candidates of the nightly batch: the best eligible similarities, chosen
without sorting every score, equal the first ones of a stable sort of all of them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.service.lifecycle.batch_links import _best


def _reference(scores: np.ndarray, eligible: np.ndarray, limit: int) -> list[int]:
    order = np.argsort(-scores, kind="stable").tolist()
    return [j for j in order if eligible[j]][:limit]


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.sampled_from([-0.5, 0.0, 0.1, 0.25, 0.25, 0.5, 0.9, 1.0]), max_size=60),
    mask=st.lists(st.booleans(), min_size=60, max_size=60),
    limit=st.integers(min_value=1, max_value=12),
)
def test_the_best_equal_a_stable_sort_filtered(
    values: list[float], mask: list[bool], limit: int
) -> None:
    scores = np.asarray(values, dtype=np.float32)
    eligible = np.asarray(mask[: len(values)], dtype=bool)
    assert _best(scores, eligible, limit) == _reference(scores, eligible, limit)


def test_random_scores_of_a_large_pool() -> None:
    rng = np.random.default_rng(4)
    scores = rng.standard_normal(5000).astype(np.float32)
    eligible = rng.random(5000) < 0.3
    assert _best(scores, eligible, 8) == _reference(scores, eligible, 8)
    assert _best(scores, np.zeros(5000, dtype=bool), 8) == []
