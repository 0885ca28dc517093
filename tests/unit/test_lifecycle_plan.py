"""The batch plan, rule by rule; each test names the part of spec 000 it checks."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.config.schema import ArchiveConfig, CompressionConfig, Config
from kioku.core.lifecycle.plan import (
    RATIO,
    THRESHOLD,
    ArchivedPopulation,
    Population,
    plan_day,
)

TZ = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 3, 1, 3, 0, tzinfo=TZ)
PREVIOUS = NOW - timedelta(days=1)
OLD = (NOW - timedelta(days=30)).timestamp()
DAY = 86_400.0


def population(rows: list[dict[str, Any]]) -> Population:
    def col(name: str, default: Any, dtype: Any) -> Any:
        return np.asarray([r.get(name, default) for r in rows], dtype=dtype)

    ids = np.empty(len(rows), dtype=object)
    ids[:] = [r.get("id", f"m{i:04d}") for i, r in enumerate(rows)]
    return Population(
        ids=ids,
        scope=col("scope", 0, np.int32),
        # By default a memory made so that its memory_days is its age in batch days.
        created=np.asarray(
            [
                r.get("created", PREVIOUS.timestamp() - r.get("memory_days", 0.0) * DAY)
                for r in rows
            ],
            dtype=np.float64,
        ),
        intensity=col("intensity", 50.0, np.float64),
        coefficient=col("coefficient", 0.995, np.float64),
        memory_days=col("memory_days", 0.0, np.float64),
        recall_count=col("recall_count", 0, np.int64),
        recalled=col("recalled", False, np.bool_),
        level=col("level", 1, np.int8),
        protected=col("protected", False, np.bool_),
        score=col("score", 50.0, np.float64),
    )


def archive(rows: list[dict[str, Any]]) -> ArchivedPopulation:
    def col(name: str, default: Any, dtype: Any) -> Any:
        return np.asarray([r.get(name, default) for r in rows], dtype=dtype)

    ids = np.empty(len(rows), dtype=object)
    ids[:] = [r.get("id", f"a{i:04d}") for i, r in enumerate(rows)]
    return ArchivedPopulation(
        ids=ids,
        scope=col("scope", 0, np.int32),
        created=col("created", OLD, np.float64),
        intensity=col("intensity", 30.0, np.float64),
        coefficient=col("coefficient", 0.8, np.float64),
        recall_count=col("recall_count", 0, np.int64),
        archived_at=col("archived_at", OLD, np.float64),
        revival_requested=col("revival_requested", False, np.bool_),
        revival_requested_at=col("revival_requested_at", np.nan, np.float64),
        protected=col("protected", False, np.bool_),
    )


def spec_ratios() -> Config:
    """The spec's shares, enforced however few memories there are."""
    return Config(compression=CompressionConfig(ratio_min_memories=0))


def no_ratios() -> Config:
    """Ratios that never bind, to test the other rules alone."""
    return Config(
        compression=CompressionConfig(level1_ratio=1.0, level2_ratio=1.0, level3_ratio=1.0)
    )


def plan(
    rows: list[dict[str, Any]],
    config: Config | None = None,
    arc: list[dict[str, Any]] | None = None,
):  # type: ignore[no-untyped-def]
    return plan_day(population(rows), archive(arc or []), config or no_ratios(), NOW, PREVIOUS)


# -- 想起による記憶強化 / バッチ処理時の強化フロー ---------------------------------------------


def test_recalled_memory_days_halve_coefficient_rises_count_increments() -> None:
    # Spec 000 l.153-161 and 想起強化の具体例 l.165: 10 days recalled -> 5.0; coefficient + 0.02.
    p = plan([{"memory_days": 10.0, "recalled": True, "coefficient": 0.95, "recall_count": 2}])
    assert p.memory_days[0] == pytest.approx(5.0)
    assert p.coefficient[0] == pytest.approx(0.97)
    assert p.recall_count[0] == 3
    assert bool(p.reinforced[0])


def test_reinforced_coefficient_is_capped_at_0_999() -> None:
    # Spec 000 l.158: decay_coefficient = min(0.999, decay_coefficient + 0.02).
    p = plan([{"recalled": True, "coefficient": 0.99}])
    assert p.coefficient[0] == pytest.approx(0.999)


