"""The offline analyzer's shortcuts change no reading: a text the emoticon pre-check turns
away has no emoticon any pattern would find, and ASCII text is cleaned and folded as any
text is."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kioku.adapters.analyzers.offline import expressive
from kioku.adapters.analyzers.offline import text as text_module
from kioku.adapters.analyzers.offline.expressive import match_expressive
from kioku.adapters.analyzers.offline.text import _KATA_TO_HIRA, clean, fold

#: Pieces emoticons are made of, and the text around them in chat.
_PIECES = st.sampled_from(
    [
        ":", ";", "=", "-", "'", ")", "(", "]", "[", "D", "d", "p", "P", "/", "x", "X", "^",
        "_", "o", "ω", "▽", "¯", "\\", "ツ", "|", "￣", "○", "orz", "OTL", "Ann: ", "10:30",
        " ", "\n", "a", "I", "w", "!", "?", "😂", "http://x", "笑",
    ]
)  # fmt: skip
_TEXTS = st.one_of(st.lists(_PIECES, max_size=16).map("".join), st.text(max_size=60))


def _standalone_matches(text: str) -> bool:
    return any(pattern.search(text) for (pattern, *_), _, _ in expressive._STANDALONE_CUES)


@settings(max_examples=1500, deadline=None)
@given(_TEXTS)
@example(":'(")
@example("=P")
@example("xD")
@example("D:")
@example("(:")
@example("_|￣|○")
@example("ORZ")
@example("¯\\_(ツ)_/¯")
@example("^_^")
def test_the_pre_check_misses_no_emoticon(text: str) -> None:
    if _standalone_matches(text):
        folded = text.casefold()
        assert (
            expressive._STANDALONE_ANY.search(text) is not None
            or "orz" in folded
            or "otl" in folded
        )


@settings(max_examples=500, deadline=None)
@given(_TEXTS)
@example("Ann: I did it :) and :D, xD =P :'( D: ^^")
@example("Ann: Hi Maria! Lunch at 12:30?")
def test_match_expressive_reads_as_without_the_pre_check(text: str) -> None:
    found = match_expressive(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(expressive, "_STANDALONE_ANY", re.compile(""))  # every text searched
        assert match_expressive(text) == found


def test_the_pre_check_turns_away_plain_chat() -> None:
    assert expressive._STANDALONE_ANY.search("Ann: Hi Maria, the talk is at 10:30 = fine") is None
    assert expressive._STANDALONE_ANY.search("Ann: that was fun :)") is not None


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=80))
@example("Caroline: カタカナ and ASCII")
@example("PLAIN ascii Text 123")
def test_fold_is_lower_case_and_katakana_folded(text: str) -> None:
    assert fold(text) == text.lower().translate(_KATA_TO_HIRA)


def _reference_clean(text: str) -> str:
    """clean() with every step taken on every text."""
    text = text_module._SURROGATE.sub("", text)
    text = text_module._CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = text_module._SPACES.sub(" ", text)
    return text_module._NEWLINES.sub("\n\n", text).strip()


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(codec=None, categories=None), max_size=80))
@example("plain\r\n\r\n text\t\x00 here ")
@example("lone \ud800 surrogate\udfff and カナ")
def test_clean_drops_what_it_drops_from_any_text(text: str) -> None:
    assert clean(text) == _reference_clean(text)
