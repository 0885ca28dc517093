"""The facade's methods for what happens while the store sleeps: consolidation, the lifecycle.

:class:`Sleep` is a part of :class:`~kioku.service.kioku.Kioku`, kept in its own module so the
facade stays short; each method delegates to one use case.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kioku.ports.store_records import MemoryVersion, MidTermEntry, Resolution
    from kioku.service.consolidation.runner import ConsolidationReport
    from kioku.service.engine import Engine

__all__ = ["Sleep"]


class Sleep:
    """Consolidation, active forgetting and spec 004's lifecycle (mixed into ``Kioku``)."""

    def _sleeping_engine(self) -> Engine:
        return self  # type: ignore[return-value]  # Kioku, which this is mixed into, is one

    def consolidate(
        self,
        levels: Sequence[str] | None = None,
        *,
        now: datetime | None = None,
        dry_run: bool = False,
    ) -> ConsolidationReport:
        """Run the due daily, weekly and monthly consolidation (or the ``levels`` named, for
        the current period); ``dry_run`` plans without writing."""
        from kioku.service.consolidation.runner import consolidate

        return consolidate(self._sleeping_engine(), levels=levels, now=now, dry_run=dry_run)

    def versions(self, memory_id: str) -> builtins.list[MemoryVersion]:
        """The saved earlier versions of a knowledge item or procedure, oldest first."""
        return self._sleeping_engine().store.versions(memory_id)

    def history(self, memory_id: str) -> dict[str, Any]:
        """What a knowledge item or procedure replaced, what replaced it, its saved versions."""
        from kioku.service.consolidation.history import item_history
        from kioku.service.scope import get_owned

        engine = self._sleeping_engine()
        return item_history(engine, get_owned(engine, memory_id))

    def resolutions(self, since: datetime | None = None) -> builtins.list[Resolution]:
        """What any agent of this owner reported resolved (spec 001 解決伝播), oldest first."""
        engine = self._sleeping_engine()
        return engine.store.resolutions(engine.user_id, since=since)

    def midterm(self, thread_id: str | None = None) -> builtins.list[MidTermEntry]:
        """The unexpired entries of the mid-term tier (spec 003 §4), newest first."""
        engine = self._sleeping_engine()
        return engine.store.midterm(
            engine.user_id, engine.agent_id, engine.clock.now(), thread_id=thread_id
        )

    def lifecycle(self, now: datetime | None = None) -> dict[str, Any]:
        """Spec 004's lifecycle view: the policy, importance, capacity, archive, the last
        consolidation runs and the lifecycle log per day."""
        from kioku.service.consolidation.overview import lifecycle_overview

        return lifecycle_overview(self._sleeping_engine(), now)
