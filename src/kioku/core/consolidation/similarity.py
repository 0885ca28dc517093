"""Text similarity for consolidation: near-duplicate memories (spec 001 日次固定化).

Similarity is the cosine of two texts' term counts (the terms the store's lexical analyzer
makes, passed in). Near duplicates are the groups that link by single linkage at a threshold:
two items are in one group when a chain of pairs at or above it joins them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

from kioku.core.consolidation.model import Source, Terms

__all__ = ["TermIndex", "near_duplicates", "term_similarity"]

#: A term in more items than this is left out when an index looks for candidates (it would
#: make every lookup read most of the store); the items found are still scored on all terms.
COMMON_POSTINGS = 2_000


def _cosine(left: Counter[str], right: Counter[str]) -> float:
    """The cosine of two count vectors; counts are whole numbers, so it is exact and
    symmetric up to the one division and square root (1.0 for equal counts)."""
    return _cosine_with(left, right, _square(left), _square(right))


def _square(counts: Counter[str]) -> int:
    return sum(c * c for c in counts.values())


def _cosine_with(left: Counter[str], right: Counter[str], left_sq: int, right_sq: int) -> float:
    """:func:`_cosine` given each side's sum of squared counts. The dot product is a sum of
    whole numbers, the same whichever side it runs over, so it runs over the smaller."""
    if not left or not right:
        return 0.0
    small, large = (left, right) if len(left) <= len(right) else (right, left)
    dot = sum(count * large.get(term, 0) for term, count in small.items())
    return min(1.0, dot / math.sqrt(left_sq * right_sq))


def _counts(text: str, terms: Terms) -> Counter[str]:
    return Counter(term for term in terms(text) if term)


def term_similarity(a: str, b: str, terms: Terms) -> float:
    """The cosine of the term counts of ``a`` and ``b``: in [0, 1], symmetric, 1 for the same
    text, 0 when either has no terms."""
    return _cosine(_counts(a, terms), _counts(b, terms))


class TermIndex:
    """Texts by their terms, so the alike ones of a text are found without comparing it to
    every other: only items sharing one of its terms are scored (the cosine of term counts)."""

    def __init__(self, terms: Terms) -> None:
        self._terms = terms
        self._counts: dict[str, Counter[str]] = {}
        self._squares: dict[str, int] = {}
        self._postings: dict[str, list[str]] = {}

    def __len__(self) -> int:
        return len(self._counts)

    def add(self, key: str, text: str) -> None:
        """Index ``text`` under ``key`` (a key added again is replaced)."""
        if key in self._counts:
            self.remove(key)
        counts = _counts(text, self._terms)
        self._counts[key] = counts
        self._squares[key] = _square(counts)
        for term in counts:
            self._postings.setdefault(term, []).append(key)

    def remove(self, key: str) -> None:
        self._squares.pop(key, None)
        for term in self._counts.pop(key, Counter()):
            keys = self._postings.get(term)
            if keys is not None and key in keys:
                keys.remove(key)

    def alike(self, text: str, min_score: float = 0.0) -> list[tuple[float, str]]:
        """``(similarity, key)`` of the indexed texts sharing a term with ``text`` whose
        similarity is at least ``min_score`` (and above 0), best first, ties by key."""
        query = _counts(text, self._terms)
        return self._alike(query, min_score)

    def _alike(self, query: Counter[str], min_score: float) -> list[tuple[float, str]]:
        postings = self._postings
        ordered = sorted(query.items(), key=lambda pair: len(postings.get(pair[0], [])))
        lists = [postings.get(term, []) for term, _ in ordered]
        query_sq = _square(query)
        if min_score > 0.5:
            # Prefix filter: an item sharing none of the query's p rarest terms meets only the
            # rest of the query, so (Cauchy-Schwarz) its cosine is at most |rest| / |query|,
            # the root of the rest's share of the squared counts. The prefix ends once that is
            # below min_score: with counts of one, once p > n (1 - min_score²).
            rest, floor, keep = query_sq, min_score * min_score * query_sq, 0
            for _, count in ordered:
                keep += 1
                rest -= count * count
                if rest < floor:
                    break
            lists = lists[:keep]
        usable = [keys for keys in lists if len(keys) <= COMMON_POSTINGS] or lists
        seen: set[str] = set()
        for keys in usable:
            seen.update(keys)
        counts, squares = self._counts, self._squares
        scored = [(_cosine_with(query, counts[key], query_sq, squares[key]), key) for key in seen]
        return sorted(
            ((score, key) for score, key in scored if score > 0 and score >= min_score),
            key=lambda pair: (-pair[0], pair[1]),
        )


def near_duplicates(
    items: Sequence[Source], terms: Terms, threshold: float
) -> list[tuple[str, ...]]:
    """Groups of at least two ids whose items link, by single linkage, at a similarity of
    ``threshold`` or more. Each group's ids are ordered by (``at``, id), the groups by their
    first id."""
    index = TermIndex(terms)
    keys = [str(n) for n in range(len(items))]
    for key, item in zip(keys, items, strict=True):
        index.add(key, item.text)
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(items)):
        query = index._counts[keys[i]]
        partners: Iterable[int] = (
            range(len(items))
            if threshold <= 0
            else (int(key) for _, key in index._alike(query, threshold))
        )
        for j in partners:
            if j != i and root(i) != root(j):
                parent[max(root(i), root(j))] = min(root(i), root(j))
    members: dict[int, list[Source]] = {}
    for i, item in enumerate(items):
        members.setdefault(root(i), []).append(item)
    groups: list[tuple[str, ...]] = []
    for group in members.values():
        ids = tuple(dict.fromkeys(s.id for s in sorted(group, key=lambda s: (s.at, s.id))))
        if len(ids) >= 2:
            groups.append(ids)
    return sorted(groups)
