"""Explicit sarcasm and irony: English frames around praise ("what a great start", "gotta
love", "lucky me", "nothing like being stuck"), ironic thanks for an annoying act, "Classic."
after a mishap, Japanese praise after a mishap, and sarcasm markers. Each cue has a case it
turns and a near miss it leaves as plain praise."""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn

_A = OfflineAnalyzer()


def _valence(text: str) -> Valence:
    return _A.analyze(Turn(text)).valence


def _tags(text: str) -> tuple[str, ...]:
    return _A.analyze(Turn(text)).tags


# --- English irony frames


@pytest.mark.parametrize(
    "text",
    [
        "What a great start to the day: my car won't start.",
        "Such a joy, the flight got cancelled.",
        "Well, that's just perfect. The laptop doesn't work.",
        "Gotta love it when the wifi is down again.",
        "Love how my laptop crashed right before a presentation.",
        "Lucky me, I missed the bus again.",
        "Lucky me, stuck in traffic again.",
    ],
)
def test_praise_in_an_exclamative_frame_about_a_mishap_is_ironic(text: str) -> None:
    assert _valence(text) is Valence.NEGATIVE
    assert "frustration" in _tags(text)


@pytest.mark.parametrize(
    "text",
    [
        "What a great start to the day: coffee with my best friend.",
        "Such a joy to see you again!",
        "Just perfect. The cake came out of the oven on time.",
        "I love it when my dog greets me at the door.",
        "I love how he comforts me when I'm sad.",
        "Lucky me, I won the raffle!",
    ],
)
def test_the_same_frames_without_a_mishap_stay_praise(text: str) -> None:
    assert _valence(text) is Valence.POSITIVE


@pytest.mark.parametrize(
    "text",
    [
        "Thanks a lot for breaking my phone.",
        "Thanks for ruining my weekend.",
        "Thank you for losing my files.",
        "Really appreciate you ignoring me.",
        "Thanks for crashing my car.",
    ],
)
def test_gratitude_for_a_harmful_act_is_ironic(text: str) -> None:
    assert _valence(text) is Valence.NEGATIVE
    assert "gratitude" not in _tags(text)


@pytest.mark.parametrize(
    "text",
    [
        "Thanks for fixing my phone!",
        "Thanks for deleting that spam.",
        "Appreciate you standing up for me.",
        "Thanks for cooking dinner for us tonight.",
        "Thanks for crashing at my place last night!",
    ],
)
def test_gratitude_for_help_stays_gratitude(text: str) -> None:
    assert _valence(text) is Valence.POSITIVE
    assert "gratitude" in _tags(text)


def test_irony_at_oneself_is_frustration_without_anger() -> None:
    assert _tags("Missed the last train again. Yay me 🎉") == ("frustration",)
    assert _tags("Lucky me, I missed the bus again.") == ("frustration",)
    assert _tags("Soaked on the way home, the forecast said sunny. Love that for me.") == (
        "frustration",
    )


def test_irony_at_others_keeps_anger() -> None:
    tags = _tags("Oh great, the printer jammed again. Love that for us.")
    assert tags[:2] == ("frustration", "anger")
    assert "anger" in _tags("Great, another outage at 3am. Just great.")


# --- "nothing like" + something unpleasant


@pytest.mark.parametrize(
    "text",
    [
        "Nothing like being stuck in traffic for two hours :)",
        "Nothing like waking up to a flooded kitchen.",
        "Nothing like getting ghosted after three interviews 🙂",
    ],
)
def test_nothing_like_an_unpleasant_event_is_ironic(text: str) -> None:
    assert _valence(text) is Valence.NEGATIVE


def test_nothing_like_something_pleasant_stays_pleasant() -> None:
    assert _valence("Nothing like a cold beer on a hot day 🙂") is Valence.POSITIVE
    assert _valence("Nothing like having a good cry.") is not Valence.NEGATIVE
    assert _valence("Nothing beats a lazy Sunday.") is not Valence.NEGATIVE


def test_nothing_still_negates_when_it_is_no_superlative() -> None:
    assert _valence("I have nothing to be sad about.") is Valence.POSITIVE
    assert _valence("Nothing is good anymore.") is Valence.NEGATIVE


