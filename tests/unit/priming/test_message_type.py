"""Message types of spec 001 (メッセージタイプ別の動的バジェット配分)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.core.priming import (
    TYPE_BUDGETS,
    MessageType,
    classify_message,
    parse_message_type,
)
from kioku.errors import ValidationError

#: Property tests check logic, not speed: no deadline; the costlier ones draw fewer examples.
QUICK = settings(deadline=None)
SMALL = settings(QUICK, max_examples=40)
G, Q, R, H = (
    MessageType.GREETING,
    MessageType.QUESTION,
    MessageType.REQUEST,
    MessageType.HEARTBEAT,
)

#: Labelled by what a person would call each message, not by what the rules happen to say.
ENGLISH: list[tuple[str, MessageType]] = [
    ("hi", G),
    ("Hello!", G),
    ("Hey there :)", G),
    ("Good morning, everyone", G),
    ("good night", G),
    ("Thanks!", G),
    ("Thank you so much!", G),
    ("thanks for the help", G),
    ("Bye, see you tomorrow", G),
    ("Hi Claude", G),
    ("How are you?", G),
    ("ok, got it", G),
    ("What is the capital of Australia?", Q),
    ("why does the build fail on CI?", Q),
    ("How do I run the tests?", Q),
    ("When is the release scheduled", Q),
    ("Where did we put the deploy script?", Q),
    ("Who owns the billing service?", Q),
    ("Which database do we use for sessions?", Q),
    ("Is the staging server down?", Q),
    ("Do you remember what we decided about caching?", Q),
    ("Can you tell me what the retry limit is?", Q),
    ("Could you explain how the scheduler works?", Q),
    ("Explain the difference between a process and a thread.", Q),
    ("Tell me about the migration plan", Q),
    ("the deploy went fine?", Q),
    ("Should I write the tests first?", Q),
    ("What is the best way to fix a flaky test?", Q),
    ("I moved to Osaka last month.", Q),
    ("Test coverage is low in the parser.", Q),
    ("Please fix the failing test in test_parser.py", R),
    ("Fix the typo in the README.", R),
    ("Write a function that parses ISO dates", R),
    ("Add a --verbose flag to the CLI", R),
    ("Run the benchmarks and report the numbers", R),
    ("Implement retries with exponential backoff.", R),
    ("Can you fix the bug in the login form?", R),
    ("Could you update the changelog?", R),
    ("Would you mind renaming the module to storage?", R),
    ("I need you to refactor the config loader.", R),
    ("Let's add caching to the search endpoint.", R),
    ("Make sure the tests pass before merging.", R),
    ("ok, now deploy it to staging", R),
    ("Thanks! Can you also add tests for the edge cases?", R),
    ("Good morning! Please review my pull request.", R),
    ("If it fails again, restart the worker.", R),
    ("The report by Friday, please.", R),
    (
        "We have a memory leak in the worker: it grows by 50 MB an hour and the pod gets "
        "killed. Profile it, find the cause and fix it. Do you think it's the cache?",
        R,
    ),
    ("hey, quick one: is the API rate limited?", Q),
    ("cheers mate", G),
    ("Remove the unused imports in utils.py", R),
    ("Any idea why the cron job stopped?", Q),
    ("I wonder whether we should switch to Postgres.", Q),
    ("Can we schedule the release for Monday?", R),
    ("create a new branch called feature/login", R),
    ("Does the parser handle empty files?", Q),
    ("Summarize this thread for me", R),
    ("good afternoon all", G),
    ("what was the name of that library you recommended", Q),
    ("Go ahead and merge it", R),
    ("Morning! Anything new on the outage?", Q),
    ("Translate this paragraph into Japanese: Hello world", R),
    ("Thanks, that worked perfectly!", G),
    ("see you later!", G),
    ("", H),
    ("   \n ", H),
    ("[heartbeat]", H),
    ("HEARTBEAT_OK", H),
    ("heartbeat", H),
]

JAPANESE: list[tuple[str, MessageType]] = [
    ("おはようございます", G),
    ("こんにちは！", G),
    ("こんばんは〜", G),
    ("よろしくお願いします", G),
    ("今日もよろしくお願いします！", G),
    ("ありがとうございます", G),
    ("ありがとう、助かったよ", G),
    ("お疲れ様です", G),
    ("お疲れさまでした！", G),
    ("おやすみなさい", G),
    ("田中さん、おはようございます", G),
    ("はじめまして、よろしくお願いいたします", G),
    ("了解です", G),
    ("みなさん、こんにちは", G),
    ("明日の会議は何時からですか？", Q),
    ("このエラーの原因は何？", Q),
    ("デプロイはいつ終わる？", Q),
    ("設定ファイルはどこにある？", Q),
    ("このモジュールは誰が書いたの？", Q),
    ("なぜテストが落ちるんだろう", Q),
    ("キャッシュはどう動いていますか", Q),
    ("前に決めた方針、覚えていますか。", Q),
    ("この関数の使い方を教えてください", Q),
    ("スケジューラの仕組みを説明して", Q),
    ("本番環境のバージョンって3.2だっけ", Q),
    ("今日は雨が降るかな", Q),
    ("このバグを直してもいいですか？", Q),
    ("どっちのライブラリがおすすめ？", Q),
    ("先週大阪に引っ越しました。", Q),
    ("テストを書いてください", R),
    ("このバグを直して", R),
    ("READMEを更新してもらえますか？", R),
    ("ログを確認していただけますか", R),
    ("ビルドスクリプトを作って", R),
    ("リトライ処理を実装してほしい", R),
    ("この関数をリファクタリングしよう", R),
    ("レビューをお願いします", R),
    ("ご確認ください", R),
    ("設定ファイルを修正", R),
    ("ちょっと待って", R),
    ("古いブランチは消さないで", R),
    ("おはようございます。昨日の件、対応をお願いします", R),
    ("この関数の説明をして、それからテストも書いて", R),
    ("エラーが出るんだけど、どうすればいい？ログを調べてくれる？", R),
    (
        "決済サービスでタイムアウトが頻発しています。原因を調査して、必要ならリトライ処理を"
        "追加してください。前回の障害と関係ありますか？",
        R,
    ),
    ("昨日のミーティングの議事録をまとめて", R),
    ("この設定で問題ない？", Q),
    ("サーバーを再起動しておいて", R),
    ("このライブラリのライセンスって何だっけ", Q),
    ("どのくらい時間がかかりますか", Q),
    ("ドキュメントを英語に翻訳してくれませんか", R),
    ("おつかれ〜", G),
    ("テストが通らない理由がわからない", Q),
    ("こちらこそよろしくお願いします", G),
    ("APIの仕様について知りたいです", Q),
    ("まずは現状を整理しましょう", R),
    ("いつものやつ頼む", R),
    ("ログインできないんですが", Q),
    ("お先に失礼します", G),
    ("[heartbeat]", H),
    ("［HEARTBEAT］", H),
    ("ハートビート", H),
    ("定期巡回", H),
    ("　", H),
]


def _accuracy(table: list[tuple[str, MessageType]]) -> tuple[float, list[str]]:
    wrong = [
        f"{text!r}: {classify_message(text)} (expected {want})"
        for text, want in table
        if classify_message(text) != want
    ]
    return 1 - len(wrong) / len(table), wrong


def test_the_tables_are_big_enough_and_cover_every_type() -> None:
    for table in (ENGLISH, JAPANESE):
        assert len(table) >= 40
        assert {want for _, want in table} == set(MessageType)


@pytest.mark.parametrize(("name", "table"), [("english", ENGLISH), ("japanese", JAPANESE)])
def test_accuracy_on_the_labelled_table(name: str, table: list[tuple[str, MessageType]]) -> None:
    accuracy, wrong = _accuracy(table)
    assert accuracy >= 0.9, f"{name}: {accuracy:.2f}\n" + "\n".join(wrong)


CLEAR = [
    ("hello", G),
    ("Good morning!", G),
    ("thanks", G),
    ("おはよう", G),
    ("ありがとうございました", G),
    ("お疲れ様です！", G),
    ("What time is it?", Q),
    ("How does the cache expire entries?", Q),
    ("Can you tell me where the logs are?", Q),
    ("これは何ですか？", Q),
    ("いつリリースしますか", Q),
    ("使い方を教えてください", Q),
    ("Please write the tests.", R),
    ("Fix the login bug", R),
    ("Can you fix the login bug?", R),
    ("テストを書いてください", R),
    ("これを直して", R),
    ("修正をお願いします", R),
    ("", H),
    ("[heartbeat]", H),
    ("heartbeat-ok", H),
]


@pytest.mark.parametrize(("text", "want"), CLEAR)
def test_clear_cases(text: str, want: MessageType) -> None:
    assert classify_message(text) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        # "can you" asks for work with an action verb, for information with tell/explain.
        ("Can you deploy it?", R),
        ("Can you explain it?", Q),
        # A question mark does not turn a task into a question.
        ("Refactor the parser and add tests. Does that sound doable?", R),
        # Greeting words followed by real content are not a greeting.
        ("Hi, how do I reset my password?", Q),
        ("おはよう、このログを見て", R),
        # A leading action word used as a noun is no order.
        ("Update: the server is back up.", Q),
        ("Check is failing on main.", Q),
        # どうして is why, not a te-form; どうぞよろしく has no question word.
        ("どうして", Q),
        ("どうぞよろしく", G),
        # Full-width brackets and question marks are folded by NFKC.
        ("【heartbeat】", H),
        ("これでいい？", Q),
    ],
)
def test_rules_at_their_edges(text: str, want: MessageType) -> None:
    assert classify_message(text) == want


def test_a_long_statement_is_a_request_and_a_short_one_a_question() -> None:
    short = "The nightly job failed again with an out of memory error."
    long = short + " " + "The worker had about four gigabytes when it stopped. " * 4
    assert classify_message(short) == Q
    assert classify_message(long) == R


def test_a_heartbeat_marker_inside_a_sentence_is_not_a_heartbeat() -> None:
    assert classify_message("what does the heartbeat endpoint return?") == Q
    assert classify_message("[heartbeat] please restart the worker") == R


def test_budgets_follow_the_spec() -> None:
    assert dict(TYPE_BUDGETS) == {G: 500, Q: 1500, R: 3000, H: 200}
    with pytest.raises(TypeError):
        TYPE_BUDGETS[G] = 1  # type: ignore[index]


@pytest.mark.parametrize("value", ["greeting", " Question ", "REQUEST", "heartbeat"])
def test_parse_message_type(value: str) -> None:
    assert parse_message_type(value) == MessageType(value.strip().lower())


@pytest.mark.parametrize("value", ["", "chat", "greetings"])
def test_parse_message_type_names_the_allowed_values(value: str) -> None:
    with pytest.raises(ValidationError) as caught:
        parse_message_type(value)
    assert caught.value.field == "message_type"
    assert caught.value.allowed == "one of greeting, question, request, heartbeat"


@settings(QUICK)
@given(st.text(max_size=300))
def test_any_text_gets_a_type(text: str) -> None:
    assert classify_message(text) in set(MessageType)
