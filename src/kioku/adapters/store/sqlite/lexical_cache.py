"""An in-process copy of the lexical index that ranks by BM25 exactly as FTS5's ``bm25()``.

FTS5 ranks a match by reading the whole posting list of each query term (for its IDF) and
then, for every matching row, its token count from another table: about 4 µs a row, so a
query whose terms are in a few thousand memories costs tens of milliseconds. This module
keeps, per database file, a :class:`~.lexical_snapshot.Snapshot` of the index: every term's
postings (slot, occurrences, row length) in numpy arrays, built once from the index's rows,
scored with the same floating-point operations in the same order as FTS5's ``bm25()``
(:meth:`~.lexical_snapshot.Snapshot.rank`), so scores are equal to the last bit and ties
keep FTS5's order (ascending slot).

A snapshot describes the index as of a *key*: the ``lexical_version`` value in the ``state``
table and FTS5's structure record, which changes with any write to the index that reaches
the database, whoever made it. Every write through :mod:`.search` sets that value, in its own
transaction, to a log of the last few writes: each with a fresh random version and the slots
it changed. A random version does not come back after a rolled-back write, so a snapshot
taken inside a transaction that was later undone never matches a later state. When the key
differs, the rows of the slots the log names are read again and applied; when the log does
not reach back to the snapshot (too many writes since, or a merge of the index), every row is
read again (one scan) and only the rows whose text changed are tokenized and applied.

Only stores of at most :data:`MAX_MEMORIES` memories are copied: a copy holds every row's
text and 16 bytes a posting (18 MB for the 36,500 short memories of
``benchmarks/recall_scale.py``); larger stores rank with FTS5 alone.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Collection
from typing import TYPE_CHECKING, Final

from kioku.adapters.store.sqlite.lexical_tokens import Tokenizer

# The snapshot loads numpy: a process that searches once (a hook's) never imports it.
if TYPE_CHECKING:
    from kioku.adapters.store.sqlite.lexical_snapshot import Key, Row, Snapshot

__all__ = ["LEXICAL_VERSION", "MAX_MEMORIES", "bump_version", "current", "forget"]

#: The ``state`` key whose value changes with every write to the lexical index: the last
#: writes, oldest first, separated by ``;``, each ``<version before> <version after>
#: <changed slots, comma-separated>`` (``-`` for no version or too many slots). Versions are
#: random, so a value never comes back.
LEXICAL_VERSION: Final = "lexical_version"
_LINKS: Final = ";"
_NONE: Final = "-"
_MAX_LINKS: Final = 8
_MAX_LINK_SLOTS: Final = 16
#: Largest store (by its largest memory rowid) whose index is cached.
MAX_MEMORIES: Final = 100_000
#: Caches kept per process (one per database file).
_MAX_CACHES: Final = 4
#: When more than this share of the rows changed, the snapshot is built again from scratch.
_REBUILD_SHARE: Final = 0.25
#: The rowid of FTS5's structure record in the ``_data`` table.
_STRUCTURE_ID: Final = 10
_KEY_SQL: Final = (
    "SELECT (SELECT value FROM state WHERE key = ?), "
    "(SELECT block FROM memories_fts_data WHERE id = ?)"
)


def bump_version(conn: sqlite3.Connection, slots: Collection[int]) -> None:
    """Log a write to the lexical index that changed ``slots`` under a fresh random version
    (see :data:`LEXICAL_VERSION`); call inside the write's transaction, after it."""
    row = conn.execute("SELECT value FROM state WHERE key = ?", (LEXICAL_VERSION,)).fetchone()
    raw = None if row is None else str(row[0])
    links = [] if raw is None else raw.split(_LINKS)
    if len(links) >= _MAX_LINKS:
        del links[: len(links) - _MAX_LINKS + 1]
    before = _version(raw)
    logged = ",".join(map(str, sorted(slots))) if len(slots) <= _MAX_LINK_SLOTS else _NONE
    after = str(int.from_bytes(os.urandom(8), "big") >> 2)
    links.append(f"{_NONE if before is None else before} {after} {logged}")
    conn.execute(
        "INSERT INTO state (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (LEXICAL_VERSION, _LINKS.join(links)),
    )


#: A logged write: the version before it (None: none was set), the version after it and
#: the slots it changed (None: too many to log).
Link = tuple[str | None, str, list[int] | None]


def _links(raw: str | None) -> list[Link] | None:
    """The writes a ``lexical_version`` value logs; None when it is missing or unreadable."""
    if raw is None:
        return None
    links: list[Link] = []
    for text in raw.split(_LINKS):
        parts = text.split(" ")
        if len(parts) != 3:
            return None
        before, after, slots = parts
        if not (
            (before.isdigit() or before == _NONE)
            and after.isdigit()
            and (slots == _NONE or all(slot.isdigit() for slot in slots.split(",")))
        ):
            return None
        links.append(
            (
                None if before == _NONE else before,
                after,
                None if slots == _NONE else [int(slot) for slot in slots.split(",")],
            )
        )
    return links


