"""Pruning a history to a token budget (spec 002 §2.2 段階的な整理戦略, §5 整理戦略, §11.1)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku.core.context import (
    PRESETS,
    ContextPolicy,
    EstimateCounter,
    Gap,
    Message,
    PrunePlan,
    Stage,
    assemble,
    gap_text,
    message_tokens,
    notice,
    plan_prune,
    policy_preset,
    prune,
    stage_for,
    summary_message,
)
from kioku.core.context.prune import SUMMARY_MAX_CHARS, TRUNCATION_MARKER
from kioku.errors import ValidationError


class Words:
    """One token per whitespace-separated word: easy arithmetic for the tests."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


WORDS = Words()
ESTIMATE = EstimateCounter()


def words(n: int, word: str = "word") -> str:
    return " ".join([word] * n)


def total(messages: Sequence[Message], counter: object = WORDS) -> int:
    return sum(message_tokens(counter, m) for m in messages)  # type: ignore[arg-type]


def chat(n: int, size: int = 16, role: str = "assistant") -> list[Message]:
    """``n`` equally unimportant messages of ``size + 4`` tokens each."""
    return [Message(role, words(size, f"chat{i}")) for i in range(n)]


# -- stages and policies -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("usage", "stage"),
    [
        (0.0, Stage.NONE),
        (0.59, Stage.NONE),
        (0.6, Stage.WARN),
        (0.79, Stage.WARN),
        (0.8, Stage.PRUNE),
        (0.89, Stage.PRUNE),
        (0.9, Stage.AGGRESSIVE),
        (1.0, Stage.AGGRESSIVE),
        (1.0001, Stage.EMERGENCY),
        (5.0, Stage.EMERGENCY),
    ],
)
def test_stages_of_the_spec_table(usage: float, stage: Stage) -> None:
    assert stage_for(usage, ContextPolicy()) is stage


def test_stage_bounds_follow_the_threshold() -> None:
    policy = policy_preset("conservative")
    assert policy.warn_at == pytest.approx(0.4)
    assert policy.aggressive_at == pytest.approx(0.8)
    assert stage_for(0.5, policy) is Stage.WARN
    assert stage_for(0.6, policy) is Stage.PRUNE
    assert stage_for(0.8, policy) is Stage.AGGRESSIVE
    assert policy.select_fraction(Stage.AGGRESSIVE) == pytest.approx(0.4)
    assert policy.select_fraction(Stage.PRUNE) == pytest.approx(0.5)
    low = ContextPolicy(prune_threshold=0.15, target_usage=0.12)
    assert low.warn_at == 0.0
    assert low.select_fraction(Stage.AGGRESSIVE) == pytest.approx(0.1)


def test_presets_of_the_spec() -> None:
    assert set(PRESETS) == {"balanced", "conservative", "aggressive"}
    assert policy_preset("balanced") == ContextPolicy()
    conservative = policy_preset("Conservative")
    assert (conservative.max_tokens, conservative.prune_threshold, conservative.target_usage) == (
        6000,
        0.6,
        0.5,
    )
    aggressive = policy_preset("aggressive", max_tokens=20000, keep_last=3)
    assert (aggressive.max_tokens, aggressive.prune_threshold, aggressive.target_usage) == (
        20000,
        0.9,
        0.8,
    )
    assert aggressive.keep_last == 3


def test_unknown_preset_lists_the_choices() -> None:
    with pytest.raises(ValidationError) as excinfo:
        policy_preset("greedy")
    assert "balanced" in str(excinfo.value)
    assert "conservative" in str(excinfo.value)
    assert "aggressive" in str(excinfo.value)


@pytest.mark.parametrize(
    "overrides",
    [
        {"max_tokens": 10},
        {"max_tokens": 8000.0},
        {"max_tokens": True},
        {"prune_threshold": 1.2},
        {"prune_threshold": 0.0},
        {"target_usage": 0.8},
        {"target_usage": 0.9},
        {"target_usage": 0.0},
        {"target_usage": float("nan")},
        {"min_gap_for_summary": 0},
        {"keep_last": 0},
        {"summaries": "yes"},
        {"keep_system": 1},
        {"importance": {"recency_weight": 1}},
        {"max_token": 9000},
    ],
)
def test_invalid_policies_are_rejected(overrides: dict[str, object]) -> None:
    with pytest.raises(ValidationError) as excinfo:
        policy_preset("balanced", **overrides)
    assert excinfo.value.hint


# -- small pieces ------------------------------------------------------------------------------


