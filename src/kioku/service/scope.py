"""The owner scope of an engine: the filter of its memories, and one of them by id."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kioku.errors import MemoryNotFoundError
from kioku.ports.store import MemoryFilter

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.service.engine import Engine

__all__ = ["get_owned", "scoped"]


def scoped(engine: Engine, **criteria: object) -> MemoryFilter:
    """A filter of ``engine``'s owner (user and agent) with ``criteria``."""
    return MemoryFilter(user_id=engine.user_id, agent_id=engine.agent_id, **criteria)  # type: ignore[arg-type]


def get_owned(engine: Engine, memory_id: str) -> Memory:
    """The memory with this id in ``engine``'s scope; MemoryNotFoundError otherwise."""
    memory = engine.store.get(memory_id)
    if memory is None or memory.user_id != engine.user_id or memory.agent_id != engine.agent_id:
        raise MemoryNotFoundError(memory_id)
    return memory
