"""Reports on one scope: counts per level and category, and the cost of paid providers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kioku.records import Record

if TYPE_CHECKING:
    from kioku.core.cost import CostReport
    from kioku.ports.store import StoreStats
    from kioku.service.engine import Engine

__all__ = ["Stats", "cost", "stats"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Stats(Record):
    """Counts for one owner scope, plus the store's size and the protection cap."""

    store: StoreStats
    max_protected: int
    user_id: str
    agent_id: str

    def counts(self) -> dict[str, Any]:
        """The counts as JSON: levels, categories, kinds, protection, the archive."""
        s = self.store
        return {
            "user_id": self.user_id,
            "agent_id": self.agent_id,
            "total": s.total,
            "active": s.total - s.archived,
            "archived": s.archived,
            "by_level": {str(level): s.by_level.get(level, 0) for level in (1, 2, 3, 4)},
            "by_category": dict(sorted(s.by_category.items())),
            "by_kind": dict(sorted(s.by_kind.items())),
            "protected": s.protected,
            "max_protected": self.max_protected,
            "revival_requested": s.revival_requested,
        }


def stats(engine: Engine) -> Stats:
    """Counts per level and category, protection and the store size, for ``engine``'s scope."""
    return Stats(
        store=engine.store.stats(engine.user_id, engine.agent_id),
        max_protected=engine.config.protection.max_protected_memories,
        user_id=engine.user_id,
        agent_id=engine.agent_id,
    )


def cost(engine: Engine, since: datetime | None = None) -> CostReport:
    """Token usage of paid providers and its cost at the configured prices."""
    from kioku.core.cost import Prices, cost_report

    config = engine.config
    prices = Prices(
        llm_input=config.llm.input_price_per_mtok,
        llm_output=config.llm.output_price_per_mtok,
        embedding=config.embedding.price_per_mtok,
    )
    return cost_report(engine.store.usage_totals(since), prices, engine.clock.now())
