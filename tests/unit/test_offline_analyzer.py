"""The offline analyzer on the spec's examples and the cues it is built from."""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.core.model import Valence
from kioku.ports.analyzer import Analysis, Analyzer, Turn


def analyze(analyzer: OfflineAnalyzer, user: str, assistant: str = "") -> Analysis:
    return analyzer.analyze(Turn(user, assistant))


def test_is_an_analyzer(analyzer: OfflineAnalyzer) -> None:
    assert isinstance(analyzer, Analyzer)
    assert analyzer.name == "offline"
    assert analyze(analyzer, "hello").analyzer == "offline"


def test_unknown_segmenter_is_refused() -> None:
    with pytest.raises(ValueError, match="segmenter"):
        OfflineAnalyzer(segmenter="mecab")  # type: ignore[arg-type]


# The five classification examples of spec 000 (感情分類システム › 分類例).
SPEC_EXAMPLES = [
    ("やった、できた！", Valence.POSITIVE, 85, {"joy", "excitement", "pride"}),
    ("まあまあかな", Valence.POSITIVE, 25, {"satisfaction"}),
    ("ふざけんな！", Valence.NEGATIVE, 90, {"anger", "frustration"}),
    ("……そう、仕方ないね", Valence.NEGATIVE, 20, {"sadness", "resignation"}),
    ("了解、やっておく", Valence.NEUTRAL, 30, set()),
]


@pytest.mark.parametrize(("text", "valence", "arousal", "tags"), SPEC_EXAMPLES)
def test_spec_example_valence(
    analyzer: OfflineAnalyzer, text: str, valence: Valence, arousal: int, tags: set[str]
) -> None:
    assert analyze(analyzer, text).valence is valence


def test_spec_examples_arousal_within_15_for_at_least_four(analyzer: OfflineAnalyzer) -> None:
    close = [abs(analyze(analyzer, t).arousal - a) <= 15 for t, _, a, _ in SPEC_EXAMPLES]
    assert sum(close) >= 4, close


def test_spec_examples_share_an_expected_tag_for_at_least_four(analyzer: OfflineAnalyzer) -> None:
    shared = [
        bool(set(analyze(analyzer, t).tags) & tags) for t, _, _, tags in SPEC_EXAMPLES if tags
    ]
    assert sum(shared) >= 4, shared
    assert analyze(analyzer, "了解、やっておく").tags == ()


@pytest.mark.parametrize(
    ("text", "valence"),
    [
        ("嬉しくない", Valence.NEGATIVE),
        ("楽しくなかった", Valence.NEGATIVE),
        ("誕生日なのに全然嬉しくない", Valence.NEGATIVE),
        ("別に好きじゃない", Valence.NEGATIVE),
        ("悪くない", Valence.POSITIVE),
        ("思ったより悪くなかった、あの映画", Valence.POSITIVE),
        ("嫌いじゃないよ、こういう作業", Valence.POSITIVE),
        ("I am not happy about this", Valence.NEGATIVE),
        ("I never liked that song", Valence.NEGATIVE),
        ("I don't like the new layout", Valence.NEGATIVE),
        ("It isn't bad at all", Valence.POSITIVE),
        ("Not bad for a first try", Valence.POSITIVE),
    ],
)
def test_negation(analyzer: OfflineAnalyzer, text: str, valence: Valence) -> None:
    assert analyze(analyzer, text).valence is valence


@pytest.mark.parametrize(
    ("strong", "weak"),
    [
        ("すごく嬉しい", "ちょっと嬉しい"),
        ("めっちゃ楽しかった", "少し楽しかった"),
        ("超最悪", "まあまあ最悪"),
        ("本当にありがとう", "ありがとう"),
        ("I am very happy", "I am a bit happy"),
        ("This is extremely annoying", "This is slightly annoying"),
        ("I'm really sad", "I'm kind of sad"),
    ],
)
def test_degree_words_scale_the_feeling(analyzer: OfflineAnalyzer, strong: str, weak: str) -> None:
    assert analyzer.read(strong).emotion.strength > analyzer.read(weak).emotion.strength
    assert analyze(analyzer, strong).intensity >= analyze(analyzer, weak).intensity


