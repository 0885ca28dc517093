"""has_profile_cue: the gate that keeps turns which say nothing about their speaker from costing
an LLM call."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.core.profiles import SCAN_LIMIT
from kioku.core.profiles.cues import JA_PROFILE_WORDS, has_profile_cue


@pytest.mark.parametrize(
    "text",
    [
        "I live in Osaka.",
        "i like ramen",
        "I'm a nurse",
        "I’m a nurse",  # curly apostrophe
        "Honestly, spicy food and me don't get along",
        "my sister visited",
        "We moved to Kyoto last year.",
        "Our dog is called Biscuit.",
        "That one is mine.",
        "Ｉ ｌｉｖｅ ｉｎ Ｔｏｋｙｏ",  # full-width letters
        "(I) work nights",
        "私は東京に住んでいます",
        "僕はエンジニアです",
        "俺、猫派",
        "わたしの誕生日は三月",
        "うちの犬は柴犬です",
        "自分は甘いものが苦手",
        "ラーメンが好きです",  # the subject left out
        "トマトは嫌い",
        "大阪に住んでいます",
        "北海道出身です",
        "銀行で働いています",
        "そばアレルギーがある",
        "猫を二匹飼っています",
        "趣味は登山",
        "今日は暑いね。でも夏は好き。",  # a cue in a later sentence
    ],
)
def test_first_person_and_profile_words_are_cues(text: str) -> None:
    assert has_profile_cue(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t",
        "Can you fix this failing test?",
        "The build is green again.",
        "Explain list comprehensions in Python, please.",
        "It works. Thanks!",
        "ありがとう",
        "このテストを直してください",
        "明日は雨らしい",
    ],
)
def test_texts_about_nothing_personal_have_no_cue(text: str) -> None:
    assert not has_profile_cue(text)


@pytest.mark.parametrize("text", ["Imagine a world", "Item 4", "Mycelium grows", "wedding", "use"])
def test_pronouns_count_only_as_whole_words(text: str) -> None:
    assert not has_profile_cue(text)


def test_every_japanese_profile_word_is_a_cue_on_its_own() -> None:
    for word in JA_PROFILE_WORDS:
        assert has_profile_cue(f"それは{word}"), word


def test_only_the_scanned_head_is_read() -> None:
    filler = "x " * SCAN_LIMIT
    assert not has_profile_cue(filler + "I live in Osaka")
    assert has_profile_cue("I live in Osaka " + filler)


@given(st.text(max_size=300))
def test_never_raises_on_any_text(text: str) -> None:
    assert isinstance(has_profile_cue(text), bool)
