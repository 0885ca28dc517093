"""A copy of the lexical index as of one state, and BM25 computed from it as FTS5 computes it.

A :class:`Snapshot` holds every row of ``memories_fts`` (slot, memory id, terms text) and,
per token, the rows holding it (slot, occurrences, the row's token count) in numpy arrays.
It never changes once made: :func:`applied` makes the next one from changed rows, sharing
what did not change, so a search may keep using a snapshot while another is made.
:mod:`.lexical_cache` decides when.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from kioku.adapters.store.sqlite.lexical_tokens import Tokenizer

__all__ = ["Key", "Postings", "Row", "Rows", "Snapshot", "applied", "built"]

#: FTS5's bm25() constants.
_K1: Final = 1.2
_B: Final = 0.75
#: Changed rows a snapshot keeps beside the rows it shares before it copies them all.
_MIN_OVERLAY: Final = 1024

Int64s = npt.NDArray[np.int64]
Int32s = npt.NDArray[np.int32]
#: What a snapshot describes: the ``lexical_version`` value and FTS5's structure record.
Key = tuple[object, bytes | None]
#: One row of the index: the memory id and its terms text.
Row = tuple[str, str]


@dataclass(frozen=True, slots=True, eq=False)
class Postings:
    """The rows holding one term: slots ascending, the term's occurrences in each, and
    each row's token count."""

    slots: Int64s
    counts: Int32s
    lengths: Int32s

    def __len__(self) -> int:
        return int(self.slots.size)

    def within(self, low: int, high: int) -> Postings:
        start = int(np.searchsorted(self.slots, low, side="left"))
        end = int(np.searchsorted(self.slots, high, side="right"))
        return Postings(self.slots[start:end], self.counts[start:end], self.lengths[start:end])


_EMPTY: Final = Postings(
    np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32)
)