def test_notices_and_summaries_in_both_languages() -> None:
    assert notice(3, "en") == Message("assistant", "[3 earlier messages omitted]")
    assert notice(1, "en").content == "[1 earlier message omitted]"
    assert notice(3, "ja").content == "[3件のメッセージを省略]"
    assert summary_message(5, "They chose SQLite.", "en").content == (
        "[Summary of 5 earlier messages: They chose SQLite.]"
    )
    assert (
        summary_message(5, " SQLiteに決定。\n", "ja").content
        == "[過去5件の会話の要約: SQLiteに決定。]"
    )
    long = summary_message(5, "x" * 5000, "en").content
    assert len(long) < SUMMARY_MAX_CHARS + 50


def test_gap_text_is_role_and_cut_content() -> None:
    messages = [Message("user", "a" * 300), Message("assistant", "short"), Message("user", "z")]
    text = gap_text(messages, Gap(0, 2, summarize=True))
    assert text == "user: " + "a" * 200 + "\nassistant: short"
    assert gap_text(messages, Gap(1, 3, summarize=False), per_message_chars=3) == (
        "assistant: sho\nuser: z"
    )


def test_stats_as_dict() -> None:
    _, stats = prune(chat(60), ContextPolicy(max_tokens=600), WORDS)
    data = stats.as_dict()
    assert data["stage"] == "emergency"
    assert data["emergency"] is True
    assert data["pruned"] is True
    assert data["max_tokens"] == 600
    assert data["original_count"] == 60
    assert set(data) >= {"removed_count", "removed_tokens", "summaries", "notices", "final_tokens"}


# -- when pruning runs -------------------------------------------------------------------------


def test_empty_history() -> None:
    plan = plan_prune([], ContextPolicy(), WORDS, force=True)
    assert plan == PrunePlan(stage=Stage.NONE, usage=0.0, tokens=0, kept=(), gaps=())
    result, stats = prune([], ContextPolicy(), WORDS)
    assert result == []
    assert not stats.pruned
    assert stats.final_tokens == 0


def test_nothing_is_removed_below_the_threshold() -> None:
    messages = chat(30)  # 600 tokens of 1000: warn
    plan = plan_prune(messages, ContextPolicy(max_tokens=1000), WORDS)
    assert plan.stage is Stage.WARN
    assert plan.kept == tuple(range(30))
    assert plan.gaps == ()
    result, stats = prune(messages, ContextPolicy(max_tokens=1000), WORDS)
    assert result == messages
    assert not stats.pruned
    assert stats.final_tokens == stats.original_tokens == 600


def test_force_prunes_below_the_threshold() -> None:
    messages = chat(30)
    policy = ContextPolicy(max_tokens=1000, target_usage=0.3, prune_threshold=0.8)
    result, stats = prune(messages, policy, WORDS, force=True)
    assert stats.pruned
    assert stats.stage is Stage.PRUNE
    assert total(result) <= 300
    assert result[-1] == messages[-1]


def test_prune_stage_selects_to_the_target_with_notices_only() -> None:
    messages = chat(42)  # 840 of 1000: prune
    calls: list[str] = []
    result, stats = prune(messages, ContextPolicy(max_tokens=1000), WORDS, calls.append)
    assert stats.stage is Stage.PRUNE
    assert calls == []  # no summaries in this stage
    assert stats.summaries == 0
    assert stats.notices == 1
    assert total(result) <= 700
    # equally important messages: the oldest go, as one run
    assert result[0] == notice(stats.removed_count, "en")
    assert result[1:] == messages[stats.removed_count :]


def test_aggressive_stage_summarises_long_runs() -> None:
    messages = chat(47)  # 940 of 1000: aggressive
    seen: list[str] = []

    def summarize(text: str) -> str:
        seen.append(text)
        return "They chatted about nothing in particular."

    result, stats = prune(messages, ContextPolicy(max_tokens=1000), WORDS, summarize)
    assert stats.stage is Stage.AGGRESSIVE
    assert stats.summaries == 1
    assert stats.notices == 0
    assert len(seen) == 1
    assert seen[0].startswith("assistant: chat0 chat0")
    removed = stats.removed_count
    assert removed >= 5
    assert result[0].content == (
        f"[Summary of {removed} earlier messages: They chatted about nothing in particular.]"
    )
    assert total(result) <= 1000
    # aggressive selects to target_usage - 0.1 = 60%, plus the summary
    assert total(result[1:]) <= 600