# --- sarcasm markers


@pytest.mark.parametrize(
    "text",
    [
        "最高の一日だったよ（皮肉）",
        "最高の一日だったよ(皮肉)",
        "Great meeting today #sarcasm",
        "Great meeting today /sarc",
        "Great meeting today /sarcasm",
    ],
)
def test_sarcasm_markers_turn_kind_words(text: str) -> None:
    assert _valence(text) is Valence.NEGATIVE


@pytest.mark.parametrize(
    "text",
    [
        "最高の一日だったよ",
        "Great meeting today",
        "I love sarcasm, honestly.",
        "皮肉が上手い人は好き",
    ],
)
def test_no_marker_no_turn(text: str) -> None:
    assert _valence(text) is Valence.POSITIVE


# --- Japanese irony: more spoken praise after a mishap


@pytest.mark.parametrize(
    "text",
    [
        "財布なくした。いい一日だったわ",
        "はいはい、また仕様変更ね。楽しいなあ",
        "今日も残業。ありがたいことで",
    ],
)
def test_japanese_praise_after_a_mishap_is_ironic(text: str) -> None:
    assert _valence(text) is Valence.NEGATIVE


@pytest.mark.parametrize(
    "text",
    [
        "財布見つかった。いい一日だったわ",
        "家族で温泉。楽しいなあ",
        "今日も残業。でも楽しいなあ",
        "テストに合格した。いい一日だったわ",
    ],
)
def test_japanese_praise_without_a_mishap_is_sincere(text: str) -> None:
    assert _valence(text) is Valence.POSITIVE


# --- "Classic." after a mishap: fed up


@pytest.mark.parametrize(
    "text",
    [
        "Forgot my keys at the office. Classic.",
        "Missed the bus again. Typical.",
        "My flight got cancelled. Naturally.",
        "The printer doesn't work. Classic.",
        "Forgot to charge my phone. Figures.",
        "Forgot the tickets at home. Typical.",
        "My laptop won't boot. Naturally.",
    ],
)
def test_a_one_word_sentence_after_a_mishap_is_exasperation(text: str) -> None:
    assert _valence(text) is Valence.NEGATIVE
    assert "frustration" in _tags(text)


@pytest.mark.parametrize(
    "text",
    [
        "Watched The Godfather again tonight. Classic.",
        "That movie is a classic.",
        "Classic.",
        "The printer works. Classic.",
        "Another sunny day at the beach. Typical.",
        "We had pizza. Typical Friday, and I loved it.",
    ],
)
def test_the_same_words_without_a_mishap_are_no_exasperation(text: str) -> None:
    assert _valence(text) is not Valence.NEGATIVE


# --- a mishap that is denied, thanks that are sincere


def test_thanks_with_sincere_appreciation_after_a_mishap_stays_gratitude() -> None:
    text = "Thanks, Sam. Got it. It's easy to get lost and forget that. Appreciate your support."
    assert _valence(text) is Valence.POSITIVE
    assert "gratitude" in _tags(text)


def test_a_denied_mishap_is_no_mishap() -> None:
    assert _valence("Thanks! That means a lot. I won't let anything get me down.") is (
        Valence.POSITIVE
    )
    assert _valence("Great, the train wasn't late for once!") is Valence.POSITIVE
    assert _valence("Great, the train was late again.") is Valence.NEGATIVE


# --- near misses found by reading the rules against everyday sentences


@pytest.mark.parametrize(
    "text",
    [
        "Thanks for spoiling me!",
        "Thanks for missing me.",
        "Thanks for deleting my account so quickly.",
        "Thanks for stealing my heart.",
    ],
)
def test_gratitude_for_kind_or_requested_acts_stays_positive(text: str) -> None:
    assert _valence(text) is Valence.POSITIVE


@pytest.mark.parametrize(
    "text",
    [
        "Such a lovely woman. She died last week.",
        "I love how he always made me laugh. I miss him every day.",
        "Lucky me, my grandma gave me her ring before she died.",
    ],
)
def test_sincere_praise_next_to_grief_is_no_irony(text: str) -> None:
    assert "anger" not in _tags(text)
    assert "frustration" not in _tags(text)