def test_unrecalled_memory_ages_one_day() -> None:
    # Spec 000 l.255-256 (圧縮処理の内容 step 1): else memory_days += 1.0.
    p = plan([{"memory_days": 3.0}])
    assert p.memory_days[0] == pytest.approx(4.0)
    assert p.recall_count[0] == 0


def test_memory_made_since_the_previous_batch_is_not_aged_at_its_first_batch() -> None:
    # Spec 000 l.947-957 (memory_days の初期値): the first value is the time to the next batch.
    made = (NOW - timedelta(hours=9)).timestamp()
    p = plan([{"memory_days": 0.375, "created": made}])
    assert p.memory_days[0] == pytest.approx(0.375)
    assert bool(p.fresh[0])


def test_score_follows_the_formula() -> None:
    # Spec 000 l.26 and l.258: retention_score = intensity × coefficient ^ memory_days.
    p = plan([{"intensity": 80, "coefficient": 0.97, "memory_days": 9.0}])
    assert p.score[0] == pytest.approx(80 * 0.97**10)


# -- 閾値設定 / レベル判定 --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("score_target", "level"),
    [(60.0, 1), (50.0, 2), (21.0, 2), (20.0, 3), (5.5, 3), (5.0, 4), (0.0, 4)],
)
def test_threshold_levels(score_target: float, level: int) -> None:
    # Spec 000 l.186-194 (閾値設定): L1 > 50, 20 < L2 ≤ 50, 5 < L3 ≤ 20, L4 ≤ 5.
    # intensity × 1.0 ^ days keeps the score equal to the intensity.
    p = plan([{"intensity": score_target, "coefficient": 1.0}])
    assert int(p.level[0]) == level
    if level > 1:
        (t,) = p.transitions
        assert (t.from_level, t.to_level, t.reason) == (1, level, THRESHOLD)


def test_level_never_rises_with_the_score() -> None:
    # Compressed text cannot be restored: a Level 2 memory whose score recovers stays Level 2.
    p = plan([{"level": 2, "intensity": 90, "recalled": True, "coefficient": 0.999}])
    assert int(p.level[0]) == 2
    assert p.transitions == ()


def test_protected_memory_is_never_compressed() -> None:
    # Spec 000 l.1476-1484 (保護記憶): no threshold or ratio compression, no archiving.
    p = plan([{"protected": True, "intensity": 3, "coefficient": 1.0}])
    assert int(p.level[0]) == 1
    assert p.transitions == ()


def test_one_batch_may_compress_twice() -> None:
    # Spec 000 l.413-416 (二重圧縮): Level 1 → 2 → 3 in one batch is allowed.
    p = plan([{"intensity": 10, "coefficient": 1.0}])
    (t,) = p.transitions
    assert (t.from_level, t.to_level) == (1, 3)


# -- 比率強制 ---------------------------------------------------------------------------------


def test_ratio_enforcement_top_down_with_spec_shares() -> None:
    # Spec 000 l.354-401 (比率強制): L1 15 %, L2 30 %, L3 35 %; excess pushed down, top first.
    rows = [{"intensity": 60 + i * 0.1, "coefficient": 1.0} for i in range(100)]
    p = plan(rows, spec_ratios())
    counts = np.bincount(p.level.astype(int), minlength=5)
    assert counts[1] == 15
    assert counts[2] == 30
    assert counts[3] == 35
    assert counts[4] == 20
    # The survivors at Level 1 are the 15 highest scores.
    kept = sorted(np.flatnonzero(p.level == 1).tolist())
    assert kept == list(range(85, 100))
    assert {t.reason for t in p.transitions} == {RATIO}


def test_ratio_order_score_then_created_then_recall_count() -> None:
    # Spec 000 l.403-409 (対象選定の優先順位): score asc, created asc, recall_count asc.
    rows = [{"intensity": 70, "coefficient": 1.0} for _ in range(7)]
    rows[3]["intensity"] = 69  # lowest score goes first
    rows[5]["created"] = OLD - 100  # then the oldest
    rows[1]["recall_count"] = 5  # equal score and age: the least recalled goes first
    rows[2]["recall_count"] = 0
    cfg = Config(
        compression=CompressionConfig(
            level1_ratio=4 / 7, level2_ratio=1.0, level3_ratio=1.0, ratio_min_memories=0
        )
    )
    p = plan(rows, cfg)
    pushed = [t.index for t in p.transitions]
    assert sorted(pushed) == sorted([3, 5, 0])
    assert 1 not in pushed