def test_short_runs_get_a_notice_even_in_the_aggressive_stage() -> None:
    messages = chat(47)
    calls: list[str] = []
    policy = ContextPolicy(max_tokens=1000, min_gap_for_summary=100)
    result, stats = prune(messages, policy, WORDS, lambda t: calls.append(t) or "summary")
    assert calls == []
    assert stats.notices == 1
    assert result[0].content.endswith("earlier messages omitted]")


def test_summaries_can_be_switched_off() -> None:
    plan = plan_prune(chat(47), ContextPolicy(max_tokens=1000, summaries=False), WORDS)
    assert plan.stage is Stage.AGGRESSIVE
    assert plan.gaps
    assert not any(gap.summarize for gap in plan.gaps)


@pytest.mark.parametrize(
    "summarizer",
    [lambda text: None, lambda text: "   ", lambda text: 1 / 0],
    ids=["none", "blank", "raises"],
)
def test_failing_summarizer_degrades_to_a_notice(summarizer: Callable[[str], str | None]) -> None:
    messages = chat(47)
    result, stats = prune(messages, ContextPolicy(max_tokens=1000), WORDS, summarizer)
    assert stats.summaries == 0
    assert stats.notices == 1
    assert result[0] == notice(stats.removed_count, "en")
    assert total(result) <= 1000


def test_emergency_never_calls_the_summarizer() -> None:
    messages = chat(80)  # 1600 of 1000

    def summarize(text: str) -> str:
        raise AssertionError("the summarizer must not be called in an emergency")

    result, stats = prune(messages, ContextPolicy(max_tokens=1000), WORDS, summarize)
    assert stats.stage is Stage.EMERGENCY
    assert stats.emergency
    assert stats.summaries == 0
    assert total(result) <= 700
    assert result[-1] == messages[-1]


def test_a_summary_that_does_not_fit_becomes_a_notice() -> None:
    messages = chat(47)
    plan = plan_prune(messages, ContextPolicy(max_tokens=1000), WORDS)
    (gap,) = plan.gaps
    assert gap.summarize
    room = 1000 - total([messages[i] for i in plan.kept])
    huge = words(room + 10, "blah")  # more words than the whole slack (cut at 400 chars anyway)
    result, stats = assemble(
        messages, plan, {gap.start: huge}, WORDS, ContextPolicy(max_tokens=1000)
    )
    assert total(result) <= 1000
    assert stats.summaries + stats.notices == 1


def test_assemble_keeps_the_budget_when_the_plan_used_another_counter() -> None:
    class Heavy:
        name = "heavy"

        def count(self, text: str) -> int:
            return 3 * len(text.split())

    messages = [Message("system", words(30)), *chat(60)]
    policy = ContextPolicy(max_tokens=1000)
    plan = plan_prune(messages, policy, WORDS)  # planned with a lighter counter
    result, stats = assemble(messages, plan, {}, Heavy(), policy)
    assert total(result, Heavy()) <= 1000
    assert stats.final_tokens == total(result, Heavy())
    assert result[-1] == messages[-1]


# -- what is kept (spec 002 §11.1) ---------------------------------------------------------------


def test_user_messages_are_preferred_over_assistant_small_talk() -> None:
    messages = [Message("system", "You are a helpful assistant.")]
    for i in range(40):
        messages.append(Message("user", words(16, f"request{i}")))
        messages.append(Message("assistant", words(16, f"smalltalk{i}")))
    result, _ = prune(messages, ContextPolicy(max_tokens=1000), WORDS)
    assert total(result) <= 1000
    assert result[0] == messages[0]  # the system prompt is pinned
    middle = [m for m in result[1:-2] if m in messages]
    users = sum(m.role == "user" for m in middle)
    assistants = sum(m.role == "assistant" for m in middle)
    assert users > 2 * assistants


def _work_session() -> tuple[list[Message], list[Message]]:
    important = [
        Message("tool", "pytest: 3 failed, 120 passed; see the traceback of test_store"),
        Message("assistant", "[Tool: shell] make build completed with success in 41 seconds"),
        Message("tool", "Exception: database is locked (timeout after 5 seconds)"),
        Message("assistant", "[Tool: git] push failed: remote rejected the update"),
        Message("tool", "error: could not resolve host pypi.example while installing"),
        Message("tool", "migration completed: 1200 rows copied, success, no warnings"),
    ]
    messages: list[Message] = []
    for i, message in enumerate(important):
        messages.append(message)
        messages.extend(Message("assistant", f"haha nice {i} {j}") for j in range(5))
    messages.append(Message("user", "what should we do next about the locked database"))
    return messages, important