@pytest.mark.parametrize(
    ("text", "valence", "tag"),
    [
        ("😭", Valence.NEGATIVE, "sadness"),
        ("😂😂", Valence.POSITIVE, "joy"),
        ("ありがとう🙏", Valence.POSITIVE, "gratitude"),
        ("❤️", Valence.POSITIVE, "love"),
        ("👍", Valence.POSITIVE, None),
        ("また遅延か😡", Valence.NEGATIVE, "anger"),
        ("できた(^^)", Valence.POSITIVE, "joy"),
        ("落ちた(T_T)", Valence.NEGATIVE, "sadness"),
        ("また落ちた orz", Valence.NEGATIVE, None),
        ("面白すぎｗｗｗ", Valence.POSITIVE, "joy"),
        ("それな笑", Valence.POSITIVE, "joy"),
        ("haha that was great :)", Valence.POSITIVE, None),
    ],
)
def test_emoji_kaomoji_and_laughter(
    analyzer: OfflineAnalyzer, text: str, valence: Valence, tag: str | None
) -> None:
    result = analyze(analyzer, text)
    assert result.valence is valence
    if tag is not None:
        assert tag in result.tags


@pytest.mark.parametrize(
    ("text", "valence"),
    [
        ("嬉しい！成功した！ありがとう", Valence.POSITIVE),
        ("失敗した。最悪。困った", Valence.NEGATIVE),
        ("明日は9時から打ち合わせ、午後は資料作り", Valence.NEUTRAL),
        ("成功時は200、失敗時は400を返すようにして", Valence.NEUTRAL),
        ("最悪のケースを想定して、復旧手順を書いておきたい", Valence.NEUTRAL),
        ("「嬉しい」の類語をいくつか挙げて", Valence.NEUTRAL),
        ("どうすればいい？", Valence.NEUTRAL),
        ("大変だったけど、最高の一日だった", Valence.POSITIVE),
        ("楽しみにしてたのにな", Valence.NEGATIVE),
        ("土曜出勤ありがとうございます、本当に嬉しいです（棒）", Valence.NEGATIVE),
        ("How do I handle the error when the request fails?", Valence.NEUTRAL),
        ("It was hard, but totally worth it", Valence.POSITIVE),
        ("Thanks so much, this saved my day!", Valence.POSITIVE),
        ("I hate this stupid printer", Valence.NEGATIVE),
        ("The meeting is at 3pm in room B.", Valence.NEUTRAL),
    ],
)
def test_valence_cues_and_context(analyzer: OfflineAnalyzer, text: str, valence: Valence) -> None:
    assert analyze(analyzer, text).valence is valence


def test_arousal_cues(analyzer: OfflineAnalyzer) -> None:
    calm = analyze(analyzer, "了解、やっておく").arousal
    assert 20 <= calm <= 40
    assert analyze(analyzer, "やったー！！！").arousal > analyze(analyzer, "やった").arousal
    assert analyze(analyzer, "そうなんだ……").arousal < analyze(analyzer, "そうなんだ").arousal
    assert analyze(analyzer, "まじまじ無理").arousal > analyze(analyzer, "無理").arousal
    assert analyze(analyzer, "no no no no").arousal > analyze(analyzer, "no").arousal
    assert (
        analyze(analyzer, "WHY IS IT BROKEN AGAIN").arousal
        > analyze(analyzer, "why is it broken again").arousal
    )
    # Acronyms are not shouting.
    assert analyze(analyzer, "The SQL JOIN uses the API").arousal < 45
    long_calm = (
        "今日は一日なにもしないで、本を読んで過ごしました。夕方に少し散歩をして、"
        "帰ってからゆっくりお茶を飲みました。静かな一日でした。"
    )
    assert analyze(analyzer, long_calm).arousal <= 35


