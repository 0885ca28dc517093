"""English irony: praise said about a mishap is read as its opposite; plain praise is not.

Every sentence here was written for these tests; none comes from an evaluation set.
"""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn

POS, NEG = Valence.POSITIVE, Valence.NEGATIVE


@pytest.fixture(scope="module")
def analyzer() -> OfflineAnalyzer:
    return OfflineAnalyzer()


@pytest.mark.parametrize(
    "text",
    [
        "Great, another outage at 3am. Just great.",
        "oh wonderful, the build broke again",
        "Perfect. The printer jammed again.",
        "thanks a lot, now the whole draft is gone",
        "love that for me, I missed the bus",
        "Yeah, right. Like that will ever work.",
        "Thanks for nothing.",
        "I love waiting in line for two hours /s",
        "Oh joy, the train is delayed again.",
    ],
)
def test_ironic_praise_is_negative(analyzer: OfflineAnalyzer, text: str) -> None:
    result = analyzer.analyze(Turn(text))
    assert result.valence is NEG
    assert "frustration" in result.tags


@pytest.mark.parametrize(
    "text",
    [
        "Great job, thanks!",
        "Great, that worked.",
        "Oh wonderful, thank you so much!",
        "The food was just great!",
        "Great, thanks for fixing the outage",
        "Perfect. See you at noon.",
        "love that for you, congratulations on the new job",
    ],
)
def test_plain_praise_stays_positive(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyzer.analyze(Turn(text)).valence is POS
