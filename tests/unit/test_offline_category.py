"""Category of the offline analyzer: personal topics are emotional, small talk is casual.

Spec 000 defines ``emotional`` as 「感情的核心、個人的な話題」: calm facts about oneself, plans for
one's life and events of loss or achievement belong there; greetings, thanks and weather do not.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.adapters.analyzers.offline.protect import protection_clauses
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
        ("Great, another outage at 3am. Just great.", "work"),
        ("I'm on-call this week and it's exhausting.", "work"),
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


@pytest.mark.parametrize(
    ("asked", "told"),
    [
        ("これは覚えておいて：来週の木曜は母の誕生日", "来週の木曜は母の誕生日"),
        ("覚えておいてください、母の誕生日は3月5日です", "母の誕生日は3月5日です"),
        ("Remember this: my mom's birthday is next Thursday", "My mom's birthday is next Thursday"),
        ("Please remember that I'm allergic to peanuts.", "I'm allergic to peanuts."),
    ],
)
def test_a_request_to_remember_keeps_what_it_keeps_personal(
    analyzer: OfflineAnalyzer, asked: str, told: str
) -> None:
    """Asking to remember a fact is no task: the fact keeps its category, and is protected."""
    kept, plain = analyze(analyzer, asked), analyze(analyzer, told)
    assert kept.protected
    assert not plain.protected
    assert kept.category == plain.category == "emotional"


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("覚えておいて、あとで会議の資料まとめて", "work"),
        ("Remember this and fix the failing deploy script, please.", "work"),
    ],
)
def test_a_task_asked_beside_a_request_to_remember_stays_a_task(
    analyzer: OfflineAnalyzer, text: str, category: str
) -> None:
    result = analyze(analyzer, text)
    assert result.protected
    assert result.category == category


@pytest.mark.parametrize(
    "text",
    [
        "I prefer tea over coffee.",
        "I'm a morning person.",
        "I don't eat meat.",
        "I always go fishing on weekends.",
        "I love hiking on weekends.",
        "I really enjoy cooking for my friends.",
        "I hate spiders.",
        "週末はだいたい釣りに行ってる",
        "休みの日はいつもカフェで本を読んでる",
        "毎晩寝る前に本を読むのが習慣",
        "I took up pottery last year.",
    ],
)
def test_lasting_preferences_and_habits_are_personal(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).category == "emotional"


@pytest.mark.parametrize(
    "text", ["I love this song!", "I like the new logo.", "I like it when you explain it simply."]
)
def test_liking_one_thing_at_hand_is_small_talk(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).category == "casual"


@pytest.mark.parametrize(
    ("text", "valence"),
    [
        ("I saved it to my desktop.", "neutral"),
        ("Correction to what you saved earlier: the nursery is on Ashby Road.", "neutral"),
        ("You saved me today, thank you so much.", "positive"),
        ("That saved my life.", "positive"),
        ("I work at the hospital.", "neutral"),
        ("My wife works at a hospital.", "neutral"),
    ],
)
def test_storing_is_not_a_rescue(analyzer: OfflineAnalyzer, text: str, valence: str) -> None:
    assert analyze(analyzer, text).valence.value == valence


_CUES: list[str] = list("覚えておいて忘れないでremembthis ,.:、。！?please")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(_CUES), max_size=60))
def test_request_clauses_stay_inside_the_text(text: str) -> None:
    low = text.lower()
    for start, end in protection_clauses(low):
        assert 0 <= start < end <= len(low)


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("I'm diabetic, so I watch my sugar.", "emotional"),
        ("I take medication for anxiety.", "emotional"),
        ("I play guitar in a band.", "emotional"),
        ("バンドでギターを弾いてる", "emotional"),
        ("I work from home on Fridays.", "work"),
        ("Our cat is 12 and has kidney problems.", "emotional"),
        ("うちの猫は12歳で腎臓が悪い", "emotional"),
        ("I'm a nurse.", "emotional"),
        ("看護師をしています", "emotional"),
        ("My partner's name is Sam.", "emotional"),
        ("アイオワの農場で育った", "emotional"),
        ("I got into grad school!", "emotional"),
        ("I failed my driving test again.", "emotional"),
        ("I failed my unit tests again.", "work"),
        ("医者に行った", "casual"),
        ("We finally bought a house.", "emotional"),
        ("I didn't get the job.", "emotional"),
        ("My grandmother is in hospice.", "emotional"),
        ("I got a raise!", "work"),
        ("My bike got stolen.", "casual"),
        ("I have two kids.", "emotional"),
        ("We have a daughter.", "emotional"),
        ("We have three children.", "emotional"),
        ("We've got two sons.", "emotional"),
        ("I'm taking a pottery class.", "emotional"),
        ("陶芸教室に通ってる", "emotional"),
        ("週3でジムに通ってます", "emotional"),
        ("I have two monitors.", "casual"),
        ("The restaurant's name is Luigi's.", "casual"),
    ],
)
def test_health_hobbies_and_work_arrangements(
    analyzer: OfflineAnalyzer, text: str, category: str
) -> None:
    assert analyze(analyzer, text).category == category


@pytest.mark.parametrize(
    "text",
    ["I prefer tea over coffee, remember that", "Please remember: the staging database resets."],
)
def test_the_request_to_remember_is_no_keyword(analyzer: OfflineAnalyzer, text: str) -> None:
    keywords = [k.casefold() for k in analyze(analyzer, text).keywords]
    assert keywords
    assert not any("remember" in k for k in keywords)


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("大家さんに来月退去してほしいと言われた", False),
        ("上司に資料まとめてって言われた", False),
        ("友達に手伝ってって頼まれた", False),
        ("資料まとめて", True),
        ("退去の手続きを教えてください", True),
    ],
)
def test_a_request_someone_else_made_is_told_not_asked(
    analyzer: OfflineAnalyzer, text: str, asks: bool
) -> None:
    assert analyzer.read(text).context.any_request is asks


def test_being_asked_to_leave_ones_home_is_personal(analyzer: OfflineAnalyzer) -> None:
    text = (
        "大家さんから、来月でこの部屋を取り壊すから退去してほしいと言われた。4年住んだ部屋だった。"
    )
    assert analyze(analyzer, text).category == "emotional"


@pytest.mark.parametrize(
    ("text", "valence", "tag"),
    [
        ("事故の夢、またみた…", "negative", "fear"),
        ("交通事故にあった", "negative", "fear"),
        ("将来の夢はパイロット", "positive", "hope"),
    ],
)
def test_a_dream_one_had_is_not_a_hope(
    analyzer: OfflineAnalyzer, text: str, valence: str, tag: str
) -> None:
    result = analyze(analyzer, text)
    assert result.valence.value == valence
    assert tag in result.tags
