"""Intensity of the offline analyzer: personal facts sit in their band, events rank by stakes."""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Turn


def intensity(analyzer: OfflineAnalyzer, user: str) -> int:
    return analyzer.analyze(Turn(user, "")).intensity


@pytest.mark.parametrize(
    "text", ["I live in Osaka", "My name is Ken", "大阪に住んでいます", "I can't eat shellfish"]
)
def test_calm_personal_facts_are_30_to_45(analyzer: OfflineAnalyzer, text: str) -> None:
    assert 30 <= intensity(analyzer, text) <= 45


@pytest.mark.parametrize(
    "text",
    ["My daughter starts school in April", "来月、大阪に引っ越す予定", "エビアレルギーがあります"],
)
def test_family_health_and_plans_are_40_to_55(analyzer: OfflineAnalyzer, text: str) -> None:
    assert 40 <= intensity(analyzer, text) <= 55


def test_lost_pet_is_intense_and_negative(analyzer: OfflineAnalyzer) -> None:
    result = analyzer.analyze(Turn("猫のタマが家出…本当に悲しい", ""))
    assert result.valence is Valence.NEGATIVE
    assert result.intensity >= 60


def test_small_talk_stays_low(analyzer: OfflineAnalyzer) -> None:
    assert intensity(analyzer, "nice weather today") <= 35
    assert intensity(analyzer, "ok") <= 10


def test_a_loss_asked_about_in_a_request_is_not_a_bereavement(analyzer: OfflineAnalyzer) -> None:
    told = intensity(analyzer, "先月、父が亡くなりました")
    asked = intensity(analyzer, "法事の準備って何をすればいいか、一覧で教えてもらえますか")
    assert told >= 80
    assert asked < told - 20


def test_big_relationship_events_outrank_family_facts(analyzer: OfflineAnalyzer) -> None:
    assert intensity(analyzer, "彼女にプロポーズした") > intensity(analyzer, "妹が東京に住んでる")
    assert intensity(analyzer, "My girlfriend dumped me") >= 60


def test_katakana_after_a_verb_is_no_adjective(analyzer: OfflineAnalyzer) -> None:
    # 「していたイベント」 folds to …していたいべんと: no 痛い in it.
    hits = analyzer.read("楽しみにしていたイベント").emotion.hits
    assert all(h.term not in ("痛い", "いたい") for h in hits)


@pytest.mark.parametrize(
    "text",
    [
        "先週、15年一緒に暮らした猫が息を引き取りました。最期は私の腕の中でした。",
        "昨日の夜、暗い道でずっと後ろを誰かがついてきてた。コンビニに駆け込んだ。",
        "Last night a car ran a red light and missed me by a metre. My hands are still shaking.",
    ],
)
def test_a_told_experience_outranks_small_talk(analyzer: OfflineAnalyzer, text: str) -> None:
    result = analyzer.analyze(Turn(text, ""))
    assert result.category == "emotional"
    assert result.intensity >= 50
    assert result.intensity > intensity(analyzer, "夜の散歩、風が気持ちいい")


def test_ganbaru_is_no_cancer(analyzer: OfflineAnalyzer) -> None:
    # がんばる starts like がん (cancer): the longer non-cue wins, so this stays small talk.
    assert "がん" not in analyzer.read("今日も一日がんばりましょう").topics.cues
    assert intensity(analyzer, "おはようございます、今日も一日がんばりましょう") <= 30


@pytest.mark.parametrize("text", ["妊娠した", "卒業した"])
def test_a_four_character_event_is_no_acknowledgement(analyzer: OfflineAnalyzer, text: str) -> None:
    assert intensity(analyzer, text) >= 45


@pytest.mark.parametrize("text", ["了解", "はい", "ok"])
def test_a_short_acknowledgement_stays_low(analyzer: OfflineAnalyzer, text: str) -> None:
    assert intensity(analyzer, text) <= 10


@pytest.mark.parametrize(
    "text",
    [
        "先月、父が亡くなりました",
        "My dad passed away last year.",
        "My dog died.",
        "猫のタマが家出…本当に悲しい",
    ],
)
def test_a_loss_stays_in_the_bereavement_band(analyzer: OfflineAnalyzer, text: str) -> None:
    """Bereavement is 85-90 on the spec's anchors; above it is trauma's band."""
    assert 80 <= intensity(analyzer, text) <= 92


def test_trauma_ranks_above_a_loss(analyzer: OfflineAnalyzer) -> None:
    trauma = intensity(analyzer, "I was assaulted last year and I still have nightmares.")
    assert trauma > intensity(analyzer, "My dad passed away last year.")