def test_protected_memories_are_outside_the_ratios() -> None:
    # Spec 000 l.1487-1497 (比率計算からの除外): protected memories count nowhere.
    rows = [{"intensity": 90, "coefficient": 1.0, "protected": True} for _ in range(50)]
    rows += [{"intensity": 90, "coefficient": 1.0} for _ in range(20)]
    p = plan(rows, spec_ratios())
    free = ~population(rows).protected
    assert int(np.sum(p.level[free] == 1)) == 3  # floor(0.15 × 20)
    assert np.all(p.level[~free] == 1)


def test_archived_memories_count_in_the_denominator() -> None:
    # 15/30/35 % leave 20 % to the archive: the archive belongs to the total.
    rows = [{"intensity": 90, "coefficient": 1.0} for _ in range(10)]
    p = plan(rows, spec_ratios(), arc=[{} for _ in range(10)])
    assert int(np.sum(p.level == 1)) == 3  # floor(0.15 × 20)


def test_ratios_are_kept_per_scope() -> None:
    rows = [{"intensity": 90, "coefficient": 1.0, "scope": 0} for _ in range(20)]
    rows += [{"intensity": 90, "coefficient": 1.0, "scope": 1} for _ in range(20)]
    p = plan(rows, spec_ratios())
    for scope in (0, 1):
        assert int(np.sum((p.level == 1) & (population(rows).scope == scope))) == 3


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 100),
            st.floats(0.7, 0.999),
            st.floats(0, 400),
            st.integers(1, 3),
            st.booleans(),
            st.integers(0, 1),
        ),
        min_size=1,
        max_size=80,
    ),
    st.integers(0, 30),
)
def test_no_level_exceeds_its_share_and_levels_only_fall(
    rows: list[tuple[int, float, float, int, bool, int]], archived: int
) -> None:
    pop = [
        {
            "intensity": i,
            "coefficient": c,
            "memory_days": d,
            "level": lv,
            "protected": prot and lv == 1,
            "scope": s,
        }
        for i, c, d, lv, prot, s in rows
    ]
    cfg = spec_ratios()
    p = plan(pop, cfg, arc=[{"scope": n % 2} for n in range(archived)])
    before = population(pop)
    assert np.all(p.level >= before.level)
    assert np.all(p.level[before.protected] == before.level[before.protected])
    shares = {1: 0.15, 2: 0.30, 3: 0.35}
    for scope in (0, 1):
        mine = (before.scope == scope) & ~before.protected
        total = int(mine.sum()) + sum(1 for n in range(archived) if n % 2 == scope)
        for level, share in shares.items():
            assert int(np.sum(p.level[mine] == level)) <= math.floor(share * total + 1e-9)


# -- アーカイブからの自動復活 -------------------------------------------------------------------


def test_revival_score_and_level() -> None:
    # Spec 000 l.525-556 (復活時の retention_score): max(intensity × 0.995^days, L3 + margin).
    archived_at = (NOW - timedelta(days=10)).timestamp()
    rows = [{"intensity": 90, "coefficient": 1.0} for _ in range(10)]
    arc = [
        {
            "intensity": 40,
            "coefficient": 0.9,
            "archived_at": archived_at,
            "revival_requested": True,
            "revival_requested_at": archived_at,
            "recall_count": 2,
        }
    ]
    cfg = Config(
        compression=CompressionConfig(level1_ratio=1.0, level2_ratio=1.0, level3_ratio=0.35)
    )
    p = plan(rows, cfg, arc)
    (r,) = p.revivals
    assert r.score == pytest.approx(40 * 0.995**10)
    assert r.recall_count == 3
    # memory_days is chosen so that the spec's formula gives the revived score again.
    assert 40 * 0.9**r.memory_days == pytest.approx(r.score)


def test_revival_score_has_a_floor() -> None:
    archived_at = (NOW - timedelta(days=2000)).timestamp()
    arc = [
        {
            "intensity": 10,
            "archived_at": archived_at,
            "revival_requested": True,
            "revival_requested_at": archived_at,
        }
    ]
    p = plan([{"intensity": 90, "coefficient": 1.0} for _ in range(10)], None, arc)
    assert p.revivals[0].score == pytest.approx(5.0 + 3.0)