def _version(raw: str | None) -> str | None:
    """The version a ``lexical_version`` value names: its last write's (the value itself
    when it is not such a log)."""
    if raw is None:
        return None
    last = raw.rpartition(_LINKS)[2].split(" ")
    return last[1] if len(last) == 3 and last[1].isdigit() else raw


def _touched(since: object, now: object) -> set[int] | None:
    """The slots the writes from the ``lexical_version`` value ``since`` to ``now`` changed,
    from the log in ``now``; None when it does not lead from one to the other (writes too
    many or too large to log, or a value older code left)."""
    if not (since is None or isinstance(since, str)) or not isinstance(now, str):
        return None
    links = _links(now)
    if links is None:
        return None
    version = _version(since)
    starts = [i for i, (before, _, _) in enumerate(links) if before == version]
    if not starts:
        return None
    touched: set[int] = set()
    for before, after, slots in links[starts[-1] :]:
        if before != version or slots is None:
            return None
        touched.update(slots)
        version = after
    return touched


class _Cache:
    __slots__ = ("asked", "lock", "snapshot", "tokenizer")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshot: Snapshot | None = None
        self.tokenizer = Tokenizer()
        self.asked = 0  # searches that found no snapshot


_caches: OrderedDict[str, _Cache] = OrderedDict()
_caches_lock = threading.Lock()


def _database(conn: sqlite3.Connection) -> str | None:
    for _, name, file in conn.execute("PRAGMA database_list"):
        if name == "main":
            return str(file) if file else None
    return None  # pragma: no cover - every connection has a main database


def forget(conn: sqlite3.Connection) -> None:
    """Drop the cache of ``conn``'s database file (tests; memory)."""
    path = _database(conn)
    with _caches_lock:
        if path is not None:
            _caches.pop(path, None)


def current(
    conn: sqlite3.Connection, memories: int, build_after: int | None = 0
) -> Snapshot | None:
    """The snapshot of the lexical index as ``conn`` sees it now (brought up to date when
    the index changed), or None when the store holds more than :data:`MAX_MEMORIES`
    memories (``memories``: its largest rowid) or is not a file.

    Building the first snapshot of a file reads and tokenizes every row (0.3-0.5 s at
    36,500 memories), more than FTS5 takes for a few queries, so it is built only when
    ``build_after`` earlier calls found none (None: never; the caller then asks FTS5): a
    process that searches once or twice, such as a hook's, never pays for it."""
    if memories > MAX_MEMORIES:
        return None
    path = _database(conn)
    if path is None:
        return None
    with _caches_lock:
        cache = _caches.get(path)
        if cache is None:
            cache = _caches[path] = _Cache()
            while len(_caches) > _MAX_CACHES:
                _caches.popitem(last=False)
        else:
            _caches.move_to_end(path)
    version, structure = conn.execute(_KEY_SQL, (LEXICAL_VERSION, _STRUCTURE_ID)).fetchone()
    key: Key = (version, None if structure is None else bytes(structure))
    snap = cache.snapshot
    if snap is not None and snap.key == key:
        return snap
    if snap is None:
        if build_after is None:
            return None
        with cache.lock:
            cache.asked += 1
            if cache.asked <= build_after:
                return None
    with cache.lock:
        snap = cache.snapshot
        if snap is None or snap.key != key:
            snap = _refreshed(conn, key, snap, cache.tokenizer)
            cache.snapshot = snap
        return snap


def _refreshed(
    conn: sqlite3.Connection, key: Key, old: Snapshot | None, tokenizer: Tokenizer
) -> Snapshot:
    """The snapshot of the index ``conn`` sees: ``old`` with the rows the log says changed
    applied, else with the rows that differ (read all) applied, or a new one when there is
    none or too much changed."""
    from kioku.adapters.store.sqlite.lexical_snapshot import applied, built

    if old is not None and old.key[0] != key[0]:
        touched = _touched(old.key[0], key[0])
        if touched is not None:
            changes: dict[int, Row | None] = dict.fromkeys(touched)
            found = conn.execute(
                "SELECT f.rowid, f.memory_id, f.terms FROM json_each(?) AS wanted "
                "CROSS JOIN memories_fts AS f ON f.rowid = wanted.value",
                (json.dumps(sorted(touched)),),
            )
            for slot, memory_id, text in found:
                changes[int(slot)] = (str(memory_id), str(text))
            return applied(key, old, changes, tokenizer)
    cursor = conn.cursor()
    cursor.row_factory = None
    rows = {
        int(slot): (str(memory_id), str(text))
        for slot, memory_id, text in cursor.execute(
            "SELECT rowid, memory_id, terms FROM memories_fts"
        )
    }
    cursor.close()
    if old is None:
        return built(key, rows, tokenizer)
    before = old.rows
    changes = {slot: row for slot, row in rows.items() if before.get(slot) != row}
    changes.update((slot, None) for slot in before if slot not in rows)
    if len(changes) > _REBUILD_SHARE * max(len(rows), 1):
        return built(key, rows, tokenizer)
    return applied(key, old, changes, tokenizer)
