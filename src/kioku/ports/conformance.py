"""Whether an object satisfies a runtime-checkable protocol, decided once per type.

``isinstance`` against a runtime-checkable protocol looks up every member of the protocol on
each call, which the per-turn paths (the analyzer's profile reading, the embedder's single-text
path) would pay on every turn. The answer is kept per pair of the object's type and the
protocol: objects of one type are taken to share their members, as kioku's analyzers and
embedders do.
"""

from __future__ import annotations

__all__ = ["conforms"]

_KNOWN: dict[tuple[type, type], bool] = {}


def conforms(obj: object, protocol: type) -> bool:
    """``isinstance(obj, protocol)``, decided once per ``(type(obj), protocol)``."""
    key = (type(obj), protocol)
    known = _KNOWN.get(key)
    if known is None:
        known = _KNOWN[key] = isinstance(obj, protocol)
    return known
