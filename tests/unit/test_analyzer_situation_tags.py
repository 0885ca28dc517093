"""Tags the offline analyzer infers from the situation: love for someone close, anger in irony."""

from __future__ import annotations

from importlib import resources

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn


def tags_of(analyzer: OfflineAnalyzer, text: str) -> tuple[Valence, tuple[str, ...]]:
    result = analyzer.analyze(Turn(text))
    return result.valence, result.tags


@pytest.mark.parametrize(
    "text",
    [
        "母がケーキを焼いてくれた、嬉しい",
        "うちの犬が隣で寝てる、かわいい",
        "My daughter drew me a picture, so happy",
    ],
)
def test_a_pleasant_turn_about_family_or_a_pet_carries_love(
    analyzer: OfflineAnalyzer, text: str
) -> None:
    valence, tags = tags_of(analyzer, text)
    assert valence is Valence.POSITIVE
    assert "love" in tags


@pytest.mark.parametrize(
    "text",
    [
        # A place, a friend, an event: readers give joy, not love.
        "実家の近くのカフェ、すごく美味しかった！",
        "親友と温泉に行ってきた、最高だった！",
        "婚活パーティー、楽しかった！",
        "My best friend threw me a party, so happy",
    ],
)
def test_friends_places_and_events_do_not_carry_love(analyzer: OfflineAnalyzer, text: str) -> None:
    valence, tags = tags_of(analyzer, text)
    assert valence is Valence.POSITIVE
    assert tags
    assert "love" not in tags


@pytest.mark.parametrize(
    "text",
    [
        "試験に合格した！すぐ父に報告した、嬉しい",
        "I passed my exam! Called my dad right away, so proud",
    ],
)
def test_pride_in_ones_own_achievement_names_family_only_in_passing(
    analyzer: OfflineAnalyzer, text: str
) -> None:
    valence, tags = tags_of(analyzer, text)
    assert valence is Valence.POSITIVE
    assert "pride" in tags
    assert "love" not in tags


@pytest.mark.parametrize(
    "text",
    [
        "宅配便がまた遅れた。さすがだね",
        "電車がまた止まった。さすがだね（笑）",
    ],
)
def test_japanese_irony_at_others_is_anger_as_well(analyzer: OfflineAnalyzer, text: str) -> None:
    valence, tags = tags_of(analyzer, text)
    assert valence is Valence.NEGATIVE
    assert {"frustration", "anger"} <= set(tags)


def test_japanese_irony_at_oneself_is_frustration_without_anger(
    analyzer: OfflineAnalyzer,
) -> None:
    valence, tags = tags_of(analyzer, "また鍵を忘れた私。さすがだわ")
    assert valence is Valence.NEGATIVE
    assert "frustration" in tags
    assert "anger" not in tags


def test_sincere_praise_after_help_stays_positive(analyzer: OfflineAnalyzer) -> None:
    valence, tags = tags_of(analyzer, "バグ直してくれた、さすが！")
    assert valence is Valence.POSITIVE
    assert "anger" not in tags


def test_every_close_one_is_a_topic_cue() -> None:
    """close_ones.txt names topic cues; a line no topic table lists would never match."""
    data = resources.files("kioku.adapters.analyzers.offline").joinpath("data")

    def rows(name: str) -> list[list[str]]:
        text = data.joinpath(name).read_text(encoding="utf-8")
        return [line.split("\t") for line in text.splitlines() if line and line[0] != "#"]

    cues = {row[0].lower() for name in ("topics_ja.tsv", "topics_en.tsv") for row in rows(name)}
    cues.add("pet owner")  # the English pet-owner pattern ("we adopted a puppy")
    close = [row[0].lower() for row in rows("close_ones.txt")]
    assert close
    assert [c for c in close if c not in cues] == []
