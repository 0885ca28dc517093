"""Relations in the batch (spec 000 記憶の関連付け) and the batch calendar (スケジューリング)."""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from kioku.core.lifecycle.days import batch_moment, due_days, is_overdue, latest_due_day
from kioku.core.lifecycle.links import Link, Node, auto_links, direction, review_links

TZ = ZoneInfo("Europe/Berlin")


def nodes(**scores: tuple[float, float]) -> dict[str, Node]:
    return {k: Node(score=s, created=c) for k, (s, c) in scores.items()}


# -- リレーションの方向 -------------------------------------------------------------------------


def test_direction_high_score_to_low() -> None:
    # Spec 000 l.1160-1165 (リレーションの方向): 高スコア記憶 → 低スコア記憶.
    n = nodes(a=(80, 1), b=(30, 2))
    assert direction("a", "b", n, 5.0) == ("a", "b")
    assert direction("b", "a", n, 5.0) == ("a", "b")


def test_direction_within_proximity_is_newer_to_older() -> None:
    # Spec 000 l.1175-1181: if |score_A - score_B| < threshold: 新しい記憶 → 古い記憶.
    n = nodes(a=(50, 1), b=(47, 2))
    assert direction("a", "b", n, 5.0) == ("b", "a")


# -- 整合性チェック / 方向の再評価 ------------------------------------------------------------


def test_review_drops_links_touching_inactive_memories() -> None:
    # Spec 000 l.1203-1206 (整合性チェック): references to archived or erased memories go.
    active = nodes(a=(80, 1), b=(30, 2))
    changes = review_links(
        [Link("a", "b", "same_topic"), Link("a", "gone", "continues")], active, 5
    )
    assert [(link.target, why) for link, why in changes.removed] == [("gone", "inactive")]
    assert changes.added == ()


def test_review_turns_a_link_whose_scores_reversed() -> None:
    # Spec 000 l.1208-1212 (方向の再評価): A → B with B.score now higher becomes B → A.
    active = nodes(a=(10, 1), b=(60, 2))
    changes = review_links([Link("a", "b", "references")], active, 5)
    assert [why for _, why in changes.removed] == ["turned"]
    assert [link for link, _, _ in changes.added] == [Link("b", "a", "references")]


def test_review_keeps_one_link_per_pair() -> None:
    active = nodes(a=(10, 1), b=(60, 2))
    changes = review_links([Link("a", "b", "references"), Link("b", "a", "same_topic")], active, 5)
    assert [why for _, why in changes.removed] == ["turned"]
    assert changes.added == ()


# -- 自動関連付け -----------------------------------------------------------------------------


def unit(rows: list[list[float]]) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_auto_links_pairs_above_threshold_only_and_never_itself() -> None:
    # Spec 000 l.1214-1219, l.1221-1234 (自動関連付け): new × all, cosine ≥ threshold, no self.
    vectors = unit([[1, 0, 0], [0.99, 0.1, 0], [0, 1, 0], [1, 0.01, 0]])
    ids = ["new", "near", "far", "twin"]
    n = nodes(new=(50, 4), near=(30, 1), far=(20, 2), twin=(90, 3))
    links = auto_links(
        ["new"], vectors[:1], ids, vectors, [], n, threshold=0.85, max_relations=10, proximity=5
    )
    got = {(link.source, link.target) for link, _ in links}
    assert got == {("new", "near"), ("twin", "new")}
    assert all(link.type == "same_topic" for link, _ in links)
    assert all(sim >= 0.85 for _, sim in links)


def test_auto_links_skip_existing_pairs_either_way() -> None:
    vectors = unit([[1, 0], [1, 0.05]])
    n = nodes(a=(50, 2), b=(10, 1))
    links = auto_links(
        ["a"], vectors[:1], ["a", "b"], vectors, [("b", "a")], n,
        threshold=0.85, max_relations=10, proximity=5,
    )  # fmt: skip
    assert links == []


def test_auto_links_respect_max_relations_most_similar_first() -> None:
    vectors = unit([[1, 0, 0], [1, 0.05, 0], [1, 0.2, 0], [1, 0.3, 0]])
    ids = ["new", "b", "c", "d"]
    n = nodes(new=(50, 9), b=(10, 1), c=(10, 2), d=(10, 3))
    links = auto_links(
        ["new"], vectors[:1], ids, vectors, [], n, threshold=0.85, max_relations=2, proximity=5
    )
    assert [link.target for link, _ in links] == ["b", "c"]


# -- スケジューリング ---------------------------------------------------------------------------


def test_latest_due_day_before_and_after_the_hour() -> None:
    assert latest_due_day(datetime(2026, 5, 2, 2, 59, tzinfo=TZ), 3) == date(2026, 5, 1)
    assert latest_due_day(datetime(2026, 5, 2, 3, 0, tzinfo=TZ), 3) == date(2026, 5, 2)


def test_due_days_catch_up_every_missed_day_in_order() -> None:
    now = datetime(2026, 5, 8, 9, 0, tzinfo=TZ)
    days = due_days(date(2026, 5, 1), now, 3)
    assert days == [date(2026, 5, d) for d in range(2, 9)]


def test_due_days_first_run_and_up_to_date() -> None:
    now = datetime(2026, 5, 8, 9, 0, tzinfo=TZ)
    assert due_days(None, now, 3) == [date(2026, 5, 8)]
    assert due_days(date(2026, 5, 8), now, 3) == []


def test_batch_moment_keeps_wall_time_across_daylight_saving() -> None:
    like = datetime(2026, 3, 1, tzinfo=TZ)
    before = batch_moment(date(2026, 3, 28), 3, like)
    after = batch_moment(date(2026, 3, 29), 3, like)  # clocks go forward at 02:00
    assert (before.hour, after.hour) == (3, 3)
    assert (
        after - before == timedelta(hours=23) or after.timestamp() - before.timestamp() == 23 * 3600
    )


@pytest.mark.parametrize(
    ("hours_ago", "overdue"), [(None, True), (23.9, False), (24.0, True), (100, True)]
)
def test_is_overdue(hours_ago: float | None, overdue: bool) -> None:
    # Spec 000 l.227-229 (フォールバック機構): 24 hours or more since last_compression_run.
    now = datetime(2026, 5, 8, 9, 0, tzinfo=TZ)
    last = None if hours_ago is None else now - timedelta(hours=hours_ago)
    assert is_overdue(last, now, 24.0) is overdue