def test_tool_results_and_errors_are_kept_while_small_talk_goes() -> None:
    messages, important = _work_session()
    policy = ContextPolicy(max_tokens=int(total(messages) / 1.1))  # emergency: to 64%
    result, stats = prune(messages, policy, WORDS)
    assert stats.pruned
    assert total(result) <= policy.max_tokens
    for message in important:
        assert message in result
    assert stats.removed_count > 0
    assert all(m.content.startswith("haha") for m in messages if m not in result)


def test_japanese_errors_are_kept_and_notices_are_japanese() -> None:
    important = [
        Message("tool", "エラー：データベースがロックされています。五秒後にタイムアウトしました。"),
        Message("assistant", "デプロイに失敗しました。環境変数の設定が間違っているようです。"),
    ]
    messages: list[Message] = []
    for i, message in enumerate(important):
        messages.append(message)
        messages.extend(Message("assistant", f"なるほど、そうですね{i}{j}") for j in range(6))
    messages.append(Message("user", "次はどうすればいいですか？ロックの問題を解決したいです。"))
    policy = ContextPolicy(max_tokens=int(total(messages, ESTIMATE) / 1.1))
    result, stats = prune(messages, policy, ESTIMATE)
    assert stats.pruned
    assert total(result, ESTIMATE) <= policy.max_tokens
    for message in important:
        assert message in result
    inserted = [m for m in result if m not in messages]
    assert inserted
    assert all(m.content.endswith("件のメッセージを省略]") for m in inserted)


# -- pinned messages and truncation --------------------------------------------------------------


def test_leading_system_messages_and_the_last_messages_are_pinned() -> None:
    messages = [Message("system", words(10)), Message("system", words(10)), *chat(60)]
    plan = plan_prune(messages, ContextPolicy(max_tokens=800, keep_last=3), WORDS)
    assert {0, 1, 59, 60, 61} <= set(plan.kept)
    unpinned = plan_prune(messages, ContextPolicy(max_tokens=800, keep_system=False), WORDS)
    assert 0 not in unpinned.kept  # the oldest, least important message


def test_oversized_system_prompt_is_shortened_and_the_newest_message_kept() -> None:
    messages = [Message("system", words(900, "rule")), *chat(10), Message("user", words(20))]
    policy = ContextPolicy(max_tokens=500)
    plan = plan_prune(messages, policy, WORDS)
    assert plan.truncated == 0
    result, stats = prune(messages, policy, WORDS)
    assert stats.pruned
    assert total(result) <= 500
    assert result[0].role == "system"
    assert result[0].content.endswith(TRUNCATION_MARKER)
    assert result[-1] == messages[-1]
    assert result[-2] == messages[-2]


def test_oversized_newest_message_is_truncated_to_fit() -> None:
    messages = [Message("system", words(50)), *chat(5), Message("user", words(3000, "paste"))]
    policy = ContextPolicy(max_tokens=1000)
    result, stats = prune(messages, policy, WORDS)
    assert total(result) <= 1000
    assert stats.pruned
    newest = result[-1]
    assert newest.role == "user"
    assert newest.content.startswith("paste paste")
    assert newest.content.endswith(TRUNCATION_MARKER)
    assert total([newest]) > 900  # shortened only as much as needed


def test_a_single_huge_message_is_truncated() -> None:
    messages = [Message("user", "x" * 50_000)]
    result, stats = prune(messages, ContextPolicy(max_tokens=200), ESTIMATE)
    assert len(result) == 1
    assert total(result, ESTIMATE) <= 200
    assert result[0].content.endswith(TRUNCATION_MARKER)
    assert stats.removed_count == 0
    assert stats.pruned


# -- the guarantee, on random histories ----------------------------------------------------------

_ENGLISH = st.sampled_from(
    ["ok", "thanks!", "error: failed to open the file", "[Tool: ls] 3 files", "lol", "The plan"]
)
_JAPANESE = st.sampled_from(
    ["了解です", "エラーが出ました。", "ところで、", "今日は晴れ", "完了しました"]
)
_PIECE = st.one_of(_ENGLISH, _JAPANESE, st.text(max_size=30))
_CONTENT = st.lists(_PIECE, max_size=40).map(" ".join)
_MESSAGE = st.builds(
    Message, st.sampled_from(["user", "assistant", "system", "tool", "critic"]), _CONTENT
)


