"""Relations in the batch (記憶の関連付け: バッチ処理での関連付け管理), pure.

Three steps after compression: drop links that touch memories no longer active (整合性チェック),
turn links whose direction no longer follows the scores (方向の再評価), and link new or changed
memories to similar ones (自動関連付け). A link points from the memory with the higher score to
the lower one; within ``score_proximity_threshold`` of each other, from the newer to the older
(リレーションの方向).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "Link",
    "LinkChanges",
    "Node",
    "auto_links",
    "direction",
    "review_links",
]

#: Cosine similarities are computed this many new rows at a time (bounds memory at 1M rows).
_CHUNK: Final = 256


@dataclass(frozen=True, slots=True)
class Node:
    """What the direction rule needs to know about a memory."""

    score: float
    created: float  # seconds since the epoch


@dataclass(frozen=True, slots=True, order=True)
class Link:
    """A typed, directed relation between two memories."""

    source: str
    target: str
    type: str


@dataclass(frozen=True, slots=True)
class LinkChanges:
    """The links a batch removes and adds, each with the reason."""

    removed: tuple[tuple[Link, str], ...]  # (link, why): "inactive" or "turned"
    added: tuple[tuple[Link, str, float], ...]  # (link, why, similarity): "turned" or "similar"


def direction(a: str, b: str, nodes: Mapping[str, Node], proximity: float) -> tuple[str, str]:
    """``(source, target)`` for a link between ``a`` and ``b``: higher score → lower score, or
    newer → older when the scores are within ``proximity`` (ties broken by id)."""
    na, nb = nodes[a], nodes[b]
    if abs(na.score - nb.score) < proximity:
        newer_first = (na.created, a) >= (nb.created, b)
        return (a, b) if newer_first else (b, a)
    return (a, b) if na.score > nb.score else (b, a)


def review_links(
    links: Iterable[Link],
    active: Mapping[str, Node],
    proximity: float,
) -> LinkChanges:
    """Steps 5 and 6: links to or from a memory not in ``active`` (archived, erased) go; links
    whose direction the scores now reverse are turned round (one link per pair is kept)."""
    removed: list[tuple[Link, str]] = []
    added: list[tuple[Link, str, float]] = []
    kept: set[tuple[str, str]] = set()
    todo: list[Link] = []
    for link in sorted(links):
        if link.source not in active or link.target not in active:
            removed.append((link, "inactive"))
        else:
            kept.add((link.source, link.target))
            todo.append(link)
    for link in todo:
        source, target = direction(link.source, link.target, active, proximity)
        if source == link.source:
            continue
        removed.append((link, "turned"))
        kept.discard((link.source, link.target))
        if (source, target) not in kept:
            kept.add((source, target))
            added.append((Link(source, target, link.type), "turned", float("nan")))
    return LinkChanges(tuple(removed), tuple(added))


def auto_links(
    fresh: Sequence[str],
    fresh_vectors: npt.NDArray[np.float32],
    all_ids: Sequence[str],
    all_vectors: npt.NDArray[np.float32],
    existing: Iterable[tuple[str, str]],
    nodes: Mapping[str, Node],
    *,
    threshold: float,
    max_relations: int,
    proximity: float,
    link_type: str = "same_topic",
) -> list[tuple[Link, float]]:
    """Step 7 (自動関連付け): link each new or changed memory to every active memory whose
    cosine similarity is at least ``threshold``, most similar pairs first, skipping pairs that
    are already linked (either way) and memories that already have ``max_relations`` links.

    Rows of both matrices must be L2-normalised (zero rows never match). Only new × all is
    computed, in chunks (自動関連付けの最適化: existing pairs were linked by earlier batches).
    """
    if not fresh or not all_ids or max_relations <= 0:
        return []
    degree: dict[str, int] = defaultdict(int)
    linked: set[frozenset[str]] = set()
    for source, target in existing:
        degree[source] += 1
        degree[target] += 1
        linked.add(frozenset((source, target)))
    candidates: list[tuple[float, str, str]] = []
    for start in range(0, len(fresh), _CHUNK):
        block = fresh_vectors[start : start + _CHUNK] @ all_vectors.T
        rows, cols = np.nonzero(block >= threshold)
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            a, b = fresh[start + r], all_ids[c]
            if a != b:
                candidates.append((-float(block[r, c]), min(a, b), max(a, b)))
    chosen: list[tuple[Link, float]] = []
    for negative, a, b in sorted(set(candidates)):
        pair = frozenset((a, b))
        if pair in linked or degree[a] >= max_relations or degree[b] >= max_relations:
            continue
        source, target = direction(a, b, nodes, proximity)
        linked.add(pair)
        degree[a] += 1
        degree[b] += 1
        chosen.append((Link(source, target, link_type), min(1.0, -negative)))
    return chosen
