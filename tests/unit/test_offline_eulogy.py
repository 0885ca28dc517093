"""Kind words beside a reported death are a eulogy: the turn is grief, not praise. Near
misses keep their reading: a death denied, supposed or laughed about, and praise of a funeral
or of a film about death."""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn

_A = OfflineAnalyzer()


def _read(text: str) -> tuple[Valence, tuple[str, ...]]:
    analysis = _A.analyze(Turn(user=text))
    return analysis.valence, analysis.tags


@pytest.mark.parametrize(
    "text",
    [
        "Such a lovely woman. She died last week.",
        "She was a lovely woman. She passed away last week.",
        "My dog died yesterday, he was the best boy.",
        "Grandpa passed away on Sunday. He was the kindest, funniest man I knew.",
    ],
)
def test_praise_of_someone_who_died_reads_as_grief(text: str) -> None:
    valence, tags = _read(text)
    assert valence is Valence.NEGATIVE
    assert "sadness" in tags


@pytest.mark.parametrize(
    "text",
    [
        "I almost died laughing, best day ever!",
        "I died laughing at the wedding speech, it was wonderful.",
        "My grandma didn't die, the surgery went great!",
        "If he had died I would be devastated, but he is fine and we're so happy!",
        "The film was about death but it was lovely.",
        "We were so happy at the wedding.",
    ],
)
def test_praise_without_a_felt_death_stays_positive(text: str) -> None:
    assert _read(text)[0] is Valence.POSITIVE


def test_a_near_death_is_fear_not_a_loss() -> None:
    valence, tags = _read("I nearly died when the car skidded off the road.")
    assert valence is Valence.NEGATIVE
    assert "fear" in tags
