"""English valence: negation scope, contrast, wishes and counterfactuals, slang and swearing.

Every sentence here was written for these tests; none comes from an evaluation set.
"""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn

POS, NEG, NEU = Valence.POSITIVE, Valence.NEGATIVE, Valence.NEUTRAL


def valence(analyzer: OfflineAnalyzer, text: str) -> Valence:
    return analyzer.analyze(Turn(text)).valence


def net(analyzer: OfflineAnalyzer, text: str) -> float:
    return analyzer.read(text).emotion.net


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A negated positive is unpleasant, a negated negative mildly pleasant.
        ("the soup was not good tonight", NEG),
        ("honestly the sequel wasn't bad", POS),
        ("I didn't hate the new layout", POS),
        ("my landlord never disappointed me once", POS),
        # A negated comparative is a superlative, not a denial.
        ("I have never been happier with a phone", POS),
        ("the weather couldn't be better for the picnic", POS),
        ("my week can't get any worse", NEG),
        # "can't stop" keeps the feeling.
        ("I can't stop smiling about the news", POS),
        ("she couldn't stop crying after the call", NEG),
    ],
)
def test_negation_scope(analyzer: OfflineAnalyzer, text: str, expected: Valence) -> None:
    assert valence(analyzer, text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the hotel was pretty but the staff were rude", NEG),
        ("the drive was exhausting but the view was gorgeous", POS),
    ],
)
def test_contrast_clause_decides(analyzer: OfflineAnalyzer, text: str, expected: Valence) -> None:
    assert valence(analyzer, text) is expected


def test_counterfactual_feelings_turn_around(analyzer: OfflineAnalyzer) -> None:
    # What would have been nice did not happen: a let-down.
    assert valence(analyzer, "it would have been nice to get a warning first") is NEG
    assert valence(analyzer, "a phone call would've been great, honestly") is NEG
    # What could have been worse did not happen: mild relief.
    assert net(analyzer, "the weekend could have been worse") > 0
    assert valence(analyzer, "I wish my brother were happy here") is NEG


def test_wished_for_state_counts_less_than_the_wish(analyzer: OfflineAnalyzer) -> None:
    wished = analyzer.read("I hope the trip is wonderful").emotion.hits
    scores = {h.term: h.score for h in wished}
    assert scores["wonderful"] < analyzer.read("the trip is wonderful").emotion.net
    assert valence(analyzer, "I hope the trip is wonderful") is POS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("lmao my cat just fell off the sofa", POS),
        ("yay the parcel finally came", POS),
        ("thank you so much for covering my shift", POS),
        ("ugh the train is late again", NEG),
        ("smh they raised the prices again", NEG),
        ("wtf happened to this update", NEG),
        ("I hate when the printer jams", NEG),
        ("oh great, another flat tyre /s", NEG),
        ("yasss the show got renewed", POS),
        ("can't wait for the holidays", POS),
    ],
)
def test_internet_english(analyzer: OfflineAnalyzer, text: str, expected: Valence) -> None:
    assert valence(analyzer, text) is expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("this pizza is fucking awesome", POS),
        ("that trailer was cool as fuck", POS),
        ("the new puppy is cute af", POS),
        ("my neighbour is annoying as hell", NEG),
        ("this fucking laptop froze again", NEG),
    ],
)
def test_swearing_follows_the_feeling(
    analyzer: OfflineAnalyzer, text: str, expected: Valence
) -> None:
    assert valence(analyzer, text) is expected


def test_swearing_after_a_feeling_intensifies_it(analyzer: OfflineAnalyzer) -> None:
    assert net(analyzer, "the concert was great af") > net(analyzer, "the concert was great")
    assert net(analyzer, "my boss is rude as hell") < net(analyzer, "my boss is rude")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("that was so unprofessional of them", NEG),
        ("the finale felt unsatisfying", NEG),
        ("what a despicable thing to do", NEG),
        ("I was over the moon when she called", POS),
        ("your message made my day", POS),
        ("the whole trip was a waste of time", NEG),
        ("my flatmate keeps letting me down", NEG),
        ("the new update works like a charm", POS),
    ],
)
def test_common_vocabulary_and_idioms(
    analyzer: OfflineAnalyzer, text: str, expected: Valence
) -> None:
    assert valence(analyzer, text) is expected


def test_un_prefix_turns_a_listed_word_around(analyzer: OfflineAnalyzer) -> None:
    assert net(analyzer, "an unfunny sketch") < 0
    assert net(analyzer, "the hikers came back unharmed") > 0
    # Words that only look like un- + a word are left alone.
    assert net(analyzer, "unlike last year, we drove") == 0


@pytest.mark.parametrize(
    "text",
    [
        "what time does the pharmacy open on sundays?",
        "you could try turning the router off and on",
        "which bus goes to the airport from here?",
    ],
)
def test_questions_and_advice_stay_neutral(analyzer: OfflineAnalyzer, text: str) -> None:
    assert valence(analyzer, text) is NEU


def test_questions_weigh_less_than_statements(analyzer: OfflineAnalyzer) -> None:
    asked = abs(net(analyzer, "are you upset about the move?"))
    said = abs(net(analyzer, "I am upset about the move."))
    assert 0 < asked < said


def test_emoji_added_for_chat(analyzer: OfflineAnalyzer) -> None:
    assert valence(analyzer, "see you tomorrow 😉") is POS
    assert valence(analyzer, "sure, great plan 🤡") is not POS
