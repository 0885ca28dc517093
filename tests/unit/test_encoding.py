"""The pure rules of immediate encoding (spec 001, 即時符号化): which sentences report
something resolved, which sessions have gone quiet, and how far a session is finalized."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from kioku.core.encoding import (
    IDLE,
    FinalizedPoint,
    idle_sessions,
    is_summary_source,
    resolved_items,
    summary_source,
    summary_trigger,
)
from kioku.core.language import detect_language
from kioku.errors import StoreCorruptError, ValidationError

TZ = ZoneInfo("Asia/Tokyo")
NOON = datetime(2026, 4, 1, 12, 0, tzinfo=TZ)

# -- a labelled table: does the sentence report something resolved? ---------------------------

EN_RESOLVED = [
    "Fixed the login bug.",
    "I fixed the login bug by renewing the token.",
    "The deploy works now.",
    "Resolved.",
    "It's done.",
    "The issue has been resolved.",
    "Bug fixed!",
    "We finally solved the memory leak.",
    "That fixed it.",
    "All tests are passing again.",
    "The migration is finished.",
    "Problem solved.",
    "The crash no longer happens.",
    "Got it working!",
    "Merged the pull request.",
    "Everything works again after the restart.",
    "Done.",
    "The server is back up.",
    "CI is green now.",
    "I've fixed the typo in the README.",
    "The flaky test is fixed now.",
    "Issue closed.",
    "The patch resolved the timeout.",
    "Sorted out the billing issue.",
    "Completed the database upgrade.",
    "OK, fixed.",
    "It worked!",
    "The login bug is fixed \u2014 it\u2019s done.",
]
EN_NOT_RESOLVED = [
    "The login bug is not fixed yet.",
    "Is the login bug fixed?",
    "Has the deploy been resolved",
    "I will fix the login bug tomorrow.",
    "We're going to resolve this next week.",
    "Can you fix the login bug?",
    "Please fix the flaky test.",
    "It still doesn't work.",
    "The fix didn't work.",
    "I couldn't resolve the merge conflict.",
    "Let me know once it's done.",
    "If this is fixed, we can ship.",
    "The fixed price is 20 dollars.",
    "Fixed-width fonts look better in terminals.",
    "We need to get this done by Friday.",
    "This has to be fixed before the release.",
    "I think it's fixed, but I'm not sure.",
    "It worked before the update.",
    "The build no longer works.",
    "Nothing has been resolved.",
    "The issue remains unresolved.",
    "I tried to fix the login bug.",
    "Should be fixed now.",
    "Maybe the restart fixed it.",
    "The migration is almost done.",
    "Done?",
    "Fix the login bug.",
    "What did you fix?",
    "The deploy failed again.",
    "It'll be resolved soon.",
    "Fixed costs went up this quarter.",
    "Fixed the login bug, but the tests still fail.",
]
JA_RESOLVED = [
    "ログインのバグが直りました。",
    "直りました！",
    "解決しました。",
    "完了しました。",
    "対応済みです。",
    "再起動したら直りました。",
    "メモリリークの問題を修正しました。",
    "テストが全部通りました。",
    "デプロイに成功しました。",
    "移行作業が完了です。",
    "本番環境の障害は復旧しました。",
    "設定を変えたら動くようになりました。",
    "タイムアウトの件、解消しました。",
    "レビュー指摘はすべて対応しました。",
    "やっと終わった！",
    "修正済みです。",
    "無事に解決できました。",
    "PRをマージしました。",
    "片付きました。",
    "直った！",
    "すみません、直りました。",
    "予定通り、完了しました。",
]
JA_NOT_RESOLVED = [
    "まだ直っていない。",
    "直りましたか？",
    "直りましたか",
    "明日修正する予定です。",
    "バグを直したいです。",
    "直してください。",
    "まだ解決していません。",
    "直ったら教えてください。",
    "解決できませんでした。",
    "未解決のままです。",
    "修正中です。",
    "完了したら連絡します。",
    "直ったかもしれない。",
    "直ったと思います。",
    "テストが通らず困っています。",
    "対応するつもりです。",
    "完了予定は来週です。",
    "修正しましたが、まだ動きません。",
    "ログインできないバグがある。",
    "解決したかどうか確認してください。",
    "学校に通った。",
    "すみません、まだ終わっていません。",
    "バグを修正します。",
    "解決しましたか？",
]
TABLE = [
    *((s, True) for s in EN_RESOLVED),
    *((s, False) for s in EN_NOT_RESOLVED),
    *((s, True) for s in JA_RESOLVED),
    *((s, False) for s in JA_NOT_RESOLVED),
]


@pytest.mark.parametrize(("sentence", "resolved"), TABLE)
def test_each_labelled_sentence(sentence: str, resolved: bool) -> None:
    assert resolved_items(sentence) == ([sentence] if resolved else [])


def test_the_table_is_large_enough_in_both_languages_and_precision_is_perfect() -> None:
    ja = [s for s, _ in TABLE if detect_language(s) == "ja"]
    en = [s for s, _ in TABLE if detect_language(s) == "en"]
    assert len(ja) >= 30
    assert len(en) >= 30
    assert len(JA_NOT_RESOLVED) >= 15
    assert len(EN_NOT_RESOLVED) >= 15
    predicted = [label for sentence, label in TABLE if resolved_items(sentence)]
    true_positives = sum(predicted)
    assert predicted, "nothing was found at all"
    assert true_positives / len(predicted) == 1.0


def test_items_come_in_order_each_once_from_a_longer_text() -> None:
    text = (
        "The login page threw a 500 error. Fixed the login bug.\n"
        "Is the signup bug fixed? ログインのバグが直りました。まだ決済は直っていない。"
        "Fixed   the login bug."
    )
    assert resolved_items(text) == ["Fixed the login bug.", "ログインのバグが直りました。"]


def test_a_dotted_version_does_not_end_a_sentence() -> None:
    assert resolved_items("v1.2 is deployed now. Is v1.3 deployed?") == ["v1.2 is deployed now."]


def test_a_negation_elsewhere_in_the_sentence_rules_it_out() -> None:
    assert resolved_items("The login bug is fixed. The signup bug is not.") == [
        "The login bug is fixed."
    ]
    assert resolved_items("The login bug is fixed and the signup bug is not.") == []


def test_nothing_in_empty_or_punctuation_only_text() -> None:
    assert resolved_items("") == []
    assert resolved_items("!!! ？？ ...") == []


def test_text_must_be_a_string() -> None:
    with pytest.raises(ValidationError):
        resolved_items(None)  # type: ignore[arg-type]


# -- idle sessions -----------------------------------------------------------------------------


def test_a_session_is_idle_from_ten_minutes_on() -> None:
    last = {"s": NOON}
    assert IDLE.total_seconds() == 600
    assert idle_sessions(last, NOON + timedelta(minutes=9, seconds=59)) == []
    assert idle_sessions(last, NOON + timedelta(minutes=10)) == ["s"]
    assert idle_sessions(last, NOON + timedelta(days=3)) == ["s"]


def test_a_last_turn_after_now_is_not_idle() -> None:
    assert idle_sessions({"s": NOON + timedelta(hours=1)}, NOON) == []


def test_the_longest_quiet_comes_first_and_ties_go_by_id() -> None:
    last = {
        "b": NOON - timedelta(hours=1),
        "a": NOON - timedelta(hours=1),
        "c": NOON - timedelta(hours=2),
        "active": NOON - timedelta(minutes=1),
    }
    assert idle_sessions(last, NOON) == ["c", "a", "b"]


def test_times_in_other_zones_compare_as_instants() -> None:
    utc_last = (NOON - timedelta(minutes=10)).astimezone(ZoneInfo("UTC"))
    assert idle_sessions({"s": utc_last}, NOON) == ["s"]


def test_the_idle_time_can_be_chosen() -> None:
    last = {"s": NOON - timedelta(minutes=3)}
    assert idle_sessions(last, NOON, timedelta(minutes=3)) == ["s"]
    assert idle_sessions(last, NOON, timedelta(minutes=4)) == []
    assert idle_sessions({"s": NOON}, NOON, timedelta(0)) == ["s"]
    assert idle_sessions({}, NOON) == []


@pytest.mark.parametrize(
    ("last", "now", "idle"),
    [
        ({"s": NOON}, NOON.replace(tzinfo=None), IDLE),
        ({"s": NOON.replace(tzinfo=None)}, NOON, IDLE),
        ({"s": NOON}, NOON, timedelta(minutes=-1)),
        ({"s": NOON}, NOON, 10),
    ],
)
def test_naive_times_and_bad_durations_are_refused(
    last: dict[str, datetime], now: datetime, idle: timedelta
) -> None:
    with pytest.raises(ValidationError):
        idle_sessions(last, now, idle)


# -- the finalized point -----------------------------------------------------------------------


def test_a_point_moves_past_the_turns_it_is_given() -> None:
    none = FinalizedPoint()
    assert none.index == -1
    assert none.is_new(NOON, "m1")
    later = NOON + timedelta(minutes=1)
    point = none.after([(NOON, "m1"), (later, "m2")])
    assert (point.index, point.through, point.ids) == (1, later, ("m2",))
    assert not point.is_new(NOON, "m1")
    assert not point.is_new(later, "m2")
    assert point.is_new(later, "m3")  # stored later with the same time: still new
    assert point.is_new(later + timedelta(microseconds=1), "m0")
    assert point.after([]) == point


def test_turns_at_the_same_instant_are_kept_together() -> None:
    point = FinalizedPoint().after([(NOON, "m1"), (NOON, "m2")])
    assert point.ids == ("m1", "m2")
    again = point.after([(NOON, "m3")])
    assert (again.index, again.ids) == (2, ("m1", "m2", "m3"))


def test_a_point_survives_its_state_row() -> None:
    point = FinalizedPoint().after([(NOON, "m1")])
    assert FinalizedPoint.from_json(point.to_json()) == point
    assert FinalizedPoint.from_json(None) == FinalizedPoint()
    assert '"last_finalized_turn_index": 0' in point.to_json()


@pytest.mark.parametrize(
    "row",
    [
        "",
        "7",
        "{}",
        '{"last_finalized_turn_index": "x", "through": null, "ids": []}',
        '{"last_finalized_turn_index": 0, "through": null, "ids": []}',
        '{"last_finalized_turn_index": -1, "through": "2026-04-01T12:00:00+09:00", "ids": []}',
        '{"last_finalized_turn_index": 0, "through": "2026-04-01T12:00:00", "ids": []}',
        '{"last_finalized_turn_index": -2, "through": null, "ids": []}',
    ],
)
def test_an_unreadable_state_row_is_an_error_not_a_fresh_start(row: str) -> None:
    with pytest.raises(StoreCorruptError):
        FinalizedPoint.from_json(row)


def test_summary_sources_name_their_session_and_turns() -> None:
    source = summary_source("s:1", 3, 7)
    assert source == "session:s:1:3-7"
    assert is_summary_source(source, "s:1")
    assert not is_summary_source(source, "s")
    assert not is_summary_source("session:s:1:mood", "s:1")
    assert not is_summary_source("session:s:1:3-", "s:1")
    assert summary_trigger("s:1", 3, 7) == "Session s:1: turns 3\u20137"


def test_a_session_id_too_long_for_a_source_id_is_named_by_its_digest() -> None:
    long_id = "s" * 1000
    source = summary_source(long_id, 0, 12)
    assert len(source) <= 1000
    assert source.startswith("session:#")
    assert source.endswith(":0-12")
    assert is_summary_source(source, long_id)
    assert not is_summary_source(source, "s" * 999)
    assert summary_source("s" * 999, 0, 12) != source
