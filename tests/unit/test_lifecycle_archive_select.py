"""The batch reads of the archive only what the day may act on (ArchiveSelect) and every
scope's counts; its plan must be the plan over the whole archive."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kioku.config.schema import ArchiveConfig, CompressionConfig, Config
from kioku.core.lifecycle.plan import (
    ArchivedPopulation,
    ArchiveSelect,
    DayPlan,
    archive_select,
    plan_day,
)
from tests.unit.test_lifecycle_plan import NOW, PREVIOUS, archive, population

_ACTIVE = st.fixed_dictionaries(
    {
        "scope": st.integers(0, 3),
        "intensity": st.integers(0, 100).map(float),
        "memory_days": st.floats(0, 400),
        "coefficient": st.sampled_from([0.9, 0.95, 0.99, 0.995]),
        "level": st.integers(1, 3),
        "protected": st.booleans(),
        "recalled": st.booleans(),
    }
)
_ARCHIVED = st.fixed_dictionaries(
    {
        "scope": st.integers(0, 4),
        "intensity": st.integers(0, 100).map(float),
        "recall_count": st.integers(0, 2),
        "archived_days": st.floats(0, 800),
        "asked_days": st.none() | st.floats(0, 30),
        "protected": st.booleans(),
    }
)


def _archived_row(i: int, r: dict[str, Any]) -> dict[str, Any]:
    asked = r["asked_days"]
    return {
        "id": f"a{i:04d}",
        "scope": r["scope"],
        "intensity": r["intensity"],
        "recall_count": r["recall_count"],
        "archived_at": (NOW - timedelta(days=r["archived_days"])).timestamp(),
        "revival_requested": asked is not None,
        "revival_requested_at": np.nan
        if asked is None
        else (NOW - timedelta(days=asked)).timestamp(),
        "protected": r["protected"],
    }


def _selected(whole: ArchivedPopulation, select: ArchiveSelect) -> ArchivedPopulation:
    """What a store returns for ``select``: the rows it names, every scope's counts."""
    bound = -np.inf if select.erasable_before is None else select.erasable_before
    keep = np.flatnonzero(whole.revival_requested | (whole.archived_at < bound))
    every, free = whole.scope_counts()
    return ArchivedPopulation(
        ids=whole.ids[keep],
        scope=whole.scope[keep],
        created=whole.created[keep],
        intensity=whole.intensity[keep],
        coefficient=whole.coefficient[keep],
        recall_count=whole.recall_count[keep],
        archived_at=whole.archived_at[keep],
        revival_requested=whole.revival_requested[keep],
        revival_requested_at=whole.revival_requested_at[keep],
        protected=whole.protected[keep],
        in_scope=every,
        free_in_scope=free,
    )


def _outcome(plan: DayPlan, arc: ArchivedPopulation) -> dict[str, Any]:
    return {
        "level": plan.level.tolist(),
        "score": plan.score.tolist(),
        "transitions": plan.transitions,
        "revivals": [(r.memory_id, r.score, r.memory_days, r.recall_count) for r in plan.revivals],
        "deferred": [str(arc.ids[i]) for i in plan.revivals_deferred],
        "deleted": [str(arc.ids[i]) for i in plan.deletions],
        "shares": plan.shares,
    }


@given(
    active=st.lists(_ACTIVE, max_size=40),
    archived=st.lists(_ARCHIVED, max_size=40),
    delete=st.sampled_from([None, "AND", "OR"]),
    retention_days=st.integers(0, 500),
    min_memories=st.sampled_from([0, 5, 100]),
)
def test_a_selected_archive_plans_the_day_as_the_whole_one(
    active: list[dict[str, Any]],
    archived: list[dict[str, Any]],
    delete: str | None,
    retention_days: int,
    min_memories: int,
) -> None:
    config = Config(
        compression=CompressionConfig(ratio_min_memories=min_memories),
        archive=ArchiveConfig(
            auto_delete_enabled=delete is not None,
            delete_condition_mode=delete or "AND",  # type: ignore[arg-type]
            retention_days=retention_days,
        ),
    )
    pop = population([dict(r, id=f"m{i:04d}") for i, r in enumerate(active)])
    whole = archive([_archived_row(i, r) for i, r in enumerate(archived)])
    select = archive_select(config, NOW)
    part = _selected(whole, select)
    if delete is None:
        assert select.erasable_before is None
        assert len(part) == int(whole.revival_requested.sum())
    expected = _outcome(plan_day(pop, whole, config, NOW, PREVIOUS), whole)
    assert _outcome(plan_day(pop, part, config, NOW, PREVIOUS), part) == expected


def test_the_and_mode_reads_only_memories_old_enough_to_erase() -> None:
    config = Config(archive=ArchiveConfig(auto_delete_enabled=True, retention_days=365))
    bound = archive_select(config, NOW).erasable_before
    assert bound == (NOW - timedelta(days=365)).timestamp()
    # The plan erases only after more than 365 whole days, which lie before the bound.
    rows = [
        {"archived_at": (NOW - timedelta(days=d)).timestamp(), "intensity": 5.0}
        for d in (364.9, 365.5, 366.0, 367.2)
    ]
    cfg = replace(config, compression=CompressionConfig(ratio_min_memories=10_000))
    plan = plan_day(population([]), archive(rows), cfg, NOW, PREVIOUS)
    assert [rows[i]["archived_at"] < bound for i in plan.deletions] == [True, True]
    assert archive_select(Config(), NOW) == ArchiveSelect()
    or_mode = Config(archive=ArchiveConfig(auto_delete_enabled=True, delete_condition_mode="OR"))
    assert archive_select(or_mode, NOW).erasable_before == float("inf")
