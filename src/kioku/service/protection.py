"""The protected-memory cap (保護記憶 › 上限と超過時の処理), made non-interactive."""

from __future__ import annotations

from dataclasses import replace

from kioku.errors import ProtectedCandidate, ProtectionLimitError
from kioku.ports.store import MemoryFilter, Order, Store

__all__ = ["CANDIDATES_SHOWN", "require_protection_room"]

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
