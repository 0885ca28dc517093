"""A told experience of one's own life leaves neutral on weaker evidence than other turns.

Every sentence here was written for these tests; none comes from an evaluation set.
"""

from __future__ import annotations

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.adapters.analyzers.offline.emotion import (
    TOLD_THRESHOLD,
    VALENCE_THRESHOLD,
    score_emotion,
)
from kioku.adapters.analyzers.offline.hits import Hit
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn

WEAK = 0.5  # "calm": between the two thresholds


def test_thresholds_are_ordered() -> None:
    assert 0 < TOLD_THRESHOLD < WEAK < VALENCE_THRESHOLD


def test_weak_evidence_counts_only_in_a_told_experience() -> None:
    hits = [Hit("calm", 0, WEAK, -2, ("relief",))]
    assert score_emotion(hits).valence is Valence.NEUTRAL
    told = score_emotion(hits, told=True)
    assert told.valence is Valence.POSITIVE
    assert told.tags == ("relief",)
    negative = [Hit("down", 0, -WEAK, -1, ("sadness",))]
    assert score_emotion(negative, told=True).valence is Valence.NEGATIVE
    assert score_emotion([Hit("yeah", 0, 0.2, 0, ())], told=True).valence is Valence.NEUTRAL


def test_told_weekend_with_one_weak_word_is_positive() -> None:
    analyzer = OfflineAnalyzer()
    story = (
        "Last weekend I drove to the coast and walked along the beach for hours. The sea was calm."
    )
    assert analyzer.analyze(Turn(story)).valence is Valence.POSITIVE


def test_the_same_words_stay_neutral_outside_a_told_experience() -> None:
    analyzer = OfflineAnalyzer()
    assert analyzer.analyze(Turn("The sea is calm.")).valence is Valence.NEUTRAL
    # A request is no told experience, even when it tells one.
    request = (
        "Can you describe a beach? Last weekend I drove to the coast and walked along the beach."
        " The sea was calm."
    )
    assert analyzer.analyze(Turn(request)).valence is Valence.NEUTRAL
