"""The coverage factor of a recall candidate's priority: holding the query's words itself."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.config.schema import Config
from kioku.core.model import Valence
from kioku.core.presets import effective_weights
from kioku.ports.store import ScoringFields
from kioku.service.recall.scoring import COVERAGE_FACTOR, score_of

NOW = datetime(2026, 3, 1, tzinfo=UTC)
CONFIG = Config()
WEIGHTS = effective_weights(CONFIG.retrieval)
UNIT = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def _fields(key: str = "m1", retention: float = 80.0) -> ScoringFields:
    return ScoringFields(
        id=key,
        created=NOW,
        retention_score=retention,
        recall_count=0,
        category="daily",
        valence=Valence.NEUTRAL,
        arousal=30,
        tags=(),
        archived=False,
    )


def _score(
    similarity: float, lexical: float, context: float, coverage: float | None
) -> dict[str, float]:
    return score_of(
        _fields(),
        similarity,
        lexical,
        context,
        weights=WEIGHTS,
        config=CONFIG,
        mood=None,
        past=False,
        now=NOW,
        coverage=coverage,
    )


@settings(max_examples=200, deadline=None)
@given(similarity=UNIT, lexical=UNIT, context=UNIT, coverage=UNIT)
def test_the_factor_is_one_plus_its_share_of_the_coverage_and_part_of_the_product(
    similarity: float, lexical: float, context: float, coverage: float
) -> None:
    parts = _score(similarity, lexical, context, coverage)
    assert parts["coverage_factor"] == pytest.approx(1.0 + COVERAGE_FACTOR * coverage)
    assert 1.0 <= parts["coverage_factor"] <= 1.0 + COVERAGE_FACTOR
    assert parts["adjusted_relevance"] == pytest.approx(
        parts["relevance"] * parts["recency"] * parts["category_factor"] * parts["coverage_factor"]
    )


@settings(max_examples=200, deadline=None)
@given(similarity=UNIT, lexical=UNIT, context=UNIT)
def test_without_coverage_the_factor_is_one(
    similarity: float, lexical: float, context: float
) -> None:
    parts = _score(similarity, lexical, context, None)
    assert parts["coverage_factor"] == 1.0
    assert parts["adjusted_relevance"] == pytest.approx(
        parts["relevance"] * parts["recency"] * parts["category_factor"]
    )


def test_of_two_memories_as_relevant_the_one_holding_the_query_comes_first() -> None:
    # The same relevance: one holds every query term itself, the other none of them and is
    # as relevant only through its neighbours (their words and their context).
    holding = _score(0.3, 0.6, 0.05, 1.0)
    lifted = _score(0.3, 0.6 + 0.15 / 0.85, 0.05, 0.0)
    assert holding["relevance"] == pytest.approx(lifted["relevance"])
    assert holding["final"] > lifted["final"]
    assert holding["final"] / lifted["final"] == pytest.approx(1.0 + COVERAGE_FACTOR)