def test_revival_is_deferred_when_level3_is_full() -> None:
    # Spec 000 l.500-506 (復活フロー): if current share + 1 > level3_ratio, the request is dropped.
    rows = [{"intensity": 10, "coefficient": 1.0, "level": 3} for _ in range(7)]
    rows += [{"intensity": 90, "coefficient": 1.0} for _ in range(12)]
    arc = [{"revival_requested": True, "revival_requested_at": OLD}]
    cfg = Config(
        compression=CompressionConfig(
            level1_ratio=1.0, level2_ratio=1.0, level3_ratio=0.35, ratio_min_memories=0
        )
    )
    p = plan(rows, cfg, arc)  # 7 of 20 at Level 3 = 35 %: one more would exceed
    assert p.revivals == ()
    assert p.revivals_deferred == (0,)


# -- 完全消去 ---------------------------------------------------------------------------------


def _deletable(**overrides: Any) -> dict[str, Any]:
    row = {"archived_at": (NOW - timedelta(days=400)).timestamp(), "intensity": 10}
    row.update(overrides)
    return row


def test_auto_delete_is_off_by_default() -> None:
    # Spec 000 l.590-597 (設定パラメータ): archive_auto_delete_enabled defaults to false.
    assert plan([], None, [_deletable()]).deletions == ()


@pytest.mark.parametrize(
    ("mode", "row", "deleted"),
    [
        ("AND", _deletable(), True),
        ("AND", _deletable(recall_count=1), False),
        ("AND", _deletable(intensity=20), False),
        ("AND", _deletable(archived_at=(NOW - timedelta(days=300)).timestamp()), False),
        ("OR", _deletable(recall_count=1, intensity=50), True),
        (
            "OR",
            _deletable(
                archived_at=(NOW - timedelta(days=3)).timestamp(), intensity=50, recall_count=1
            ),
            False,
        ),
        ("OR", _deletable(archived_at=NOW.timestamp(), recall_count=3, intensity=5), True),
        ("AND", _deletable(protected=True), False),
    ],
)
def test_auto_delete_conditions(mode: str, row: dict[str, Any], deleted: bool) -> None:
    # Spec 000 l.280-287, l.580-588 (完全消去): > 365 days, never recalled, intensity < 20; AND/OR.
    cfg = replace(
        no_ratios(),
        archive=ArchiveConfig(auto_delete_enabled=True, delete_condition_mode=mode),  # type: ignore[arg-type]
    )
    assert (plan([], cfg, [row]).deletions == (0,)) is deleted


def test_zero_recall_condition_can_be_dropped() -> None:
    cfg = replace(
        no_ratios(),
        archive=ArchiveConfig(auto_delete_enabled=True, delete_require_zero_recall=False),
    )
    assert plan([], cfg, [_deletable(recall_count=4)]).deletions == (0,)


def test_small_scopes_are_left_to_the_thresholds() -> None:
    # compression.ratio_min_memories (default 100): ten fresh memories all stay at Level 1.
    rows = [{"intensity": 90, "coefficient": 1.0} for _ in range(10)]
    assert plan(rows, Config()).transitions == ()
    hundred = [{"intensity": 90, "coefficient": 1.0} for _ in range(100)]
    assert int(np.sum(plan(hundred, Config()).level == 1)) == 15


def test_naive_moment_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        plan_day(population([]), archive([]), spec_ratios(), NOW.replace(tzinfo=None), PREVIOUS)


def test_ratios_count_only_archived_memories_that_stay() -> None:
    # Erased archived memories leave the denominator the same day (auto-delete before step 4).
    rows = [{"intensity": 90, "coefficient": 1.0} for _ in range(10)]
    old = (NOW - timedelta(days=400)).timestamp()
    arc = [{"archived_at": old, "intensity": 10} for _ in range(10)]
    cfg = Config(
        compression=CompressionConfig(ratio_min_memories=0),
        archive=ArchiveConfig(auto_delete_enabled=True),
    )
    p = plan(rows, cfg, arc)
    assert len(p.deletions) == 10
    assert int(np.sum(p.level == 1)) == 1  # floor(0.15 × 10), not floor(0.15 × 20)


