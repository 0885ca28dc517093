"""Protected memories (保護記憶): protecting and unprotecting, and the cap (上限と超過時の処理),
made non-interactive."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kioku.errors import ProtectedCandidate, ProtectionLimitError
from kioku.ports.store import MemoryFilter, MemoryPatch, Order, Store
from kioku.service.scope import get_owned, scoped

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.service.engine import Engine

__all__ = [
    "CANDIDATES_SHOWN",
    "check_protection_room",
    "protect",
    "require_protection_room",
    "unprotect",
]

#: How many of the oldest protected memories the refusal lists.
CANDIDATES_SHOWN = 5


def require_protection_room(store: Store, scope: MemoryFilter, limit: int) -> None:
    """Raise ProtectionLimitError, listing the oldest protected memories of ``scope`` (the ones
    a user would unprotect first), when ``limit`` of them are protected already.

    Call it inside ``store.atomic()`` together with the write it guards.
    """
    protected = replace(scope, protected=True)
    if store.count(protected) < limit:
        return
    oldest = store.list(replace(protected, order=Order.CREATED_ASC, limit=CANDIDATES_SHOWN))
    raise ProtectionLimitError(
        limit,
        [
            ProtectedCandidate(m.id, m.created.isoformat(timespec="seconds"), m.trigger)
            for m in oldest
        ],
    )


def check_protection_room(engine: Engine) -> None:
    """:func:`require_protection_room` for ``engine``'s scope and configured cap."""
    require_protection_room(
        engine.store, scoped(engine), engine.config.protection.max_protected_memories
    )


def protect(engine: Engine, memory_id: str) -> Memory:
    """Protect a memory of ``engine``'s scope; ProtectionLimitError at the cap."""
    store = engine.store
    with store.atomic():
        memory = get_owned(engine, memory_id)
        if memory.protected:
            return memory
        check_protection_room(engine)
        store.update(memory_id, MemoryPatch(protected=True))
    return get_owned(engine, memory_id)


def unprotect(engine: Engine, memory_id: str) -> Memory:
    """Remove a memory's protection; it fades like any other from the next batch."""
    store = engine.store
    with store.atomic():
        memory = get_owned(engine, memory_id)
        if memory.protected:
            store.update(memory_id, MemoryPatch(protected=False))
    return get_owned(engine, memory_id)