@pytest.mark.parametrize(
    ("text", "low", "high"),
    [
        ("誤字修正：「ユーザ」じゃなくて「ユーザー」でした", 10, 25),
        ("Fix the typo in the README: teh -> the", 10, 25),
        ("APIのレスポンスが遅いので、キャッシュを入れるか相談したい", 25, 45),
        ("How do I add an index to this SQL query?", 25, 45),
        ("DBはPostgreSQLにすることにした。JSONBが使えるので", 38, 55),
        ("We decided to use PostgreSQL instead of MongoDB.", 38, 55),
        ("母が入院した。心配で眠れない", 60, 95),
        ("先月、父が亡くなりました", 80, 100),
        ("My dad passed away last month.", 80, 100),
        ("了解", 0, 15),
    ],
)
def test_intensity_follows_the_spec_situation_guide(
    analyzer: OfflineAnalyzer, text: str, low: int, high: int
) -> None:
    assert low <= analyze(analyzer, text).intensity <= high


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("DBはPostgreSQLにします", "decision"),
        ("認証はJWTじゃなくてセッション方式でいく", "decision"),
        ("We decided to use PostgreSQL for the store.", "decision"),
        ("Let's go with Redis for the cache.", "decision"),
        ("このReactコンポーネント、propsの型定義を追加して", "work"),
        ("The deploy failed with a 500 error from the API", "work"),
        ("明日の会議の資料を作らないと", "work"),
        ("母が入院した。心配で眠れない", "emotional"),
        ("My grandmother died last night and I can't stop crying", "emotional"),
        ("おはよう！今日はいい天気だね", "casual"),
        ("Good morning! Nice weather today.", "casual"),
        ("了解", "casual"),
    ],
)
def test_category(analyzer: OfflineAnalyzer, text: str, category: str) -> None:
    assert analyze(analyzer, text).category == category


def test_keywords_japanese_morphology(analyzer: OfflineAnalyzer) -> None:
    result = analyze(analyzer, "記憶システムのストレージ、MongoDBにしたらどう思う？")
    assert result.keywords[0] == "MongoDB"
    assert {"記憶システム", "ストレージ"} <= set(result.keywords)
    assert len(result.keywords) <= 5
    sql = analyze(analyzer, "SQLのJOINが遅いのでインデックスを貼りたい").keywords
    assert {"SQL", "JOIN", "インデックス"} <= set(sql)


def test_keywords_english_names_terms_and_phrases(analyzer: OfflineAnalyzer) -> None:
    result = analyze(
        analyzer, "We decided to use PostgreSQL instead of MongoDB for the memory store."
    )
    assert result.keywords[:2] == ("PostgreSQL", "MongoDB")
    assert "memory store" in result.keywords
    assert not {"we", "the", "for"} & {k.lower() for k in result.keywords}


def test_keywords_include_the_assistant_reply(analyzer: OfflineAnalyzer) -> None:
    result = analyze(analyzer, "どうすればいい？", "Redisでキャッシュすると速くなります")
    assert "Redis" in result.keywords


def test_trigger_and_content_keep_the_full_turn(analyzer: OfflineAnalyzer) -> None:
    result = analyze(analyzer, "MongoDBにしたらどう思う？", "JSONで十分だと思います。")
    assert result.trigger == "MongoDBにしたらどう思う？"
    assert result.content == "JSONで十分だと思います。"


def test_without_reply_content_is_the_user_text_and_trigger_a_gist(
    analyzer: OfflineAnalyzer,
) -> None:
    text = "今日は本当にいい日だった。初めて自分の絵が売れたんだ。" * 3
    result = analyze(analyzer, text)
    assert result.content == text
    assert result.trigger == "今日は本当にいい日だった。"


def test_long_turns_are_shortened_extractively(analyzer: OfflineAnalyzer) -> None:
    user = " ".join(f"Sentence number {i} talks about PostgreSQL tuning." for i in range(60))
    reply = " ".join(f"Answer part {i} explains vacuum settings in detail." for i in range(200))
    result = analyze(analyzer, user, reply)
    assert 0 < len(result.trigger) <= 400
    assert 0 < len(result.content) <= 4000
    assert result.trigger.startswith("Sentence number 0")
    assert result.content.startswith("Answer part 0")


@pytest.mark.parametrize(
    "text",
    [
        "これは覚えておいて：来週の木曜は母の誕生日",
        "忘れないで",
        "重要だから記憶して",
        "絶対に忘れないで",
        "覚えといて、私はコーヒーが苦手",
        "メモしておいて：会議室はB",
        "記憶しておいてほしい",
        "絶対忘れんなよ！",
        "remember this: my wife is vegetarian",
        "Please remember that I prefer tabs",
        "Don't forget: the demo is on Friday",
        "This is important, keep it",
        "Make a note of this, the server is in Osaka",
    ],
)
def test_protection_requests(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).protected is True


