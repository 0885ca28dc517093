"""Token counting for working memory (spec 002 §4 トークン推定): estimate and tokenizers."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from kioku.core.context import (
    MESSAGE_OVERHEAD,
    EstimateCounter,
    Message,
    TokenCounter,
    make_counter,
    message_tokens,
)
from kioku.errors import ConfigError

ENGLISH = "Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you?"
JAPANESE = "今日は朝から雨が降っていて、駅まで歩くのが少し大変でした。"


def test_estimate_is_a_token_counter_named_estimate() -> None:
    counter = make_counter()
    assert isinstance(counter, EstimateCounter)
    assert isinstance(counter, TokenCounter)
    assert counter.name == "estimate"
    assert make_counter("  estimate ").name == "estimate"


def test_empty_text_costs_nothing() -> None:
    assert EstimateCounter().count("") == 0


def test_english_is_about_four_characters_per_token() -> None:
    tokens = EstimateCounter().count(ENGLISH)
    # o200k: 22 tokens, legacy Claude 24: the estimate errs slightly high
    assert len(ENGLISH) / 5 <= tokens <= len(ENGLISH) / 3


def test_japanese_is_about_one_token_per_character() -> None:
    tokens = EstimateCounter().count(JAPANESE)
    # o200k: 21 tokens, legacy Claude 30 for these 29 characters
    assert 0.7 * len(JAPANESE) <= tokens <= 1.1 * len(JAPANESE)


def test_japanese_costs_more_per_character_than_english() -> None:
    counter = EstimateCounter()
    assert counter.count(JAPANESE) / len(JAPANESE) > 3 * counter.count(ENGLISH) / len(ENGLISH)


def test_digits_and_punctuation_cost_more_than_letters() -> None:
    counter = EstimateCounter()
    assert counter.count("1234567890" * 4) > counter.count("abcdefghij" * 4)


def test_mixed_text_and_rare_characters_are_counted() -> None:
    counter = EstimateCounter()
    assert counter.count("DBはPostgreSQLにします") > counter.count("DBはPostgreSQL")
    assert counter.count("🙂🙂") >= 2
    assert counter.count("\ud800 lone surrogate") > 0  # never raises on odd strings


def test_estimate_grows_with_the_text() -> None:
    counter = EstimateCounter()
    assert counter.count(ENGLISH * 10) >= 9 * counter.count(ENGLISH)
    assert counter.count("a") == 1  # rounded up


def test_message_tokens_adds_the_overhead() -> None:
    counter = EstimateCounter()
    message = Message("user", ENGLISH)
    assert message_tokens(counter, message) == counter.count(ENGLISH) + MESSAGE_OVERHEAD
    assert message_tokens(counter, Message("user", "")) == MESSAGE_OVERHEAD


@pytest.mark.parametrize("spec", ["", "bogus", "tiktoken:", "hf:", "hf", "sentencepiece:x"])
def test_unknown_counter_spec_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        make_counter(spec)
    assert "estimate" in str(excinfo.value)


def test_missing_tokenizer_file_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "tokenizer.json"
    with pytest.raises(ConfigError) as excinfo:
        make_counter(f"hf:{missing}")
    assert str(missing) in str(excinfo.value)
    assert excinfo.value.hint is not None
    assert "tokenizer.json" in excinfo.value.hint


def test_hf_without_the_tokenizers_package_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text("{}", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # import fails
    with pytest.raises(ConfigError) as excinfo:
        make_counter(f"hf:{path}")
    assert "pip install tokenizers" in str(excinfo.value)


def test_tiktoken_without_the_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)
    with pytest.raises(ConfigError) as excinfo:
        make_counter("tiktoken:o200k_base")
    assert "pip install tiktoken" in str(excinfo.value)


def test_tiktoken_that_cannot_download_its_encoding_names_the_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = types.ModuleType("tiktoken")

    def get_encoding(name: str) -> object:
        raise ConnectionError(f"cannot download {name}")

    fake.get_encoding = get_encoding  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", fake)
    with pytest.raises(ConfigError) as excinfo:
        make_counter("tiktoken:o200k_base")
    message = str(excinfo.value)
    assert "TIKTOKEN_CACHE_DIR" in message
    assert "cannot download o200k_base" in message


def test_tiktoken_counts_with_the_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    class Encoding:
        def encode_ordinary(self, text: str) -> list[int]:
            return list(range(len(text.split())))

    fake = types.ModuleType("tiktoken")
    fake.get_encoding = lambda name: Encoding()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", fake)
    counter = make_counter("tiktoken:cl100k_base")
    assert counter.name == "tiktoken:cl100k_base"
    assert counter.count("one two three") == 3
    assert counter.count("") == 0


def _word_level_tokenizer(path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    unknown = "[UNK]"
    vocab = {unknown: 0, "hello": 1, "world": 2, "!": 3}
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token=unknown))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tokenizer.save(str(path))


def test_hf_tokenizer_json_counts_exactly(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    _word_level_tokenizer(path)
    counter = make_counter(f"hf:{path}")
    assert counter.name == f"hf:{path}"
    assert counter.count("hello world!") == 3
    assert counter.count("hello unknown words") == 3
    assert counter.count("") == 0
    assert message_tokens(counter, Message("user", "hello")) == 1 + MESSAGE_OVERHEAD


def test_hf_file_that_is_not_a_tokenizer_is_a_config_error(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({"not": "a tokenizer"}), encoding="utf-8")
    with pytest.raises(ConfigError) as excinfo:
        make_counter(f"hf:{path}")
    assert "could not be loaded" in str(excinfo.value)
