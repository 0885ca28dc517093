"""Vector caches carried across this store's own inserts, instead of rebuilt.

A cache (:class:`.vectors.ModelVectors`) holds every vector of one model as of one version of
the store, and any write that changes what vector search sees sets a new random version. A
process that writes one memory and then searches (a server remembering a turn, then priming
the next message) would rebuild the whole matrix from the database after every write. When
the only such writes of a committed transaction were this store's inserts, it knows exactly
what changed: each insert reports the version it found and the one it set
(:class:`.writes.VectorDelta`), and if they chain from the cached version to the committed
one, the cache is extended by the new rows (without reading them back). Anything else
(another process's write, an update, a deletion, a rollback) breaks the chain, and the next
search brings the cache up to date from the change log (:mod:`.vector_log`) or loads it from
the database. Extended caches are kept in memory; the cache file is written when asked
(``save_vector_cache``) or by the next full load.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise

from kioku.adapters.store.sqlite.codec import encode_embedding
from kioku.adapters.store.sqlite.vector_log import extended
from kioku.adapters.store.sqlite.vectors import ModelVectors, build
from kioku.adapters.store.sqlite.writes import VectorDelta

__all__ = ["carry"]

Cached = tuple[int, ModelVectors | None]
#: A new row: id, user, agent, archived, the vector's bytes, its dimension.
Row = tuple[str, str, str, bool, bytes, int]


def _rows(
    deltas: Sequence[VectorDelta], model: str
) -> list[tuple[str, str, str, bool, bytes, int]]:
    found = []
    for delta in deltas:
        for memory in delta.memories:
            blob, name, dim = encode_embedding(memory.embedding)
            if blob is not None and name == model and dim is not None:
                found.append(
                    (
                        memory.id,
                        memory.user_id,
                        memory.agent_id,
                        memory.archived_at is not None,
                        blob,
                        dim,
                    )
                )
    return found


class _Unchainable(Exception):  # noqa: N818 - a signal, caught below
    """The rows cannot be added to the cache (another dimension: a full load decides)."""


def _extended(
    model: str, base: ModelVectors | None, version: int, deltas: Sequence[VectorDelta]
) -> ModelVectors | None:
    """``base`` with the rows the deltas added for ``model``, as of ``version`` (None: still
    no vector of the model); _Unchainable when they cannot be added."""
    rows = _rows(deltas, model)
    if not rows:
        return None if base is None else replace(base, version=version, _filters={})
    ids, users, agents, flags, blobs, dims = (list(column) for column in zip(*rows, strict=True))
    dim = dims[0] if base is None else base.dim
    if any(d != dim for d in dims):
        raise _Unchainable(model)
    if base is None:
        return replace(
            build(model, version, dim, ids, users, agents, flags, blobs), loaded_from="delta"
        )
    if base.mixed:
        raise _Unchainable(model)
    return extended(
        base, version, ids, list(zip(users, agents, strict=True)), flags, blobs, "delta"
    )


def carry(cache: dict[str, Cached], deltas: Sequence[VectorDelta], committed: int) -> None:
    """Bring ``cache`` (model -> (version, vectors)) to the ``committed`` version by the
    ``deltas`` of the transaction that set it, or drop what they cannot bring there."""
    chained = (
        bool(deltas)
        and all(a.after == b.before for a, b in pairwise(deltas))
        and deltas[-1].after == committed
    )
    for model, (version, vectors) in list(cache.items()):
        if not chained or version != deltas[0].before:
            del cache[model]
            continue
        try:
            cache[model] = (committed, _extended(model, vectors, committed, deltas))
        except _Unchainable:
            del cache[model]
