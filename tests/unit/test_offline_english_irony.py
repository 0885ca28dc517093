"""English irony: praise said about a mishap is read as its opposite; plain praise is not.

Every sentence here was written for these tests; none comes from an evaluation set.
"""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn

POS, NEG = Valence.POSITIVE, Valence.NEGATIVE


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
        # Praise in the sentence after a mishap, and the emoji that go with it.
        "Flight delayed two hours, then cancelled. Thank you, Skyway, truly the best.",
        "The landlord is raising the rent again. Exactly what I needed this month.",
        "Another weekend spent working late. Yay me 🎉",
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
        "The wifi broke this morning. Great, it's working again!",
        "Great job, thanks! 🎉",
        # "again" for a pleasant repeat is no mishap.
        "Perfect, thanks again!",
        "Oh nice, they're open again!",
        "Wonderful, see you again next week.",
        "Lovely. We should do that again.",
        # The mishap is over: praise is relief, not irony.
        "Great, my headache is finally gone!",
        "Oh nice, no more late trains.",
        "Nice, the bug is gone.",
    ],
)
def test_plain_praise_stays_positive(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyzer.analyze(Turn(text)).valence is POS


@pytest.mark.parametrize(
    "text",
    [
        "The exam was brutal. Best feeling when it ended though.",
        "My laptop died. Thanks so much for the help getting it back!",
    ],
)
def test_praise_after_a_remedy_or_a_turn_is_not_irony(analyzer: OfflineAnalyzer, text: str) -> None:
    hits = analyzer.read(text).emotion.hits
    assert all(h.score > 0 for h in hits if h.term in {"best", "thanks"})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm crying at this video of a goat yelling 😂😂", POS),
        ("I'm dead lmao, that caption", POS),
        ("I'm crying, I miss her so much", NEG),
        ("my old dog died this morning 😭", NEG),
    ],
)
def test_tears_next_to_laughter_are_laughter(
    analyzer: OfflineAnalyzer, text: str, expected: Valence
) -> None:
    assert analyzer.analyze(Turn(text)).valence is expected