def _summarizer(kind: str) -> Callable[[str], str | None] | None:
    if kind == "none":
        return None
    if kind == "short":
        return lambda text: "A short summary."
    if kind == "long":
        return lambda text: "very long summary " * 200
    if kind == "japanese":
        return lambda text: "要約です。" * 30
    if kind == "returns-none":
        return lambda text: None

    def broken(text: str) -> str:
        raise RuntimeError("the model is down")

    return broken


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=st.lists(_MESSAGE, max_size=60),
    preset=st.sampled_from(sorted(PRESETS)),
    max_tokens=st.integers(min_value=64, max_value=3000),
    keep_last=st.integers(min_value=1, max_value=4),
    keep_system=st.booleans(),
    min_gap=st.integers(min_value=1, max_value=8),
    summaries=st.booleans(),
    summarizer=st.sampled_from(["none", "short", "long", "japanese", "returns-none", "raises"]),
    counter=st.sampled_from([WORDS, ESTIMATE]),
    force=st.booleans(),
)
def test_pruned_history_always_fits_the_budget(
    messages: list[Message],
    preset: str,
    max_tokens: int,
    keep_last: int,
    keep_system: bool,
    min_gap: int,
    summaries: bool,
    summarizer: str,
    counter: Words | EstimateCounter,
    force: bool,
) -> None:
    policy = policy_preset(
        preset,
        max_tokens=max_tokens,
        keep_last=keep_last,
        keep_system=keep_system,
        min_gap_for_summary=min_gap,
        summaries=summaries,
    )
    plan = plan_prune(messages, policy, counter, force=force)
    n = len(messages)

    # the plan: kept ascending, gaps maximal runs, every index in exactly one of them
    assert list(plan.kept) == sorted(set(plan.kept))
    covered = list(plan.kept)
    previous_end = None
    for gap in plan.gaps:
        assert 0 <= gap.start < gap.end <= n
        assert gap.start - 1 in plan.kept or gap.start == 0  # maximal on the left
        assert gap.end in plan.kept or gap.end == n  # and on the right
        assert previous_end is None or gap.start > previous_end
        previous_end = gap.end
        covered.extend(range(gap.start, gap.end))
        if gap.summarize:
            assert plan.stage is Stage.AGGRESSIVE
            assert policy.summaries
            assert gap.count >= policy.min_gap_for_summary
    assert sorted(covered) == list(range(n))
    if n:
        assert n - 1 in plan.kept  # the newest message survives

    result, stats = prune(messages, policy, counter, _summarizer(summarizer), force=force)
    tokens = sum(message_tokens(counter, m) for m in result)
    assert tokens <= policy.max_tokens  # below the threshold the history already fits
    assert stats.final_tokens == tokens
    assert stats.final_count == len(result)
    assert stats.original_count == n
    if plan.stage is Stage.EMERGENCY:
        assert stats.summaries == 0
    if not n:
        assert result == []
        return

    newest = messages[-1]
    last = result[-1]
    if last is not newest:  # shortened only because it alone is too big
        assert plan.truncated == n - 1 or message_tokens(counter, newest) > policy.max_tokens // 2
        assert last.role == newest.role
        assert last.content.endswith(TRUNCATION_MARKER) or last.content == ""
        stem = last.content.removesuffix(TRUNCATION_MARKER)
        assert newest.content.startswith(stem)

    # kept messages keep their relative order (identity: equal messages may repeat)
    position = {id(m): i for i, m in enumerate(messages)}
    kept_positions = [position[id(m)] for m in result if id(m) in position]
    assert kept_positions == sorted(kept_positions)
    assert len(set(kept_positions)) == len(kept_positions)


# -- notices of a history pruned again -----------------------------------------------------------


def test_notices_are_recognised_in_both_languages() -> None:
    from kioku.core.context import notice, notice_count

    for language in ("en", "ja"):
        for count in (1, 2, 37):
            assert notice_count(notice(count, language)) == count
    assert notice_count(Message("assistant", "[3 earlier messages omitted] and more")) is None
    assert notice_count(Message("user", "[3 earlier messages omitted]")) is None
    assert notice_count(Message("assistant", "nothing omitted")) is None


def test_consecutive_notices_are_joined_and_nothing_else_changes() -> None:
    from kioku.core.context import merge_notices, notice

    kept = Message("user", "keep me")
    history = [notice(3, "en"), notice(1, "en"), kept, notice(2, "ja"), notice(5, "ja"), kept]
    assert merge_notices(history) == [notice(4, "en"), kept, notice(7, "ja"), kept]
    assert merge_notices([kept, notice(2, "en"), kept]) == [kept, notice(2, "en"), kept]
    assert merge_notices([]) == []