@pytest.mark.parametrize(
    "text",
    [
        "昨日話したAPIの件、覚えてる？",
        "忘れてた！今日ゴミの日だ",
        "さっきの話は忘れて",
        "英単語、どうやったら忘れないで覚えられる？",
        "覚えるのが苦手で…",
        "do you remember what I said yesterday?",
        "I forgot my keys again",
        "I remember when we first met",
    ],
)
def test_near_misses_are_not_protected(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).protected is False


def test_spec_protected_example(analyzer: OfflineAnalyzer) -> None:
    result = analyze(analyzer, "これは覚えておいて：来週の木曜は母の誕生日", "わかりました")
    assert result.protected is True
    assert result.content == "わかりました"
    assert "誕生日" in result.keywords


# Japanese irony: praise right after a mishap means the opposite; plain praise stays positive.
@pytest.mark.parametrize(
    "text",
    [
        "テスト落ちた。さすがだね（笑）",
        "財布なくした。最高だわ",
        "電車止まった、さすが",
        "寝坊した。いやー、ついてるね",
        "はいはい、また仕様変更ね。最高だわ、ほんと",
        "ありがとうございます〜（棒）",
        "役所で3時間待たされた挙句、追い返された。さすがお役所、期待を裏切らない。",
        "今日の会議、1時間かけて何も決まらなかった。素晴らしい生産性ですね",
        "すごーい、また寝坊した私。天才かな？",
        "株、買った翌日に暴落。さすが私、持ってるわ〜",
        "雨予報ゼロだったのに土砂降りね。天気予報さすがです（笑）",
        "ありがとう、その回答のおかげでさらに分からなくなったよ（笑）",
    ],
)
def test_japanese_irony_after_a_mishap_is_negative(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).valence is Valence.NEGATIVE


@pytest.mark.parametrize(
    "text",
    [
        "さすが！助かった",
        "バグ直してくれた、さすが！",
        "大変だったけど、最高だった",
        "合格した！さすが私",
        "財布落とした。交番に届いてた。最高！",
        "楽しみにしてたのに中止。でも代わりの企画が最高だった",
        "先生のおかげで合格できた、ありがとう",
    ],
)
def test_japanese_plain_praise_stays_positive(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).valence is Valence.POSITIVE


@pytest.mark.parametrize(
    "text",
    ["帰りの電車で、窓の外ばっかり見てた", "母が好物を作ってくれてた", "先輩が手伝ってくれた"],
)
def test_a_te_form_that_tells_is_no_request(analyzer: OfflineAnalyzer, text: str) -> None:
    assert not analyzer.read(text).context.any_request


