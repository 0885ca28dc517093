"""The lifecycle log (spec 004): every reinforcement, compression, archive, link, revival and
deletion the batch or an erasure made, read back oldest first."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kioku.core.lifecycle.log import LogEntry
    from kioku.service.engine import Engine

__all__ = ["lifecycle_log"]


def lifecycle_log(
    engine: Engine,
    *,
    memory_id: str | None = None,
    since: datetime | None = None,
    events: Sequence[str] | None = None,
    limit: int | None = None,
    all_scopes: bool = False,
) -> list[LogEntry]:
    """Lifecycle log rows of ``engine``'s scope (or every scope), oldest first."""
    return engine.store.read_log(
        memory_id=memory_id,
        user_id=None if all_scopes else engine.user_id,
        agent_id=None if all_scopes else engine.agent_id,
        since=since,
        events=events,
        limit=limit,
    )