def test_a_memory_never_recalled_is_aged_to_its_real_age() -> None:
    # Imported history, or a store's first batch: 0.625 days before its first batch, three
    # batches since -> 3.625, not 0.625 + 1.
    made = (NOW - timedelta(days=3, hours=15)).timestamp()
    p = plan([{"created": made, "memory_days": 0.625}])
    assert p.memory_days[0] == pytest.approx(3.625)
    # A recall pending on such a memory halves its age up to the previous batch (the recall
    # takes the place of today's day, as for any memory), not its first 0.625 days.
    p = plan([{"created": made, "memory_days": 0.625, "recalled": True}])
    assert p.memory_days[0] == pytest.approx(2.625 / 2)
    # A memory once recalled has had its days halved: it only ages a day.
    p = plan([{"created": made, "memory_days": 0.625, "recall_count": 1}])
    assert p.memory_days[0] == pytest.approx(1.625)
    # A memory ahead of its age (days set by hand) still ages a day, never less.
    p = plan([{"created": made, "memory_days": 9.0}])
    assert p.memory_days[0] == pytest.approx(10.0)


@settings(max_examples=60, deadline=None)
@given(
    days=st.integers(min_value=1, max_value=400),
    hour=st.integers(min_value=0, max_value=23),
    batches=st.integers(min_value=1, max_value=5),
)
def test_imported_memory_ends_as_if_it_had_been_there_all_along(
    days: int, hour: int, batches: int
) -> None:
    # A memory made ``days`` days before PREVIOUS at ``hour``: whatever batch it meets first,
    # after ``batches`` daily batches its memory_days is its age in batch days, exactly what a
    # memory that went through every batch since its creation has.
    from kioku.core.retention import initial_memory_days, next_batch_after

    created = (PREVIOUS - timedelta(days=days)).replace(hour=hour)
    first = initial_memory_days(created, 3)
    row = {"created": created.timestamp(), "memory_days": first}
    moment = NOW
    for n in range(batches):
        previous = moment - timedelta(days=1)
        p = plan_day(population([row]), archive([]), no_ratios(), moment, previous)
        row["memory_days"] = float(p.memory_days[0])
        if n < batches - 1:
            moment += timedelta(days=1)
    every = first + (moment.date() - next_batch_after(created, 3).date()).days
    assert row["memory_days"] == pytest.approx(every)


def test_a_memory_whose_revival_was_asked_is_not_erased() -> None:
    cfg = replace(no_ratios(), archive=ArchiveConfig(auto_delete_enabled=True))
    row = _deletable(revival_requested=True, revival_requested_at=OLD)
    assert plan([], cfg, [row]).deletions == ()


# -- 保護記憶 -------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    intensity=st.integers(min_value=0, max_value=100),
    coefficient=st.floats(min_value=0.7, max_value=0.999),
    recalls=st.lists(st.booleans(), min_size=1, max_size=60),
    level=st.sampled_from([1, 2, 3]),
)
def test_a_protected_memory_never_scores_below_its_first_day(
    intensity: int, coefficient: float, recalls: list[bool], level: int
) -> None:
    # Spec 000 保護記憶: Level 1 forever. Its retention score stays at its first-day value (the
    # intensity) through any number of batches and recalls; its days keep counting.
    row: dict[str, Any] = {
        "intensity": float(intensity),
        "coefficient": coefficient,
        "memory_days": 0.5,
        "created": PREVIOUS.timestamp() + 3600,
        "protected": True,
        "level": level,
        "score": float(intensity),
    }
    moment = NOW
    for recalled in recalls:
        row["recalled"] = recalled
        p = plan_day(population([row]), archive([]), spec_ratios(), moment, moment - timedelta(1))
        assert p.score[0] >= intensity
        assert p.level[0] == level
        assert p.transitions == ()
        row.update(
            memory_days=float(p.memory_days[0]),
            coefficient=float(p.coefficient[0]),
            recall_count=int(p.recall_count[0]),
            score=float(p.score[0]),
        )
        moment += timedelta(days=1)


def test_an_unprotected_memory_fades_by_its_real_age() -> None:
    # Unprotecting returns a memory to the curve its age puts it on: its days kept counting.
    row = {"intensity": 80.0, "coefficient": 0.95, "memory_days": 40.0, "protected": True}
    assert plan([row]).score[0] == pytest.approx(80.0)
    row["protected"] = False
    assert plan([row]).score[0] == pytest.approx(80.0 * 0.95**41)
