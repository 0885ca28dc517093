"""Active forgetting of spec 001 (能動的忘却): downscaling, full forgetting, protection, cleanup."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.core.consolidation.forgetting import (
    FORGET_AFTER_LOW_DAYS,
    KNOWLEDGE_IDLE_DAYS,
    PROCEDURE_IDLE_DAYS,
    ItemActivity,
    downscale,
    forget_due,
    protection,
    utility,
    versions_to_prune,
)

NOW = datetime(2026, 3, 1, 3, 0, tzinfo=UTC)
DAY = timedelta(days=1)


def item(
    kind: str = "knowledge",
    *,
    idle_days: float = 0.0,
    access_count: int = 0,
    accessed: bool = False,
    **fields: object,
) -> ItemActivity:
    """A memory idle for ``idle_days``: created then, or last accessed then."""
    moment = NOW - timedelta(days=idle_days)
    base = ItemActivity(
        id="m1",
        kind=kind,
        created=moment - timedelta(days=400) if accessed else moment,
        last_access=moment if accessed else None,
        access_count=access_count,
        protected=False,
    )
    return replace(base, **fields)  # type: ignore[arg-type]


# 忘却からの保護


@pytest.mark.parametrize(
    ("kind", "protected", "version", "expected"),
    [
        ("profile", False, 1, "profile"),
        ("profile", True, 1, "profile"),
        ("knowledge", True, 1, "protected"),
        ("episode", True, 1, "protected"),
        ("procedure", True, 1, "protected"),
        ("procedure", False, 2, None),
        ("procedure", False, 3, "mature procedure (version ≥ 3)"),
        ("procedure", False, 7, "mature procedure (version ≥ 3)"),
        ("knowledge", False, 5, None),
        ("episode", False, 1, None),
    ],
)
def test_protection(kind: str, protected: bool, version: int, expected: str | None) -> None:
    assert protection(item(kind, protected=protected, version=version)) == expected


# knowledge/ の忘却閾値: 90 days and fewer than 3 accesses


@pytest.mark.parametrize(
    ("idle_days", "action"),
    [(89, "keep"), (89.99, "keep"), (90, "mark"), (91, "mark"), (400, "mark")],
)
@pytest.mark.parametrize("accessed", [False, True])
def test_knowledge_idle_boundary(idle_days: float, action: str, accessed: bool) -> None:
    mark = downscale(item(idle_days=idle_days, access_count=2, accessed=accessed), NOW)
    assert mark.action == action


@pytest.mark.parametrize(("accesses", "action"), [(0, "mark"), (2, "mark"), (3, "keep")])
def test_knowledge_access_boundary(accesses: int, action: str) -> None:
    mark = downscale(item(idle_days=120, access_count=accesses, accessed=accesses > 0), NOW)
    assert mark.action == action


def test_knowledge_reason_has_the_numbers() -> None:
    mark = downscale(item(idle_days=120, access_count=1, accessed=True), NOW)
    assert mark.id == "m1"
    assert mark.reason == (
        "knowledge unused for 120 days with 1 access (thresholds: 90 days, fewer than 3)"
    )


def test_idle_time_runs_from_the_last_access_not_creation() -> None:
    recent = replace(item(idle_days=500), last_access=NOW - 10 * DAY, access_count=1)
    mark = downscale(recent, NOW)
    assert mark.action == "keep"
    assert mark.reason.startswith("active: knowledge unused for 10 days with 1 access")


def test_an_access_in_the_future_counts_as_no_idle_time() -> None:
    mark = downscale(item(idle_days=-3), NOW)
    assert mark.action == "keep"
    assert "unused for 0 days" in mark.reason


# procedures/ の忘却閾値: 180 days and fewer than 3 uses, or utility < 0.3 after 3 failures


@pytest.mark.parametrize(("idle_days", "action"), [(179, "keep"), (180, "mark"), (181, "mark")])
def test_procedure_idle_boundary(idle_days: int, action: str) -> None:
    mark = downscale(item("procedure", idle_days=idle_days, access_count=2), NOW)
    assert mark.action == action


@pytest.mark.parametrize(
    ("access", "success", "failure", "action"),
    [
        (2, 0, 0, "mark"),
        (1, 1, 0, "mark"),
        (1, 1, 1, "keep"),
        (0, 3, 0, "keep"),
        (3, 0, 0, "keep"),
    ],
)
def test_procedure_uses_count_accesses_successes_and_failures(
    access: int, success: int, failure: int, action: str
) -> None:
    it = item(
        "procedure",
        idle_days=200,
        access_count=access,
        success_count=success,
        failure_count=failure,
    )
    assert downscale(it, NOW).action == action


def test_procedure_idle_reason() -> None:
    mark = downscale(item("procedure", idle_days=200, access_count=1, success_count=1), NOW)
    assert mark.reason == (
        "procedure unused for 200 days with 2 uses (thresholds: 180 days, fewer than 3)"
    )


@pytest.mark.parametrize(
    ("success", "failure", "action"),
    [
        (0, 2, "keep"),  # failures below 3
        (0, 3, "mark"),  # utility 0.0
        (1, 3, "mark"),  # utility 0.25
        (2, 5, "mark"),  # utility 0.29
        (3, 7, "keep"),  # utility exactly 0.3 is not below it
        (2, 3, "keep"),  # utility 0.4
        (10, 20, "keep"),  # utility 0.33
    ],
)
def test_failing_procedure_is_marked_at_once(success: int, failure: int, action: str) -> None:
    it = item(
        "procedure", idle_days=0, access_count=9, success_count=success, failure_count=failure
    )
    assert downscale(it, NOW).action == action


def test_failing_reason() -> None:
    it = item("procedure", access_count=5, success_count=1, failure_count=3)
    assert downscale(it, NOW).reason == (
        "procedure utility 0.25 after 3 failures (thresholds: below 0.3, at least 3)"
    )


def test_active_procedure_reason_names_both_conditions() -> None:
    it = item("procedure", idle_days=30, access_count=4, success_count=2, failure_count=1)
    mark = downscale(it, NOW)
    assert mark.action == "keep"
    assert mark.reason == (
        "active: procedure unused for 30 days with 7 uses (thresholds: 180 days, fewer than 3); "
        "procedure utility 0.67 after 1 failure (thresholds: below 0.3, at least 3)"
    )


def test_utility_is_the_confidence_formula() -> None:
    assert utility(0, 0) == 0.0
    assert utility(3, 1) == 0.75
    assert utility(1, 0) == 1.0


# What is never marked


@pytest.mark.parametrize(
    ("it", "reason"),
    [
        (item("profile", idle_days=999), "protected (profile)"),
        (item(idle_days=999, protected=True), "protected (protected)"),
        (
            item("procedure", idle_days=999, failure_count=9, version=3),
            "protected (mature procedure (version ≥ 3))",
        ),
        (item(idle_days=999, archived=True), "archived"),
        (item("episode", idle_days=999), "episodes are not downscaled"),
        (item("skill", idle_days=999), "no forgetting rule for kind 'skill'"),
    ],
)
def test_never_marked(it: ItemActivity, reason: str) -> None:
    mark = downscale(it, NOW)
    assert (mark.action, mark.reason) == ("keep", reason)


# Already low


def test_low_and_still_qualifying_is_kept_with_its_date() -> None:
    it = item(idle_days=120, low_since=NOW - 30 * DAY)
    mark = downscale(it, NOW)
    assert mark.action == "keep"
    assert mark.reason.startswith("low since 2026-01-30: knowledge unused for 120 days")


def test_low_but_accessed_since_is_unmarked() -> None:
    it = item(idle_days=2, access_count=1, accessed=True, low_since=NOW - 30 * DAY)
    mark = downscale(it, NOW)
    assert mark.action == "unmark"
    assert mark.reason.startswith("active again: knowledge unused for 2 days")


def test_low_procedure_that_recovered_is_unmarked() -> None:
    it = item(
        "procedure", access_count=9, success_count=4, failure_count=3, low_since=NOW - 5 * DAY
    )
    assert downscale(it, NOW).action == "unmark"


def test_low_but_now_protected_is_unmarked() -> None:
    it = item(idle_days=120, protected=True, low_since=NOW - 30 * DAY)
    assert downscale(it, NOW).action == "unmark"


def test_low_and_archived_is_left_alone() -> None:
    it = item(idle_days=120, archived=True, low_since=NOW - 30 * DAY)
    assert downscale(it, NOW).action == "keep"


# 完全忘却: low for 60 days and not accessed since


@pytest.mark.parametrize(("low_days", "due"), [(59, False), (60, True), (61, True)])
def test_forget_boundary(low_days: int, due: bool) -> None:
    it = item(idle_days=200, low_since=NOW - low_days * DAY)
    assert (forget_due(it, NOW) is not None) == due


def test_forget_reason() -> None:
    it = item(idle_days=200, low_since=NOW - 75 * DAY)
    assert forget_due(it, NOW) == (
        "low since 2025-12-16 (75 days, threshold: 60 days) and not accessed since"
    )


@pytest.mark.parametrize(
    ("it", "due"),
    [
        (item(idle_days=200), False),  # never marked
        (item(idle_days=200, low_since=NOW - 90 * DAY, archived=True), False),
        (item(idle_days=200, low_since=NOW - 90 * DAY, protected=True), False),
        (item("profile", idle_days=200, low_since=NOW - 90 * DAY), False),
        (item("procedure", idle_days=200, version=4, low_since=NOW - 90 * DAY), False),
        # accessed after it was marked
        (item(idle_days=80, accessed=True, low_since=NOW - 90 * DAY), False),
        # accessed exactly when it was marked, or before
        (item(idle_days=90, accessed=True, low_since=NOW - 90 * DAY), True),
        (item(idle_days=100, accessed=True, low_since=NOW - 90 * DAY), True),
        (item("episode", idle_days=200, low_since=NOW - 90 * DAY), True),
        (item("procedure", idle_days=200, low_since=NOW - 90 * DAY), True),
    ],
)
def test_forget_due_conditions(it: ItemActivity, due: bool) -> None:
    assert (forget_due(it, NOW) is not None) == due


# 月次アーカイブクリーンアップ: the newest 5 versions stay


@pytest.mark.parametrize(
    ("versions", "pruned"),
    [
        ([], []),
        ([1, 2, 3, 4, 5], []),
        ([1, 2, 3, 4, 5, 6], [1]),
        ([7, 1, 6, 2, 5, 3, 4], [1, 2]),
        ([1, 1, 2, 3, 4, 5, 6, 6], [1]),
        ([2, 4, 8, 16, 32, 64, 128], [2, 4]),
        (list(range(1, 11)), [1, 2, 3, 4, 5]),
    ],
)
def test_versions_to_prune(versions: list[int], pruned: list[int]) -> None:
    assert versions_to_prune(versions) == pruned


def test_versions_to_prune_keep() -> None:
    assert versions_to_prune([3, 1, 2], keep=0) == [1, 2, 3]
    assert versions_to_prune([3, 1, 2], keep=2) == [1]
    with pytest.raises(ValueError, match="keep"):
        versions_to_prune([1], keep=-1)


@given(
    st.lists(st.integers(min_value=1, max_value=50), max_size=30),
    st.integers(min_value=0, max_value=10),
)
def test_versions_to_prune_keeps_exactly_the_newest(versions: list[int], keep: int) -> None:
    pruned = versions_to_prune(versions, keep)
    distinct = set(versions)
    kept = distinct - set(pruned)
    assert pruned == sorted(pruned)
    assert set(pruned) <= distinct
    assert len(kept) == min(keep, len(distinct))
    assert all(p < k for p in pruned for k in kept)


# Properties

kinds = st.sampled_from(["episode", "knowledge", "procedure", "profile"])
counts = st.integers(min_value=0, max_value=12)
activities = st.builds(
    lambda kind, idle, accesses, protected, version, s, f, low, archived: item(
        kind,
        idle_days=idle,
        access_count=accesses,
        protected=protected,
        version=version,
        success_count=s,
        failure_count=f,
        low_since=None if low is None else NOW - timedelta(days=low),
        archived=archived,
    ),
    kinds,
    st.floats(min_value=-10, max_value=1000),
    counts,
    st.booleans(),
    st.integers(min_value=1, max_value=6),
    counts,
    counts,
    st.none() | st.floats(min_value=0, max_value=400),
    st.booleans(),
)


@given(activities)
def test_mark_only_the_unmarked_and_unmark_only_the_low(it: ItemActivity) -> None:
    mark = downscale(it, NOW)
    assert mark.id == it.id
    assert mark.reason
    if mark.action == "mark":
        assert it.low_since is None
    if mark.action == "unmark":
        assert it.low_since is not None


@given(activities)
def test_protected_archived_episodes_and_profiles_are_never_marked(it: ItemActivity) -> None:
    if it.archived or protection(it) is not None or it.kind in ("episode", "profile"):
        assert downscale(it, NOW).action != "mark"
        assert forget_due(it, NOW) is None or it.kind == "episode"


@given(activities)
def test_recently_used_healthy_memories_are_never_marked(it: ItemActivity) -> None:
    idle = NOW - (it.last_access or it.created)
    healthy = it.failure_count < 3 or utility(it.success_count, it.failure_count) >= 0.3
    if idle < timedelta(days=KNOWLEDGE_IDLE_DAYS) and healthy:
        assert downscale(it, NOW).action != "mark"
    if it.kind == "procedure" and idle < timedelta(days=PROCEDURE_IDLE_DAYS) and healthy:
        assert downscale(it, NOW).action != "mark"


@given(activities, st.floats(min_value=0, max_value=1000))
def test_waiting_never_unmarks_or_saves(it: ItemActivity, later_days: float) -> None:
    later = NOW + timedelta(days=later_days)
    if downscale(it, NOW).action == "mark":
        assert downscale(it, later).action == "mark"
    if forget_due(it, NOW) is not None:
        assert forget_due(it, later) is not None


@given(activities)
def test_forget_due_needs_sixty_low_days(it: ItemActivity) -> None:
    if forget_due(it, NOW) is not None:
        assert it.low_since is not None
        assert NOW - it.low_since >= timedelta(days=FORGET_AFTER_LOW_DAYS)
        assert it.last_access is None or it.last_access <= it.low_since
