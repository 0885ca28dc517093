"""The spreading-activation score of spec 001 (拡散活性化による記憶検索).

Spec 001 approximates spreading activation (Collins & Loftus) by adding three signals to the
vector similarity of a memory, and optionally a fourth from the knowledge graph::

    score = similarity
          + WEIGHT_RECENCY × 0.5 ^ (age_days / HALF_LIFE_DAYS)   # recent memories come first
          + WEIGHT_FREQUENCY × ln(1 + access_count)             # used memories come easier
          + WEIGHT_PAGERANK × pagerank                          # only when the graph is used

``log`` in the spec is the natural logarithm. The recency term is at most ``WEIGHT_RECENCY``
(a memory from this very moment) and halves every 30 days.

The graph term comes from :func:`personalized_pagerank`: a random walk over the memory graph
that restarts at the memories the message activated directly (the seeds), so memories a few
links away from them gain activation too (多ホップの連想伝播).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Final

from kioku.errors import ValidationError

__all__ = [
    "HALF_LIFE_DAYS",
    "WEIGHT_FREQUENCY",
    "WEIGHT_PAGERANK",
    "WEIGHT_RECENCY",
    "activation_score",
    "frequency_boost",
    "personalized_pagerank",
    "recency_factor",
]

#: The most the recency term adds (a memory of age 0).
WEIGHT_RECENCY: Final = 0.2
#: The weight of ``ln(1 + access_count)`` (Hebbian strengthening by use).
WEIGHT_FREQUENCY: Final = 0.1
#: Days after which the recency factor has halved.
HALF_LIFE_DAYS: Final = 30.0
#: The weight of the Personalized PageRank score when graph spreading is on.
WEIGHT_PAGERANK: Final = 0.5


def _finite(field: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValidationError(field, value, "a finite number")
    return float(value)


def recency_factor(age_days: float) -> float:
    """``0.5 ^ (age_days / HALF_LIFE_DAYS)``, in (0, 1]; a negative age counts as 0."""
    age = max(0.0, _finite("age_days", age_days))
    return float(0.5 ** (age / HALF_LIFE_DAYS))


def frequency_boost(access_count: int) -> float:
    """``ln(1 + access_count)``; ``access_count`` must be a non-negative integer."""
    if isinstance(access_count, bool) or not isinstance(access_count, int) or access_count < 0:
        raise ValidationError("access_count", access_count, "an integer of 0 or more")
    return math.log1p(access_count)


def activation_score(
    similarity: float,
    age_days: float,
    access_count: int,
    pagerank: float | None = None,
) -> float:
    """The final score of spec 001 for one memory (see the module docstring).

    ``age_days`` below zero (a clock that moved back) counts as 0, so a memory is never more
    than fully recent. ``pagerank`` is a probability, so it must be finite and not negative.
    """
    score = _finite("similarity", similarity)
    score += WEIGHT_RECENCY * recency_factor(age_days)
    score += WEIGHT_FREQUENCY * frequency_boost(access_count)
    if pagerank is not None:
        rank = _finite("pagerank", pagerank)
        if rank < 0:
            raise ValidationError("pagerank", pagerank, "a finite number of 0 or more")
        score += WEIGHT_PAGERANK * rank
    return score


def personalized_pagerank(
    edges: Mapping[str, Sequence[tuple[str, float]]],
    seeds: Mapping[str, float],
    damping: float = 0.85,
    iterations: int = 30,
    tolerance: float = 1e-9,
) -> dict[str, float]:
    """Personalized PageRank over a small weighted graph, by power iteration.

    ``edges`` maps a node to its out-links ``(target, weight)``; a node's walker follows a
    link with probability proportional to its weight (weights must be finite and not
    negative; links of weight 0 are ignored, repeated links add up). ``seeds`` weigh the
    nodes the walk restarts from: they are normalised into the restart distribution, so
    they need a positive sum. With probability ``1 - damping`` each step restarts; a node
    without out-links (dangling) hands all its mass back to the seeds.

    The iteration stops after ``iterations`` steps or once a step moves less than
    ``tolerance`` of mass (L1). The result covers every node named anywhere (sources,
    targets, seeds), is never negative and sums to 1; a graph without nodes gives ``{}``.
    """
    if isinstance(damping, bool) or not (0.0 <= _finite("damping", damping) < 1.0):
        raise ValidationError("damping", damping, "a number from 0 up to (not including) 1")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise ValidationError("iterations", iterations, "an integer of 1 or more")
    if _finite("tolerance", tolerance) < 0:
        raise ValidationError("tolerance", tolerance, "a finite number of 0 or more")

    links = _normalised_links(edges)
    nodes = sorted({*edges, *seeds, *(t for out in edges.values() for t, _ in out)})
    if not nodes:
        return {}
    restart = _restart(seeds)
    rank = dict.fromkeys(nodes, 0.0)
    rank.update(restart)
    for _ in range(iterations):
        dangling = sum(rank[n] for n in nodes if n not in links)
        nxt = dict.fromkeys(nodes, 0.0)
        for source, out in links.items():
            share = damping * rank[source]
            if share:
                for target, fraction in out:
                    nxt[target] += share * fraction
        back = (1.0 - damping) + damping * dangling
        for seed, weight in restart.items():
            nxt[seed] += back * weight
        moved = sum(abs(nxt[n] - rank[n]) for n in nodes)
        rank = nxt
        if moved < tolerance:
            break
    total = sum(rank.values())
    return {n: rank[n] / total for n in nodes}


def _normalised_links(
    edges: Mapping[str, Sequence[tuple[str, float]]],
) -> dict[str, list[tuple[str, float]]]:
    """Each node's out-links as ``(target, fraction of its out-weight)``; no empty lists."""
    links: dict[str, list[tuple[str, float]]] = {}
    for source, out in edges.items():
        weights: dict[str, float] = {}
        for target, weight in out:
            if _finite("edge weight", weight) < 0:
                raise ValidationError("edge weight", weight, "a finite number of 0 or more")
            if weight > 0:
                weights[target] = weights.get(target, 0.0) + float(weight)
        total = sum(weights.values())
        if total > 0:
            links[source] = [(t, w / total) for t, w in sorted(weights.items())]
    return links


def _restart(seeds: Mapping[str, float]) -> dict[str, float]:
    for node, weight in seeds.items():
        if _finite("seed weight", weight) < 0:
            raise ValidationError(f"seed weight of {node!r}", weight, "a finite number ≥ 0")
    largest = max((float(w) for w in seeds.values()), default=0.0)
    if not largest > 0:
        raise ValidationError("seeds", dict(seeds), "at least one seed with a positive weight")
    # Scaled by the largest weight first, so that huge weights cannot overflow the sum.
    scaled = {node: float(w) / largest for node, w in sorted(seeds.items()) if w > 0}
    total = sum(scaled.values())
    return {node: w / total for node, w in scaled.items()}
