"""The source ids a scope already knows: stored ones, and those of erased memories, so that
no importer, ingest or hook stores the same turn twice, or again after it was erased."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from kioku.service.scope import scoped

if TYPE_CHECKING:
    from kioku.ports.erasure import Tombstones
    from kioku.service.engine import Engine

__all__ = ["KnownSourceIds", "known_source_ids"]


class KnownSourceIds(set[str]):
    """Stored source ids plus erased ones: ``source_id in known`` is True for both, so every
    importer that skips known ids also skips erased turns. Iterating gives the stored ones
    (erased ids are kept only as keyed digests)."""

    def __init__(self, stored: Iterable[str], erased: Tombstones) -> None:
        super().__init__(stored)
        self.erased = erased

    def __contains__(self, source_id: object) -> bool:
        return set.__contains__(self, source_id) or source_id in self.erased


def known_source_ids(engine: Engine) -> KnownSourceIds:
    """Every provenance source id of ``engine``'s memories, archive included; ``in`` is also
    True for the source ids of erased memories."""
    store = engine.store
    stored = store.source_ids(scoped(engine, archived=None))
    return KnownSourceIds(stored, store.tombstones())
