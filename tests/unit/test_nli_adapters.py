"""The NLI adapters: found by name, the lexical check behind the port, and the transformers
model's labels, scores and missing-package error."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys

import pytest

from kioku.adapters.nli import (
    DEFAULT_NLI_MODEL,
    LexicalNli,
    TransformersNli,
    make_nli,
)
from kioku.adapters.nli.transformers_nli import label_indices, scores_of
from kioku.errors import ConfigError
from kioku.ports.consolidation import Nli

# -- make_nli --------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["none", " None ", "NONE"])
def test_none_means_no_model(spec: str) -> None:
    assert make_nli(spec) is None


@pytest.mark.parametrize("spec", ["lexical", "Lexical", " lexical "])
def test_lexical(spec: str) -> None:
    nli = make_nli(spec)
    assert isinstance(nli, LexicalNli)
    assert isinstance(nli, Nli)
    assert nli.name == "lexical"


def test_transformers_with_the_default_model() -> None:
    nli = make_nli("transformers")
    assert isinstance(nli, TransformersNli)
    assert isinstance(nli, Nli)
    assert (
        nli.model
        == DEFAULT_NLI_MODEL
        == "MoritzLaurer/mDeBERTa-v3-base-xnli-multilingual-nli-2mil7"
    )
    assert nli.name == f"transformers:{DEFAULT_NLI_MODEL}"


@pytest.mark.parametrize(
    ("spec", "model"),
    [
        ("transformers:joeddav/xlm-roberta-large-xnli", "joeddav/xlm-roberta-large-xnli"),
        ("Transformers: /models/nli ", "/models/nli"),
        ("transformers:C:/models/nli", "C:/models/nli"),  # only the first colon separates
    ],
)
def test_transformers_with_a_named_model(spec: str, model: str) -> None:
    nli = make_nli(spec)
    assert isinstance(nli, TransformersNli)
    assert nli.model == model


@pytest.mark.parametrize(
    "spec", ["", "lexcal", "openai", "transformers:", "transformers: ", "lexical:x", "none:x"]
)
def test_anything_else_is_a_config_error_listing_the_choices(spec: str) -> None:
    with pytest.raises(ConfigError) as caught:
        make_nli(spec)
    assert caught.value.key == "consolidation.nli"
    assert caught.value.value == spec
    assert caught.value.allowed == "none, lexical, transformers or transformers:<model>"


def test_the_error_names_the_setting_it_is_given() -> None:
    with pytest.raises(ConfigError) as caught:
        make_nli("bert", setting="validation.nli")
    assert caught.value.key == "validation.nli"


# -- the transformers adapter without transformers ---------------------------------------------


@pytest.mark.skipif(
    importlib.util.find_spec("transformers") is not None, reason="transformers is installed"
)
def test_without_transformers_the_first_judgement_says_how_to_install_it() -> None:
    nli = TransformersNli(device="cpu")  # building it imports nothing
    with pytest.raises(ConfigError) as caught:
        nli.classify("Alice owns the billing service.", "Alice owns billing.")
    assert caught.value.key == "consolidation.nli"
    assert caught.value.hint is not None
    assert "pip install 'kioku[nli]'" in caught.value.hint
    assert "pip install 'kioku[nli]'" in str(caught.value)


def test_importing_the_adapters_loads_no_model_library() -> None:
    code = (
        "import sys\n"
        "from kioku.adapters.nli import make_nli\n"
        "make_nli('transformers')\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"


def test_a_blank_model_name_is_refused() -> None:
    with pytest.raises(ConfigError):
        TransformersNli(" ")


# -- labels and scores of a transformers model ------------------------------------------------


def test_labels_are_read_from_the_model_config_in_any_case_and_order() -> None:
    # The default model's configuration: 0 entailment, 1 neutral, 2 contradiction.
    assert label_indices({0: "entailment", 1: "neutral", 2: "contradiction"}) == (0, 1, 2)
    assert label_indices({"0": "CONTRADICTION", "1": "Neutral", "2": "ENTAILMENT"}) == (2, 1, 0)


@pytest.mark.parametrize(
    "id2label",
    [
        {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
        {0: "entailment", 1: "not_entailment"},
    ],
)
def test_a_model_without_the_three_labels_is_refused(id2label: dict[int, str]) -> None:
    with pytest.raises(ValueError, match="labels do not name"):
        label_indices(id2label)


def test_scores_are_the_softmax_of_the_three_logits() -> None:
    scores = scores_of([2.0, 0.0, -1.0], (0, 1, 2))
    total = math.exp(2.0) + math.exp(0.0) + math.exp(-1.0)
    assert scores.entailment == pytest.approx(math.exp(2.0) / total)
    assert scores.neutral == pytest.approx(1.0 / total)
    assert scores.contradiction == pytest.approx(math.exp(-1.0) / total)
    assert scores.entailment + scores.neutral + scores.contradiction == pytest.approx(1.0)


def test_scores_follow_the_label_order_and_survive_large_logits() -> None:
    scores = scores_of([1000.0, -1000.0, 0.0, 5.0], (1, 2, 0))  # a fourth output is left out
    assert scores.contradiction == pytest.approx(1.0)
    assert scores.entailment == pytest.approx(0.0)
    assert scores.entailment + scores.neutral + scores.contradiction == pytest.approx(1.0)


# -- the lexical adapter --------------------------------------------------------------------


@pytest.fixture
def lexical() -> LexicalNli:
    pytest.importorskip("kioku.core.consolidation.entail")
    return LexicalNli()


@pytest.mark.parametrize(
    ("premise", "hypothesis"),
    [
        (
            "The deploy script runs on Fridays. Alice owns the billing service.",
            "Alice owns the billing service.",
        ),
        ("会議で決めた。田中さんは経理部の担当です。", "田中さんは経理部の担当です。"),
    ],
)
def test_lexical_entailment(lexical: LexicalNli, premise: str, hypothesis: str) -> None:
    scores = lexical.classify(premise, hypothesis)
    assert scores.entailment == pytest.approx(1.0)
    assert scores.contradiction == pytest.approx(0.0)


@pytest.mark.parametrize(
    ("premise", "hypothesis"),
    [
        ("Alice owns the billing service.", "Alice does not own the billing service."),
        ("田中さんは経理部の担当です。", "田中さんは経理部の担当ではない。"),
        ("The meeting is at 3 pm in room 12.", "The meeting is at 5 pm in room 12."),
    ],
)
def test_lexical_contradiction(lexical: LexicalNli, premise: str, hypothesis: str) -> None:
    scores = lexical.classify(premise, hypothesis)
    assert scores.contradiction >= 0.7
    assert scores.entailment < 0.6


def test_lexical_neutral(lexical: LexicalNli) -> None:
    scores = lexical.classify("Alice owns the billing service.", "Bob likes green tea.")
    assert scores.neutral == pytest.approx(1.0)


def test_lexical_scores_are_probabilities(lexical: LexicalNli) -> None:
    scores = lexical.classify("The cache was cleared twice.", "The cache was cleared.")
    values = (scores.entailment, scores.contradiction, scores.neutral)
    assert all(0.0 <= v <= 1.0 for v in values)
    assert sum(values) == pytest.approx(1.0)