class Rows(Mapping[int, Row]):
    """The rows by slot: a dict shared between snapshots and this snapshot's changes to it
    (None: deleted), so a write changing a few rows does not copy them all."""

    __slots__ = ("_base", "_changes", "_size")

    def __init__(self, base: dict[int, Row], changes: dict[int, Row | None] | None = None) -> None:
        self._base = base
        self._changes: dict[int, Row | None] = changes or {}
        self._size = len(base) + sum(
            (row is not None) - (slot in base) for slot, row in self._changes.items()
        )

    def __getitem__(self, slot: int) -> Row:
        row = self._changes.get(slot, self._base.get(slot)) if self._changes else self._base[slot]
        if row is None:
            raise KeyError(slot)
        return row

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[int]:
        for slot in self._base:
            if self._changes.get(slot, True) is not None:
                yield slot
        for slot, row in self._changes.items():
            if row is not None and slot not in self._base:
                yield slot

    def changed(self, changes: Mapping[int, Row | None]) -> Rows:
        """These rows with ``changes`` (None: deleted) made. A deletion copies the rows
        that remain, so the text of a deleted (perhaps erased) memory is not kept alive by
        a dict the next snapshots share."""
        merged = {**self._changes, **changes}
        deletes = any(row is None and slot in self._base for slot, row in changes.items())
        if not deletes and len(merged) <= max(_MIN_OVERLAY, len(self._base) // 16):
            return Rows(self._base, merged)
        whole = {slot: self[slot] for slot in self}
        for slot, row in changes.items():
            if row is None:
                whole.pop(slot, None)
            else:
                whole[slot] = row
        return Rows(whole)


@dataclass(frozen=True, slots=True, eq=False)
class Snapshot:
    """The lexical index as of ``key``; never changed once made."""

    key: Key
    rows: Rows
    postings: Mapping[str, Postings]
    tokens: int  # every row's token count, summed (FTS5's column total)

    def documents(self, term: str) -> int:
        """How many rows hold the token ``term`` (the ``doc`` of ``fts5vocab``)."""
        return len(self.postings.get(term, _EMPTY))

    def documents_within(self, term: str, low: int, high: int) -> int:
        """How many rows with a slot in ``[low, high]`` hold the token ``term``."""
        return len(self.postings.get(term, _EMPTY).within(low, high))

    def memory_id(self, slot: int) -> str:
        return self.rows[slot][0]

    def rank(
        self, terms: Sequence[str], window: tuple[int, int] | None = None
    ) -> tuple[Int64s, npt.NDArray[np.float64]]:
        """The slots of the rows holding any of ``terms`` (each one token), within ``window``
        when given, best first, with their BM25 scores (``-bm25()``): higher scores first,
        equal scores in ascending slot order, as FTS5 orders them.

        FTS5's bm25() (fts5_aux.c) is computed term by term, in the query's phrase order:
        ``idf = log((N - n + 0.5) / (n + 0.5))`` (``1e-6`` when not positive), with ``N``
        the rows and ``n`` the rows holding the term anywhere (a window does not change it),
        and ``score += idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl))`` with
        ``f`` the term's occurrences in the row, ``D`` the row's tokens and ``avgdl`` the
        mean tokens a row. Elementwise float64 numpy arithmetic rounds each operation as C
        does; a row missing a term adds 0.0, which changes nothing, so summing only the
        terms present is exact."""
        rows = len(self.rows)
        chosen: list[tuple[float, Postings]] = []
        for term in terms:
            postings = self.postings.get(term, _EMPTY)
            hits = len(postings)
            idf = math.log((rows - hits + 0.5) / (hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            if window is not None:
                postings = postings.within(*window)
            chosen.append((idf, postings))
        if not rows or not any(len(p) for _, p in chosen):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        avgdl = float(self.tokens) / float(rows)
        slots, where = np.unique(np.concatenate([p.slots for _, p in chosen]), return_inverse=True)
        scores = np.zeros(slots.size, dtype=np.float64)
        start = 0
        for idf, postings in chosen:
            count = len(postings)
            freq = postings.counts.astype(np.float64)
            length = postings.lengths.astype(np.float64)
            part = idf * ((freq * (_K1 + 1.0)) / (freq + _K1 * (1 - _B + _B * length / avgdl)))
            scores[where[start : start + count]] += part
            start += count
        order = np.lexsort((slots, -scores))
        return slots[order], scores[order]


def built(key: Key, rows: dict[int, Row], tokenizer: Tokenizer) -> Snapshot:
    """The snapshot of ``rows`` (slot -> row), every row tokenized."""
    index: dict[str, int] = {}
    term_ids: list[int] = []
    counts: list[int] = []
    per_row: list[int] = []
    lengths: list[int] = []
    slots = sorted(rows)
    for slot in slots:
        found = tokenizer.counts(rows[slot][1])
        term_ids.extend([index.setdefault(term, len(index)) for term in found])
        counts.extend(found.values())
        per_row.append(len(found))
        lengths.append(sum(found.values()))
    ids = np.asarray(term_ids, dtype=np.int64)
    order = np.argsort(ids, kind="stable")  # by term, then slot (rows are in slot order)
    repeat = np.asarray(per_row, dtype=np.int64)
    all_slots = np.repeat(np.asarray(slots, dtype=np.int64), repeat)[order]
    all_counts = np.asarray(counts, dtype=np.int32)[order]
    all_lengths = np.repeat(np.asarray(lengths, dtype=np.int32), repeat)[order]
    ends = np.cumsum(np.bincount(ids, minlength=len(index)))
    postings: dict[str, Postings] = {}
    start = 0
    for term, end in zip(index, ends.tolist(), strict=True):
        postings[term] = Postings(
            all_slots[start:end], all_counts[start:end], all_lengths[start:end]
        )
        start = end
    return Snapshot(key, Rows(rows), postings, int(sum(lengths)))


def applied(
    key: Key, old: Snapshot, changes: Mapping[int, Row | None], tokenizer: Tokenizer
) -> Snapshot:
    """``old`` with the rows of ``changes`` (slot -> its row now, None: deleted) made."""
    removed: dict[str, list[int]] = {}
    added: dict[str, list[tuple[int, int, int]]] = {}
    tokens = old.tokens
    for slot, now in changes.items():
        if (was := old.rows.get(slot)) is not None:
            if was == now:
                continue
            found = tokenizer.counts(was[1])
            tokens -= sum(found.values())
            for term in found:
                removed.setdefault(term, []).append(slot)
        if now is not None:
            found = tokenizer.counts(now[1])
            length = sum(found.values())
            tokens += length
            for term, count in found.items():
                added.setdefault(term, []).append((slot, count, length))
    postings = dict(old.postings)
    for term in removed.keys() | added.keys():
        merged = _merged(postings.get(term, _EMPTY), removed.get(term, ()), added.get(term, ()))
        if len(merged):
            postings[term] = merged
        else:
            postings.pop(term, None)
    return Snapshot(key, old.rows.changed(changes), postings, tokens)


def _merged(
    postings: Postings, removed: Sequence[int], added: Sequence[tuple[int, int, int]]
) -> Postings:
    """``postings`` without the rows of ``removed`` slots and with those of ``added``
    ``(slot, occurrences, row tokens)``, in slot order (a slot is in at most one of them, or
    removed before it is added)."""
    slots, counts, lengths = postings.slots, postings.counts, postings.lengths
    if removed:
        gone = np.asarray(removed, dtype=np.int64)
        at = np.searchsorted(slots, gone)
        found = at < slots.size
        found[found] = slots[at[found]] == gone[found]
        at = at[found]
        slots = np.delete(slots, at)
        counts = np.delete(counts, at)
        lengths = np.delete(lengths, at)
    if added:
        new = sorted(added)
        new_slots = np.asarray([a[0] for a in new], dtype=np.int64)
        at = np.searchsorted(slots, new_slots)
        slots = np.insert(slots, at, new_slots)
        counts = np.insert(counts, at, np.asarray([a[1] for a in new], dtype=np.int32))
        lengths = np.insert(lengths, at, np.asarray([a[2] for a in new], dtype=np.int32))
    return Postings(slots, counts, lengths)