@pytest.mark.parametrize("text", ["これ見て", "この文、英語に訳して", "手順を教えてください"])
def test_a_te_form_that_asks_is_a_request(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyzer.read(text).context.any_request


def test_nasakenai_inflects(analyzer: OfflineAnalyzer) -> None:
    assert analyze(analyzer, "情けなくて涙が出た").valence is Valence.NEGATIVE


@pytest.mark.parametrize(
    ("text", "valence", "tag"),
    [
        # Events told without a feeling word.
        ("先週、猫のタマが息を引き取りました。", Valence.NEGATIVE, "sadness"),
        ("姉に子どもが生まれた。", Valence.POSITIVE, "joy"),
        ("母が好物を作ってくれてた", Valence.POSITIVE, "gratitude"),
        ("質疑応答で指摘されて、顔から火が出るかと思った", Valence.NEGATIVE, "regret"),
        ("今日のランチ、500円でこのボリュームはすごい", Valence.POSITIVE, "joy"),
        # Tears and trembling in a glad turn are being moved.
        (
            "引っ越しの日に大家さんが見送ってくれて、ちょっと泣きそうになった",
            Valence.POSITIVE,
            "gratitude",
        ),
        ("友達が誕生日を祝ってくれて泣いちゃった", Valence.POSITIVE, "joy"),
        ("試合に負けて泣いた", Valence.NEGATIVE, "sadness"),
        ("娘が運動会で一位になった。手が震えた", Valence.POSITIVE, "excitement"),
        ("怖くて手が震えた", Valence.NEGATIVE, "fear"),
        # Feelings told through the body, mishaps and results.
        ("エレベーターが急に止まって、血の気が引いた", Valence.NEGATIVE, "fear"),
        ("卒業式で後輩がくれた手紙、胸がいっぱいになった", Valence.POSITIVE, "joy"),
        ("傘なくした", Valence.NEGATIVE, "sadness"),
        ("電車乗り遅れた", Valence.NEGATIVE, "frustration"),
        ("お気に入りのマグカップ割れた", Valence.NEGATIVE, "sadness"),
        ("あちゃー、雨だ", Valence.NEGATIVE, "frustration"),
        ("内定が出ない", Valence.NEGATIVE, "anxiety"),
        ("市民マラソンで入賞した！", Valence.POSITIVE, "pride"),
    ],
)
def test_japanese_feelings_told_through_events_the_body_and_results(
    analyzer: OfflineAnalyzer, text: str, valence: Valence, tag: str
) -> None:
    result = analyze(analyzer, text)
    assert result.valence is valence
    assert tag in result.tags


def test_tanoshimi_is_anticipation(analyzer: OfflineAnalyzer) -> None:
    assert "excitement" in analyze(analyzer, "新しいスニーカー届いた〜！履くの楽しみ").tags


def test_a_story_that_names_work_is_not_a_task(analyzer: OfflineAnalyzer) -> None:
    text = "今日、ずっと目標にしてた簿記2級に合格した！！仕事終わりに毎日勉強してきた甲斐があった！"
    assert not analyzer.read(text).context.task
    assert "pride" in analyze(analyzer, text).tags


def test_an_exam_result_awaited_is_no_success(analyzer: OfflineAnalyzer) -> None:
    assert analyze(analyzer, "大学の合格発表まであと3日。眠れない").valence is Valence.NEGATIVE


def test_guilt_inflects_and_causing_trouble_is_guilt(analyzer: OfflineAnalyzer) -> None:
    result = analyze(analyzer, "私のミスでチーム全員に残業させてしまった。申し訳なさすぎる")
    assert result.valence is Valence.NEGATIVE
    assert "guilt" in result.tags


def test_a_mishap_inside_a_request_is_a_topic(analyzer: OfflineAnalyzer) -> None:
    assert analyze(analyzer, "財布をなくしたらどうすればいい？").valence is Valence.NEUTRAL


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("息子が口きいてくれない", False),
        ("誰も助けてくれなかった", False),
        ("これ手伝ってくれない？", True),
    ],
)
def test_kurenai_asks_only_as_a_question(analyzer: OfflineAnalyzer, text: str, asks: bool) -> None:
    assert analyzer.read(text).context.any_request is asks


@pytest.mark.parametrize(
    "text",
    [
        "さすが大手銀行のアプリ、今日も元気にエラー吐いてる",
        "向かいの人、ずっとイヤホンから音漏れしてる。いいね、みんなでライブ気分だね",
    ],
)
def test_japanese_irony_at_a_routine_failure_or_a_nuisance(
    analyzer: OfflineAnalyzer, text: str
) -> None:
    result = analyze(analyzer, text)
    assert result.valence is Valence.NEGATIVE
    assert "frustration" in result.tags


@pytest.mark.parametrize("text", ["さすが！今日もサーバー元気に動いてる", "いいね、今日も晴れ"])
def test_praise_of_a_routine_that_works_stays_sincere(analyzer: OfflineAnalyzer, text: str) -> None:
    assert analyze(analyzer, text).valence is Valence.POSITIVE


@pytest.mark.parametrize(
    ("text", "valence"),
    [("おいしかった(*´ω`*)", Valence.POSITIVE), ("今日は寝坊した(´・ω・｀)", Valence.NEGATIVE)],
)
def test_soft_and_downcast_kaomoji(analyzer: OfflineAnalyzer, text: str, valence: Valence) -> None:
    assert analyze(analyzer, text).valence is valence


def test_a_glad_turn_about_oneself_carries_no_love(analyzer: OfflineAnalyzer) -> None:
    assert "love" not in analyze(analyzer, "今日は人生初の回らないお寿司！").tags
    assert "love" in analyze(analyzer, "母が誕生日にケーキを焼いてくれた、嬉しい").tags


def test_a_wish_that_did_not_come_is_sad(analyzer: OfflineAnalyzer) -> None:
    result = analyze(analyzer, "誕生日、誰からもおめでとうが来なかった")
    assert result.valence is Valence.NEGATIVE
    assert analyze(analyzer, "合格おめでとう").valence is Valence.POSITIVE
