"""English life events without a feeling word, and feeling words that are only requested content.

Every sentence here was written for these tests; none comes from an evaluation set.
"""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn

POS, NEG, NEU = Valence.POSITIVE, Valence.NEGATIVE, Valence.NEUTRAL


@pytest.mark.parametrize(
    ("text", "expected", "tag"),
    [
        ("I passed my driving test today!", POS, "pride"),
        ("She landed the job at the bakery", POS, "joy"),
        ("I got promoted on Friday", POS, "pride"),
        ("We lost our dog last week.", NEG, "sadness"),
        ("I failed my chemistry exam again", NEG, "sadness"),
        ("I didn't get the job", NEG, "sadness"),
        ("I almost failed the exam", POS, "relief"),
        ("My cat ran away last night", NEG, "sadness"),
        ("We broke up in March", NEG, "sadness"),
        ("Sold my first ceramic bowl at the craft fair", POS, "pride"),
        ("Defended my dissertation this afternoon", POS, "pride"),
        ("Got my grades back. Passed everything.", POS, "pride"),
        ("We adopted a rescue greyhound", POS, "joy"),
        ("I finally finished my dissertation.", POS, "pride"),
        ("We're having a baby in June!", POS, "joy"),
        ("The scan came back and I'm cancer-free!", POS, "relief"),
        ("I broke my wrist at the skate park.", NEG, "sadness"),
        ("My best friend is moving away.", NEG, "sadness"),
        ("The interview went well, I think.", POS, "satisfaction"),
        ("My brother was in a car accident last night.", NEG, "fear"),
        ("Our flat was burgled while we were away.", NEG, "anger"),
        ("Mum's cancer is in remission!", POS, "relief"),
        ("We had to have our old cat put to sleep.", NEG, "sadness"),
        ("Our daughter took her first steps today!", POS, "joy"),
        ("Got a pay rise and a bonus this year!", POS, "joy"),
        ("Can't afford the rent this month.", NEG, "anxiety"),
        ("Beat my personal best at parkrun today", POS, "pride"),
        ("My sister gave birth to a little boy last night", POS, "joy"),
        ("Locked out of the flat in the rain. Brilliant start to the week.", NEG, "frustration"),
        ("Got a parking ticket outside my own house.", NEG, "frustration"),
        ("Lost my wallet on the tram this morning.", NEG, "anxiety"),
        ("We got a puppy this weekend!", POS, "joy"),
        ("Found out my best mate talked behind my back.", NEG, "anger"),
        ("I was made redundant on Monday.", NEG, "sadness"),
        ("Finally got the keys to our first house", POS, "joy"),
    ],
)
def test_life_events(analyzer: OfflineAnalyzer, text: str, expected: Valence, tag: str) -> None:
    result = analyzer.analyze(Turn(text))
    assert result.valence is expected
    assert tag in result.tags


@pytest.mark.parametrize(
    "text",
    [
        "the build passed the test suite",
        "did you pass the test?",
        "we lost the game on penalties",
    ],
)
def test_not_life_events(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyzer.analyze(Turn(text)).valence is not POS


@pytest.mark.parametrize(
    "text",
    [
        "Please write a sad poem about autumn.",
        "Translate 'I am happy' into French.",
        "Can you write a cheerful birthday message for my coworker?",
        "Draft an angry complaint letter about a late parcel.",
        "Help me write a polite email declining the Friday meeting.",
    ],
)
def test_requested_content_is_not_felt(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyzer.analyze(Turn(text)).valence is NEU


def test_feeling_before_a_request_still_counts(analyzer: OfflineAnalyzer) -> None:
    result = analyzer.analyze(Turn("My dog died. Please write a short poem for him."))
    assert result.valence is NEG
