"""English words that are not feelings in their phrase, and idioms that are.

Every sentence here was written for these tests; none comes from an evaluation set.
"""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn

POS, NEG, NEU = Valence.POSITIVE, Valence.NEGATIVE, Valence.NEUTRAL


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "like" compares unless a pronoun is the one who likes.
        ("people like this never read the manual", NEU),
        ("guys like him always show up late to meetings", NEU),
        ("I like this layout", POS),
        ("we really like them", POS),
        ("they don't like me", NEG),
        # Idioms whose words alone would mislead.
        ("trust me, the meeting is at four", NEU),
        ("no surprise that the store is closed on Sunday", NEU),
        ("the data goes through a third party service", NEU),
        ("good thing you brought an umbrella", POS),
        ("is it bad practice to commit generated files?", NEU),
        ("selling my old desk, twenty pounds or best offer", NEU),
        ("any tips for learning names? I'm hopeless at it", NEU),
        ("that song speaks to me", POS),
    ],
)
def test_phrase_reading(analyzer: OfflineAnalyzer, text: str, expected: Valence) -> None:
    assert analyzer.analyze(Turn(text)).valence is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm absolutely fuming about the parking fine", NEG),
        ("I've never been so mortified in my life", NEG),
        ("I've been feeling low all week", NEG),
        ("my dad was diagnosed with diabetes", NEG),
        ("the scan came back negative", POS),
        ("the note from my neighbour made my day", POS),
        ("we're moving to Leeds in June", NEU),
        # Nouns that only look like comparatives of a feeling word.
        ("she changed careers at forty", NEU),
        ("is there a customer service number?", NEU),
        ("a stranger held the door for us", NEU),
        ("tests in the vendor folder are excluded from the build", NEU),
        ("I was excluded from the group chat again", NEG),
    ],
)
def test_vocabulary(analyzer: OfflineAnalyzer, text: str, expected: Valence) -> None:
    assert analyzer.analyze(Turn(text)).valence is expected


def test_single_quoted_words_are_mentioned_not_felt(analyzer: OfflineAnalyzer) -> None:
    quoted = analyzer.read("What's a word for 'very tired' that isn't 'exhausted'?").emotion
    plain = analyzer.read("What's a word for very tired that isn't exhausted?").emotion
    assert quoted.negative < plain.negative
    assert (
        analyzer.analyze(Turn("What's a word for 'very tired' that isn't 'exhausted'?")).valence
        is NEU
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("lol fair", NEU),
        ("ok cool", NEU),
        ("Nope, that's all for now.", NEU),
        ("ok sounds good", NEU),
        ("No worries, take your time.", NEU),
        # Not only an acknowledgement: the feeling counts.
        ("ok cool, I'm thrilled about the trip", POS),
        ("lol", POS),
    ],
)
def test_acknowledgements(analyzer: OfflineAnalyzer, text: str, expected: Valence) -> None:
    assert analyzer.analyze(Turn(text)).valence is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("this song slaps", POS),
        ("lowkey obsessed with this show", POS),
        ("I burst into tears at the airport", NEG),
        ("my heart sank when I saw the letter", NEG),
        ("at my wits' end with this landlord", NEG),
    ],
)
def test_idioms_and_slang(analyzer: OfflineAnalyzer, text: str, expected: Valence) -> None:
    assert analyzer.analyze(Turn(text)).valence is expected
