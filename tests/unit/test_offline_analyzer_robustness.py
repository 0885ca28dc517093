"""Bad input never crashes the offline analyzer, and every result is a valid memory."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import ALL_TAGS, SPEC_CATEGORIES, Valence
from kioku.core.validate import MAX_TEXT_CHARS
from kioku.ports.analyzer import Analysis, Turn


def assert_valid(result: Analysis) -> None:
    assert 0 <= result.intensity <= 100
    assert 0 <= result.arousal <= 100
    assert isinstance(result.valence, Valence)
    assert set(result.tags) <= ALL_TAGS
    assert len(set(result.tags)) == len(result.tags) <= 3
    assert result.category in SPEC_CATEGORIES
    assert result.language in ("ja", "en", "mixed", "other")
    assert len(result.keywords) <= 5
    assert all(k.strip() for k in result.keywords)
    for text in (result.trigger, result.content):
        assert text.strip()
        assert "\x00" not in text
        assert len(text) <= MAX_TEXT_CHARS


def test_empty_turn_is_a_neutral_placeholder(analyzer: OfflineAnalyzer) -> None:
    for user in ("", "   ", "\n\t\u3000"):
        result = analyzer.analyze(Turn(user))
        assert_valid(result)
        assert result.valence is Valence.NEUTRAL
        assert result.language == "other"
        assert result.intensity <= 15
        assert (result.trigger, result.content) == ("(empty turn)", "(empty turn)")
        assert result.protected is False


def test_reply_without_user_text(analyzer: OfflineAnalyzer) -> None:
    result = analyzer.analyze(Turn("", "Here is the summary you asked for."))
    assert_valid(result)
    assert result.content == "Here is the summary you asked for."


@pytest.mark.parametrize(
    "user",
    [
        "\x00\x01\x02\x03\x7f\x1b[31m",
        bytes(range(256)).decode("utf-8", errors="replace"),
        b"\xff\xfe\x00\x80\xc3\x28\xa0\xa1\xe2\x28\xa1".decode("utf-8", errors="replace") * 20,
        "\ud800\udfff lone surrogates",
        "مرحبا كيف حالك اليوم",
        "Привет, как дела? Всё хорошо.",
        "🙂🙃🫠🫥",
        "????!!!!....",
    ],
)
def test_garbage_and_unsupported_scripts(analyzer: OfflineAnalyzer, user: str) -> None:
    result = analyzer.analyze(Turn(user))
    assert_valid(result)
    assert result.language == "other"
    assert result.intensity <= 25


@pytest.mark.parametrize("user", ["مرحبا كيف حالك اليوم", "Привет, как дела?"])
def test_unsupported_scripts_are_neutral(analyzer: OfflineAnalyzer, user: str) -> None:
    result = analyzer.analyze(Turn(user))
    assert result.valence is Valence.NEUTRAL
    assert result.tags == ()


def test_emoji_only_turn_is_other_and_low_intensity(analyzer: OfflineAnalyzer) -> None:
    result = analyzer.analyze(Turn("😭😭😭"))
    assert result.language == "other"
    assert result.intensity <= 25


@pytest.mark.parametrize(
    "unit",
    [
        "今日はとても嬉しい日でした。",
        "I am so happy today, thanks for everything. ",
        "a" * 997 + "\n",
    ],
)
def test_one_megabyte_turn_is_bounded(analyzer: OfflineAnalyzer, unit: str) -> None:
    big = unit * (1_000_000 // len(unit))
    result = analyzer.analyze(Turn(big, big))
    assert_valid(result)
    assert len(result.trigger) <= 400
    assert len(result.content) <= 4000


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(user=st.text(max_size=400), assistant=st.text(max_size=200))
def test_any_text_gives_a_valid_analysis(
    analyzer: OfflineAnalyzer, user: str, assistant: str
) -> None:
    assert_valid(analyzer.analyze(Turn(user, assistant)))


_JA_EN = st.text(
    alphabet=st.sampled_from(
        list("嬉しい楽悲怒不安最高悪くないじゃ了解やったできた！？。、……笑ｗ😭😂👍(^^)")
        + list("I am not very happy sad bad good but thanks!? WHY no ")
    ),
    max_size=80,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(user=_JA_EN)
def test_emotional_text_gives_a_valid_and_deterministic_analysis(
    analyzer: OfflineAnalyzer, user: str
) -> None:
    first = analyzer.analyze(Turn(user))
    assert_valid(first)
    assert analyzer.analyze(Turn(user)) == first
    assert OfflineAnalyzer().analyze(Turn(user)) == first


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trigger=st.text(max_size=300), content=st.text(max_size=600))
def test_compression_of_any_text(analyzer: OfflineAnalyzer, trigger: str, content: str) -> None:
    for pair in (analyzer.summarize(trigger, content), analyzer.extract_keywords(trigger, content)):
        assert pair.trigger.strip()
        assert pair.content.strip()
        assert "\x00" not in pair.trigger + pair.content
