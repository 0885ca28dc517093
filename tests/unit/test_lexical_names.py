"""The names a prompt mentions (:func:`kioku.adapters.text.lexical.entity_terms`), which recall
uses to tell a prompt about something the store has never heard of."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.text.lexical import entity_terms, index_terms


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("What did Caroline research?", ["caroline"]),
        ("How do I center a div in CSS?", ["css"]),
        ("What is the capital of France?", ["france"]),
        ("Fix the TypeError in userService please", ["typeerror", "userservice"]),
        ("What did Melanie's kids like?", ["melanie"]),
        ('"Hello" said Bob to Alice and Bob', ["bob", "alice"]),
        ("I met Tom on Monday in March. He said OK.", ["tom"]),
        ("Caroline went to the LGBTQ support group in May 2023", ["lgbtq"]),
        ("write a haiku about autumn leaves", []),
        ("Write a haiku about autumn leaves. Then stop.", []),
        ("When did we talk? What about? I forget.", []),
        ("", []),
    ],
)
def test_english_names(text: str, names: list[str]) -> None:
    assert entity_terms(text) == names


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("田中さんと東京で寿司を食べた", ["田中", "東京"]),
        ("猫のタマが家出した", ["タマ"]),
        ("Pythonでリストをソートするには？", ["python"]),
        ("今日の天気はどうですか？", []),
        ("これは覚えておいて：来週の木曜は母の誕生日", []),
    ],
)
def test_japanese_names(text: str, names: list[str]) -> None:
    assert entity_terms(text) == names


@given(st.text(max_size=200))
@settings(max_examples=300, deadline=None)
def test_names_are_index_terms_of_the_text(text: str) -> None:
    """A name is always a term the text itself would be indexed under, so a memory holding
    the text is found by it."""
    names = entity_terms(text)
    assert len(names) == len(set(names))
    assert set(names) <= set(index_terms(text))
