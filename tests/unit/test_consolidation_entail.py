"""The lexical entailment check that validates candidates when no NLI model or LLM is set."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.text.lexical import index_terms
from kioku.core.consolidation.entail import entailment, lexical_nli, negated, numbers_of
from kioku.core.consolidation.model import NliScores

#: (statement, its negation), in English and Japanese.
PAIRS = [
    ("Ken lives in Osaka.", "Ken does not live in Osaka."),
    ("Mia works at Acme Corp.", "Mia doesn't work at Acme Corp."),
    ("The build uses the cache.", "The build never uses the cache."),
    ("田中さんは大阪に住んでいます。", "田中さんは大阪に住んでいません。"),
    ("鈴木さんはコーヒーを飲む。", "鈴木さんはコーヒーを飲まない。"),
    ("佐藤さんは会議に出席した。", "佐藤さんは会議に出席しなかった。"),
]
OTHERS = [
    "The weather was nice.",
    "Bob prefers green tea.",
    "We decided to use Postgres for billing.",
    "今日は雨だった。",
    "山田さんはPythonが得意です。",
    "The meeting starts at 10 am.",
]


def valid(scores: NliScores) -> bool:
    parts = (scores.entailment, scores.contradiction, scores.neutral)
    return all(0.0 <= p <= 1.0 for p in parts) and math.isclose(sum(parts), 1.0, abs_tol=1e-9)


def test_a_sentence_of_the_premise_is_entailed() -> None:
    scores = lexical_nli("Ken lives in Osaka. He likes tea.", "Ken lives in Osaka", index_terms)
    assert scores == NliScores(entailment=1.0, contradiction=0.0, neutral=0.0)


@pytest.mark.parametrize(("statement", "negation"), PAIRS)
def test_a_negation_contradicts(statement: str, negation: str) -> None:
    assert lexical_nli(statement, negation, index_terms).contradiction >= 0.7
    assert lexical_nli(negation, statement, index_terms).contradiction >= 0.7
    assert lexical_nli(statement, statement, index_terms).contradiction == 0.0


def test_other_numbers_for_the_same_terms_contradict() -> None:
    scores = lexical_nli("The meeting is at 3 pm.", "The meeting is at 5 pm.", index_terms)
    assert scores.contradiction >= 0.7
    assert lexical_nli("会議は３時から。", "会議は3時から。", index_terms).contradiction == 0.0
    # Numbers about something else do not clash.
    assert lexical_nli("Ken has 2 cats.", "Mia ran 5 km.", index_terms).contradiction == 0.0


def test_the_agreeing_sentence_wins_a_tie() -> None:
    premise = "Ken does not live in Tokyo. Ken lives in Osaka."
    assert lexical_nli(premise, "Ken lives in Osaka", index_terms).contradiction == 0.0


def test_partial_support_is_a_share() -> None:
    scores = lexical_nli("Ken lives in Osaka.", "Ken lives in Kyoto", index_terms)
    assert scores.entailment == pytest.approx(2 / 3)
    assert scores.neutral == pytest.approx(1 / 3)


def test_no_content_terms_is_neutral() -> None:
    assert lexical_nli("Ken lives in Osaka.", "the and of", index_terms) == NliScores(0.0, 0.0, 1.0)
    assert lexical_nli("", "Ken lives in Osaka", index_terms).entailment == 0.0


def test_entailment_takes_the_best_of_single_and_joined_sources() -> None:
    sources = ["Ken lives in Osaka.", "Ken works at Acme Corp."]
    joined = entailment(sources, "Ken lives in Osaka and works at Acme Corp.", index_terms)
    assert joined.entailment == pytest.approx(1.0)
    single = entailment(sources, "Ken works at Acme Corp.", index_terms)
    assert single.entailment == pytest.approx(1.0)
    assert entailment([], "Ken lives in Osaka", index_terms) == NliScores(0.0, 0.0, 1.0)
    assert entailment(sources, "Ken does not live in Osaka", index_terms).contradiction >= 0.7


def test_negation_and_numbers() -> None:
    assert negated("I can't go")
    assert negated("行かない")
    assert negated("食べずに寝た")
    assert not negated("まず必ず行く")
    assert not negated("It is not not true")
    assert numbers_of("v1.2 at ３時 and 10:30") == frozenset({"1.2", "3", "10:30"})


SENTENCES = st.sampled_from([p[0] for p in PAIRS] + OTHERS)


@settings(max_examples=40, deadline=None)
@given(st.lists(SENTENCES, min_size=1, max_size=4), st.data())
def test_a_sentence_of_the_premise_is_entailed_whatever_else_it_says(
    sentences: list[str], data: st.DataObject
) -> None:
    hypothesis = data.draw(st.sampled_from(sentences))
    premise = data.draw(st.sampled_from([" ", "\n", "  \n"])).join(sentences)
    scores = lexical_nli(premise, hypothesis, index_terms)
    assert scores.entailment >= 0.99
    assert valid(scores)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(OTHERS), max_size=3), st.sampled_from(PAIRS), st.booleans())
def test_a_negated_sentence_is_contradicted(
    others: list[str], pair: tuple[str, str], flip: bool
) -> None:
    statement, negation = (pair[1], pair[0]) if flip else pair
    premise = " ".join([*others, statement])
    scores = lexical_nli(premise, negation, index_terms)
    assert scores.contradiction >= 0.7
    assert valid(scores)


WORDS_A = st.lists(st.sampled_from("apple river stone cloud mountain lamp".split()), min_size=1)
WORDS_B = st.lists(st.sampled_from("violin orbit pepper glacier tunnel".split()), min_size=1)


@settings(max_examples=40, deadline=None)
@given(WORDS_A, WORDS_B)
def test_no_shared_terms_no_entailment(premise: list[str], hypothesis: list[str]) -> None:
    scores = lexical_nli(" ".join(premise), " ".join(hypothesis), index_terms)
    assert scores.entailment == 0.0
    assert valid(scores)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60))
def test_scores_are_probabilities(premise: str, hypothesis: str) -> None:
    assert valid(lexical_nli(premise, hypothesis, index_terms))
    assert valid(entailment([premise, hypothesis], premise, index_terms))
