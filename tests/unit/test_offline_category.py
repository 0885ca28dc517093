"""Category of the offline analyzer: personal topics are emotional, small talk is casual.

Spec 000 defines ``emotional`` as 「感情的核心、個人的な話題」: calm facts about oneself, plans for
one's life and events of loss or achievement belong there; greetings, thanks and weather do not.
"""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.ports.analyzer import Analysis, Turn


def analyze(analyzer: OfflineAnalyzer, user: str) -> Analysis:
    return analyzer.analyze(Turn(user, ""))


@pytest.mark.parametrize(
    "text",
    [
        "My name is Ken",
        "I live in Osaka",
        "I'm from Lyon, grew up there",
        "I'm allergic to peanuts",
        "My daughter starts school in April",
        "We adopted two kittens last year",
        "I can't eat shellfish",
        "私の名前は健です",
        "大阪に住んでいます",
        "来月、大阪に引っ越す予定",
        "エビアレルギーがあります",
        "辛いものが大好き",
        "実家で猫を飼ってる",
    ],
)
def test_calm_personal_facts_are_emotional(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).category == "emotional"


@pytest.mark.parametrize(
    "text",
    [
        "猫のタマが家出…本当に悲しい",
        "Our dog ran away last night",
        "I lost my job today",
        "仕事をクビになった",
        "I passed my driving test!",
        "コンクールで金賞を受賞した！",
    ],
)
def test_loss_and_achievement_are_emotional(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).category == "emotional"


@pytest.mark.parametrize(
    "text",
    [
        "Thanks, that helped",
        "nice weather today",
        "good morning!",
        "今日の昼はそば",
        "おはよう、今日は雨だね",
        "うちの猫、キーボードの上で寝てるw",
        "ok",
    ],
)
def test_small_talk_is_casual(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).category == "casual"


def test_fact_inside_a_request_stays_personal(analyzer: OfflineAnalyzer) -> None:
    text = "I'm allergic to peanuts, so please suggest recipes without them"
    assert analyze(analyzer, text).category == "emotional"


def test_writing_request_mentioning_family_is_not_personal(analyzer: OfflineAnalyzer) -> None:
    assert analyze(analyzer, "Please write a short poem about my mother").category != "emotional"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("I've decided to move to Berlin", "decision"),
        ("引っ越すことにした。来月から福岡で暮らす", "decision"),
        ("The deploy failed again, check the server logs", "work"),
    ],
)
def test_decisions_and_tasks_keep_their_category(
    analyzer: OfflineAnalyzer, text: str, category: str
) -> None:
    assert analyze(analyzer, text).category == category


@pytest.mark.parametrize(
    "text",
    [
        "一人暮らしです",
        "夫婦二人暮らしで、子どもはいません。",
        "I live alone with my cat",
        "I'm retired",
    ],
)
def test_living_arrangements_and_status_are_personal(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).category == "emotional"


def test_a_phobia_named_is_a_fact_not_a_felt_fright(analyzer: OfflineAnalyzer) -> None:
    result = analyze(analyzer, "僕、高所恐怖症なんですよ")
    assert result.category == "emotional"
    assert result.intensity <= 55


@pytest.mark.parametrize(
    "text",
    [
        "左利きです",
        "義母との同居がしんどい",
        "息子が反抗期で全然口きいてくれない",
        "来年から海外赴任",
        "最近眠れない",
        "自分のことが嫌になる",
        "4年住んだ部屋を来月退去する",
        "推しのライブ当たった！",
        "楽しみすぎて仕事が手につかない",
        "人見知りなんです",
        "大学で心理学を専攻してた",
        "祖母に育てられた",
        "電車で痴漢にあった",
        "幼なじみが結婚した",
    ],
)
def test_japanese_personal_life_and_inner_states_are_emotional(
    analyzer: OfflineAnalyzer, text: str
) -> None:
    assert analyze(analyzer, text).category == "emotional"
