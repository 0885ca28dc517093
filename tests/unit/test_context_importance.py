"""Importance of a message (spec 002 §4 重要度スコアリング, §6.1)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.core.context import ImportanceConfig, Message, importance, score_all
from kioku.errors import ValidationError

CONFIG = ImportanceConfig()
PLAIN = "I think that sounds pretty reasonable to me overall."


def score(role: str, content: str, index: int = 5, total: int = 11) -> float:
    return importance(Message(role, content), index, total, CONFIG)


def test_the_formula_of_the_spec() -> None:
    # recency 5/10 * 0.3 + user 1.0 * 0.3 + content 0 * 0.4
    assert score("user", PLAIN) == pytest.approx(0.45)
    # assistant 0.5, system 0.3, tool 0.5 (+0.25 tool bonus), unknown 0.5
    assert score("assistant", PLAIN) == pytest.approx(0.15 + 0.15)
    assert score("system", PLAIN) == pytest.approx(0.15 + 0.09)
    assert score("tool", PLAIN) == pytest.approx(0.15 + 0.15 + 0.25 * 0.4)
    assert score("narrator", PLAIN) == pytest.approx(0.15 + 0.15)


def test_recency_runs_from_oldest_to_newest() -> None:
    assert score("user", PLAIN, 0, 11) == pytest.approx(0.3)
    assert score("user", PLAIN, 10, 11) == pytest.approx(0.6)
    assert score("user", PLAIN, 0, 1) == pytest.approx(0.6)  # a lone message is the newest


def test_user_beats_assistant() -> None:
    assert score("user", PLAIN) > score("assistant", PLAIN) > score("system", PLAIN)


@pytest.mark.parametrize(
    "content",
    [
        "The build failed because of a missing dependency in the lockfile.",
        "Traceback: ValueError raised while parsing the config file",
        "An unexpected exception occurred while saving the record.",
        "Warning: the disk is almost full, please clean up soon.",
        "The migration completed and all rows were copied over.",
        "Here is the plan for tomorrow's release, step by step.",
        "ビルドでエラーが発生しました。依存関係を確認してください。",
        "デプロイに失敗しました。環境変数の設定を見直してください。",
        "移行が完了しました。すべての行がコピーされています。",
        "警告：ディスクの空き容量が残りわずかです。確認してください。",
        "新しいタスクを三つ追加しました。優先順位を決めましょう。",
        "予算の申請が拒否されました。書類が足りなかったようです。",
        "Errorが出ました。ログを確認してみます。念のため再起動します。",
    ],
)
def test_keywords_add_to_the_content_score(content: str) -> None:
    neutral = "これは普通の雑談です。特に何もありません。天気がいいですね。"
    baseline = score("assistant", neutral if not content.isascii() else PLAIN)
    assert score("assistant", content) == pytest.approx(baseline + 0.3 * 0.4)


def test_keywords_are_case_insensitive() -> None:
    assert score("assistant", "ERROR: connection refused by the remote host") > score(
        "assistant", "Note: connection accepted by the remote host ok"
    )


def test_tool_role_and_tool_marker_get_the_same_bonus() -> None:
    text = "exit code 0, 12 files written to the output folder"
    by_marker = score("assistant", "[Tool: shell] " + text)
    by_role = score("tool", "[Ran: shell]  " + text)
    assert by_marker == pytest.approx(by_role)
    # both at once count once
    assert score("tool", "[Tool: shell] " + text) == pytest.approx(by_role)


@pytest.mark.parametrize("marker", ["[SYSTEM:", "[User", "[TASK"])
def test_markers_add_to_the_content_score(marker: str) -> None:
    # markers are case-sensitive: the lowered marker is no marker ("[task" is still a keyword)
    assert score("assistant", f"{marker} keep this message around please") == pytest.approx(
        score("assistant", f"{marker.lower()} keep this message around please") + 0.2 * 0.4
    )


def test_approval_requests_add_on_top_of_the_keyword() -> None:
    # "approval" is both an important keyword (+0.3) and an approval word (+0.3)
    assert score("assistant", "Waiting for approval before deleting the branch.") == (
        pytest.approx(score("assistant", PLAIN) + 0.6 * 0.4)
    )
    assert score("assistant", "duck_call: ask the user to confirm this") == pytest.approx(
        score("assistant", PLAIN) + 0.6 * 0.4
    )


def test_short_messages_are_penalised() -> None:
    # "failed" alone: 0.3 * 0.7
    assert score("assistant", "failed") == pytest.approx(0.3 + 0.3 * 0.7 * 0.4)
    assert score("assistant", "ok") == pytest.approx(0.3)


def test_content_score_is_capped_at_one() -> None:
    text = "[Tool: deploy] [TASK 1] error: approval denied by duck_call, failed"
    assert score("tool", text, 10, 11) <= 1.0
    assert score("tool", text, 10, 11) == pytest.approx(0.3 + 0.15 + 0.4)


def test_weights_are_configurable() -> None:
    config = ImportanceConfig(recency_weight=1.0, role_weight=0.0, content_weight=0.0)
    assert importance(Message("user", "error"), 3, 7, config) == pytest.approx(0.5)
    custom = ImportanceConfig(keywords=("banana",), role_scores=(("user", 0.2),))
    assert importance(Message("user", "I like Banana bread a lot"), 0, 2, custom) == pytest.approx(
        0.2 * 0.3 + 0.3 * 0.4
    )


def test_default_keywords_follow_the_spec() -> None:
    for word in ("error", "success", "plan", "task", "duck_call", "approval", "denied"):
        assert word in CONFIG.keywords
    for word in ("completed", "failed", "warning", "exception"):
        assert word in CONFIG.keywords
    for word in ("エラー", "失敗", "成功", "完了", "警告", "タスク", "計画", "承認", "拒否"):
        assert word in CONFIG.keywords
    assert CONFIG.markers == ("[SYSTEM:", "[User", "[TASK")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"recency_weight": -0.1},
        {"content_weight": 1.5},
        {"role_weight": True},
        {"default_role_score": "high"},
        {"short_content_penalty": 2.0},
        {"role_scores": (("user", 3.0),)},
        {"min_content_length": -1},
        {"keywords": ("error", "")},
        {"markers": ["[SYSTEM:"]},
    ],
)
def test_invalid_config_is_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValidationError) as excinfo:
        ImportanceConfig(**kwargs)  # type: ignore[arg-type]
    assert excinfo.value.hint


def test_score_all_of_nothing() -> None:
    assert score_all([], CONFIG) == []


_ROLES = st.sampled_from(["user", "assistant", "system", "tool", "other"])
_WORDS = st.sampled_from(
    ["hello", "error", "[Tool:", "[TASK", "approval", "エラー", "完了", "天気", "ok", " ", "、"]
)
_TEXT = st.lists(_WORDS, max_size=12).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_ROLES, _TEXT), max_size=20))
def test_score_all_matches_importance(pairs: list[tuple[str, str]]) -> None:
    messages = [Message(role, text) for role, text in pairs]
    scores = score_all(messages, CONFIG)
    assert len(scores) == len(messages)
    for i, message in enumerate(messages):
        assert scores[i] == pytest.approx(importance(message, i, len(messages), CONFIG))
        assert 0.0 <= scores[i] <= 1.0
