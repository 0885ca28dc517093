"""The SQLite Store adapter: kioku's default, embedded, single-file store.

One connection per store, in autocommit mode, shared by threads under a re-entrant lock.
Writes run in ``BEGIN IMMEDIATE`` transactions (nested levels become savepoints; see
:mod:`.transactions`), so a failing statement rolls the whole operation back and other
processes wait their turn. The
lexical index (:mod:`.search`) and the vector-cache version (:mod:`.vectors`) change in the
same transaction as the memories they describe. The vectors of a model are cached in process
and, for the next process, in a file beside the database (:mod:`.vector_file`): written after
a search built them from the rows outside any transaction, removed when a memory is erased.
After a write, by this process or another, a cache is brought up to date from the change log
of :mod:`.vector_version` when it can be (:mod:`.vector_log`) rather than loaded again.

The modules for writes and upkeep (:mod:`.writes`, :mod:`.maintenance`), the batch's
(:mod:`.lifecycle`) and numpy's vector cache (:mod:`.vectors`, :mod:`.vector_file`) are
imported when first used: a Claude Code hook opens the store in a fresh process only to read,
and a process that has not loaded numpy searches the cache file with :mod:`.vector_lite`.
"""

from __future__ import annotations

import builtins
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Final

from kioku.adapters.store.sqlite import migrations, originals, rows, search, vector_lite
from kioku.adapters.store.sqlite.codec import decode_text_list, encode_instant
from kioku.adapters.store.sqlite.connection import connect, translating
from kioku.adapters.store.sqlite.queries import (
    SELECT_MEMORIES,
    check_page,
    keyset_clause,
    order_clause,
    placeholders,
    sql_int,
    where_clause,
)
from kioku.adapters.store.sqlite.session_windows import read_windows
from kioku.adapters.store.sqlite.store_consolidation import ConsolidationPart
from kioku.adapters.store.sqlite.store_erasure import ErasurePart
from kioku.adapters.store.sqlite.store_keys import KeysPart
from kioku.adapters.store.sqlite.store_kinds import KindsPart, search_scope
from kioku.adapters.store.sqlite.transactions import ThreadState, TransactionsPart
from kioku.adapters.store.sqlite.vector_layout import cache_dir, file_name
from kioku.adapters.store.sqlite.vector_version import embedding_models, read_version
from kioku.core.model import Memory
from kioku.errors import StoreError, ValidationError
from kioku.ports.erasure import (
    BackupRecord,
    ScrubReport,
)
from kioku.ports.store import (
    IntegrityReport,
    MemoryFilter,
    MemoryPatch,
    ScoringFields,
    StoreStats,
    VectorIndexReport,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from kioku.adapters.store.sqlite import vectors
    from kioku.adapters.store.sqlite.vector_ann_index import AnnIndexes
    from kioku.adapters.store.sqlite.vector_file import VectorFiles
    from kioku.adapters.store.sqlite.writes import VectorDelta
    from kioku.core.lifecycle.links import Link
    from kioku.core.lifecycle.log import LogEntry
    from kioku.core.lifecycle.plan import ArchiveSelect, Snapshot
    from kioku.core.usage import Usage, UsageTotal

__all__ = ["DEFAULT_BUSY_TIMEOUT_MS", "SqliteStore", "open_sqlite_store"]

DEFAULT_BUSY_TIMEOUT_MS: Final = 30_000
_SET_STATE: Final = (
    "INSERT INTO state (key, value) VALUES (?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


#: Held while a store makes its HNSW graph keeper (AnnIndexes), once.
_ANNS_LOCK: Final = threading.Lock()


class SqliteStore(TransactionsPart, KindsPart, ConsolidationPart, KeysPart, ErasurePart):
    """A :class:`~kioku.ports.store.Store` kept in one SQLite file (WAL mode)."""

    def __init__(
        self,
        path: Path,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        ann_min_vectors: int = 0,
    ) -> None:
        self._path = Path(path)
        self._busy_timeout_ms = busy_timeout_ms
        self._ann_min = ann_min_vectors  # see .vector_ann (0: exact search only)
        self._anns: AnnIndexes | None = None
        self._lock = threading.RLock()
        self._depth = 0
        self._local = ThreadState()
        self._side_conn: sqlite3.Connection | None = None
        self._side_lock = threading.RLock()
        #: This transaction's inserts with vectors, to carry the caches over (None: undone).
        self._pending: list[VectorDelta] | None = []
        # model -> the vectors of that model (None: it has none) as of a vectors_version.
        self._vectors: dict[str, tuple[int, vectors.ModelVectors | None]] = {}
        self._files: VectorFiles | None = None
        # Commits made through this store, and the document counts of the last lexical
        # search with the state they were counted in (see _counts).
        self._commits = 0
        self._counted: tuple[tuple[object, ...], tuple[int, dict[str, int]]] | None = None
        # Inside reading(); the vector cache a search inside it has yet to write to its file.
        self._snapshot = False
        self._deferred: tuple[int, vectors.ModelVectors] | None = None
        conn = connect(self._path, busy_timeout_ms)
        try:
            with translating(self._path):
                migrations.migrate(conn)
        except BaseException:
            conn.close()
            raise
        self._conn: sqlite3.Connection | None = conn

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self._path

    @property
    def _vector_files(self) -> VectorFiles:
        if self._files is None:
            from kioku.adapters.store.sqlite.vector_file import VectorFiles

            self._files = VectorFiles(self._path)
        return self._files

    @property
    def schema_version(self) -> int:
        with self._reading() as conn:
            return migrations.schema_version(conn)

    def close(self) -> None:
        if self._anns is not None:
            self._anns.close()  # a graph build in the background stops, unfinished
        with self._lock:
            if self._conn is not None:
                conn, self._conn = self._conn, None
                self._depth = 0
                self._vectors.clear()
                with suppress(sqlite3.Error):
                    conn.close()
        self._close_side()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SqliteStore({str(self._path)!r})"

    # -- writes ------------------------------------------------------------------------

    def add(self, memory: Memory) -> None:
        self.add_many([memory])

    def add_many(self, memories: Sequence[Memory]) -> None:
        if not memories:
            return
        from kioku.adapters.store.sqlite import writes

        inserts = writes.prepare_inserts(memories)
        with self._writing() as conn:
            # A cache is only kept at depth 0 under this lock: none now, none at the commit.
            delta = inserts.run(conn, track=bool(self._vectors))
            if delta is not None and self._pending is not None:
                self._pending.append(delta)

    def update(self, memory_id: str, patch: MemoryPatch) -> bool:
        from kioku.adapters.store.sqlite import writes

        prepared = writes.prepare_update(patch)
        with self._writing() as conn:
            return prepared.run(conn, memory_id)

    def delete(self, memory_id: str) -> bool:
        from kioku.adapters.store.sqlite import writes

        with self._writing() as conn:
            deleted = writes.delete_memory(conn, memory_id)
        if deleted:
            # The version already rules the files out; removing them also takes the erased
            # memory's vector off the disk now rather than at the next search.
            self._vector_files.remove()
        return deleted

    def mark_recalled(self, memory_ids: Sequence[str], at: datetime | None = None) -> int:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return 0
        seen = encode_instant(datetime.now(UTC) if at is None else at, "at")
        marked = 0
        with self._writing() as conn:
            now = rows.now_text()
            for chunk in rows.chunks(ids):
                cursor = conn.execute(
                    "UPDATE memories SET recalled_since_last_batch = 1, updated_at = ?, "
                    "last_access_utc = MAX(COALESCE(last_access_utc, ?), ?) "
                    f"WHERE archived_at IS NULL AND id IN ({placeholders(len(chunk))})",
                    (now, seen, seen, *chunk),
                )
                marked += cursor.rowcount
        return marked

    def set_state(self, key: str, value: str) -> None:
        with self._lock:
            if self._depth == 0:
                with self._writing() as conn:
                    conn.execute(_SET_STATE, (key, value))
                return
            # One statement inside a transaction is all or nothing by itself: no savepoint.
            with translating(self._path):
                self._connection().execute(_SET_STATE, (key, value))

    def record_usage(self, usage: Usage) -> None:
        from kioku.adapters.store.sqlite import usage as usage_rows

        with self._writing() as conn:
            usage_rows.insert_usage(conn, usage)

    # -- reads -------------------------------------------------------------------------

    def usage_totals(self, since: datetime | None = None) -> builtins.list[UsageTotal]:
        from kioku.adapters.store.sqlite import usage as usage_rows

        with self._reading() as conn:
            return usage_rows.usage_totals(conn, since)

    def get(self, memory_id: str) -> Memory | None:
        hits = self.get_many([memory_id])
        return hits[0] if hits else None

    def get_many(self, memory_ids: Sequence[str]) -> list[Memory]:
        """The memories that exist among ``memory_ids``, in the order asked, once each."""
        ids = list(dict.fromkeys(memory_ids))
        by_id: dict[str, Memory] = {}
        with self._reading() as conn:
            for chunk in rows.chunks(ids):
                found = conn.execute(
                    f"{SELECT_MEMORIES} WHERE id IN ({placeholders(len(chunk))})", tuple(chunk)
                ).fetchall()
                by_id.update((m.id, m) for m in rows.decode_rows(conn, found))
        return [by_id[i] for i in ids if i in by_id]

    def scoring_fields(self, memory_ids: Sequence[str]) -> builtins.list[ScoringFields]:
        with self._reading() as conn:
            return rows.scoring_fields(conn, list(dict.fromkeys(memory_ids)))

    def session_windows(
        self, flt: MemoryFilter, windows: Sequence[tuple[str, datetime, datetime]]
    ) -> builtins.list[builtins.list[tuple[str, datetime]]]:
        with self._reading() as conn:
            return read_windows(conn, flt, windows)

    def list(self, flt: MemoryFilter) -> list[Memory]:
        check_page(flt.limit, flt.offset)
        where, params = where_clause(flt)
        limit = -1 if flt.limit is None else sql_int(flt.limit)
        with self._reading() as conn:
            found = conn.execute(
                f"{SELECT_MEMORIES}{where}{order_clause(flt.order)} LIMIT ? OFFSET ?",
                (*params, limit, sql_int(flt.offset)),
            ).fetchall()
            return rows.decode_rows(conn, found)

    def source_ids(self, flt: MemoryFilter) -> set[str]:
        where, params = where_clause(flt)
        clause = f"{where} AND" if where else " WHERE"
        sql = f"SELECT id, source_ids FROM memories{clause} source_ids != '[]'"
        found: set[str] = set()
        with self._reading() as conn:
            for memory_id, raw in conn.execute(sql, params):
                found.update(decode_text_list(raw, str(memory_id), "source_ids"))
        return found

    def same_text(self, trigger: str, content: str, flt: MemoryFilter) -> builtins.list[str]:
        where, params = where_clause(flt)
        clause = f"{where} AND" if where else " WHERE"
        # A duplicate check looks in a window of time: its index beats the owner's, which
        # would read every memory the owner has.
        bounded = flt.created_after is not None and flt.created_before is not None
        table = "memories INDEXED BY idx_memories_created_utc" if bounded else "memories"
        sql = f"SELECT id FROM {table}{clause} trigger = ? AND content = ? ORDER BY id"
        with self._reading() as conn:
            return [str(row[0]) for row in conn.execute(sql, (*params, trigger, content))]

    def iter(self, flt: MemoryFilter, batch_size: int = 1000) -> Iterator[Memory]:
        """Pages by key (``(order key, id)`` after the last row), not by offset, so rows
        added or removed between pages never cause skips or repeats of the others."""
        check_page(flt.limit, flt.offset)
        if isinstance(batch_size, bool) or batch_size < 1:
            raise ValidationError("batch_size", batch_size, "a positive integer")
        where, params = where_clause(flt)
        key, after_clause = keyset_clause(flt.order)
        order = order_clause(flt.order)
        remaining = flt.limit
        offset = sql_int(flt.offset)
        after: tuple[object, str] | None = None
        while remaining is None or remaining > 0:
            size = batch_size if remaining is None else min(batch_size, remaining)
            clause, values = where, list(params)
            if after is not None:
                clause = f"{where} AND {after_clause}" if where else f" WHERE {after_clause}"
                values.extend(after)
            with self._reading() as conn:
                found = conn.execute(
                    f"{SELECT_MEMORIES}{clause}{order} LIMIT ? OFFSET ?", (*values, size, offset)
                ).fetchall()
                page = rows.decode_rows(conn, found)
            yield from page
            if len(found) < size:
                return
            after = (found[-1][key], str(found[-1]["id"]))
            offset = 0
            if remaining is not None:
                remaining -= len(found)

    def count(self, flt: MemoryFilter) -> int:
        """How many memories match; ``limit``, ``offset`` and ``order`` are ignored."""
        where, params = where_clause(flt)
        with self._reading() as conn:
            return int(conn.execute(f"SELECT COUNT(*) FROM memories{where}", params).fetchone()[0])

    def referencing(self, memory_id: str) -> builtins.list[str]:
        with self._reading() as conn:
            found = conn.execute(
                "SELECT source_id FROM relations WHERE target_id = ? ORDER BY source_id",
                (memory_id,),
            ).fetchall()
        return [str(row[0]) for row in found]

    def referencing_many(self, memory_ids: Sequence[str]) -> dict[str, builtins.list[str]]:
        with self._reading() as conn:
            return rows.referencing_many(conn, list(dict.fromkeys(memory_ids)))

    def get_state(self, key: str) -> str | None:
        with self._reading() as conn:
            row = conn.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    # -- search ------------------------------------------------------------------------

    def search_lexical(
        self, terms: Sequence[str], flt: MemoryFilter, limit: int
    ) -> builtins.list[tuple[str, float]]:
        check_page(limit, 0)
        where, params = where_clause(search_scope(flt))
        scope = " AND " + where.removeprefix(" WHERE ") if where else ""
        with self._reading() as conn:
            query = search.plan(conn, terms, counted=self._counts(conn, terms))
            return search.search(conn, query, scope, params, limit) if query else []

    def term_documents(self, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        with self._reading() as conn:
            memories, documents = self._counts(conn, terms)
            return memories, dict(documents)

    def _counts(self, conn: sqlite3.Connection, terms: Sequence[str]) -> tuple[int, dict[str, int]]:
        """:func:`search.documents` of ``terms``, counted once for a search and the coverage
        that follows it: kept while no commit has changed the database since (``data_version``
        sees other connections' commits, ``_commits`` this one's)."""
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        key: tuple[object, ...] = (tuple(terms), version, self._commits)
        if self._counted is not None and self._counted[0] == key:
            return self._counted[1]
        counts = search.documents(conn, terms)
        self._counted = (key, counts)
        return counts

    def known_terms(
        self, terms: Sequence[str], flt: MemoryFilter, limit: int | None = None
    ) -> frozenset[str]:
        check_page(limit, 0)
        where, params = where_clause(search_scope(flt))
        scope = " AND " + where.removeprefix(" WHERE ") if where else ""
        with self._reading() as conn:
            return search.known(conn, terms, scope, params, limit)

    def indexed_terms(self, memory_ids: Sequence[str]) -> dict[str, frozenset[str]]:
        with self._reading() as conn:
            return search.indexed_terms(conn, memory_ids)

    def _scoped_vector_search(
        self,
        model: str,
        query: Sequence[float],
        flt: MemoryFilter,
        limit: int,
        *,
        save: bool = False,
    ) -> builtins.list[tuple[str, float]]:
        check_page(limit, 0)
        persist = False
        # On the second connection (see _beside) no transaction of this store's is open.
        side = self._local.side
        depth = 0 if side else self._depth
        with self._reading() as conn:
            version = read_version(conn)
            cached = self._vectors.get(model)
            stale = cached is None or cached[0] != version
            if stale and "numpy" not in sys.modules and not save:
                # The file at this version holds exactly this snapshot's vectors.
                directory = cache_dir(self._path)
                found = vector_lite.search(
                    None if directory is None else directory / file_name(model),
                    model,
                    version,
                    query,
                    flt.user_id,
                    flt.agent_id,
                    flt.archived,
                    limit,
                )
                if found is not None:
                    return found
            from kioku.adapters.store.sqlite import vector_log, vectors

            if cached is None or cached[0] != version:
                # Brought up to date from the change log when it can be (see .vector_log).
                fresh = vector_log.refresh(conn, model, version, cached, self._vector_files)
                came = None if fresh is None else fresh.loaded_from
                # Written when built from the rows, or caught up from an older file by a
                # process without a cache of its own (so the next process maps it again).
                write = came == "sqlite" or (came == "log" and (save or cached is None))
                cached = (version, fresh)
                # Inside atomic() the snapshot may yet roll back: use it, never keep it.
                if depth == 0 and version >= 0:
                    self._vectors[model] = cached
                    persist = write
            elif save and cached[1] is not None and cached[1].loaded_from in ("delta", "log"):
                # Carried over writes: only written when asked (see .vector_delta, .vector_log).
                persist = depth == 0
        # The matrix is never changed once built: write it and multiply outside the lock.
        if cached[1] is None:
            return []
        if persist and self._snapshot and not side:
            self._deferred = (cached[0], cached[1])
        elif persist:
            self._persist((cached[0], cached[1]))
        if save:
            return []
        if 0 < self._ann_min <= cached[1].size:  # an HNSW graph's candidates, scored exactly
            found = self._ann_indexes.search(cached[0], cached[1], query, flt, limit)
            if found is not None:
                return found
        return vectors.top_matches(cached[1], query, flt.user_id, flt.agent_id, flt.archived, limit)

    @property
    def _ann_indexes(self) -> AnnIndexes:
        if self._anns is None:
            from kioku.adapters.store.sqlite.vector_ann_index import AnnIndexes

            # Searches on two threads (one beside the other, see _beside) make one, not two.
            with _ANNS_LOCK:
                if self._anns is None:
                    self._anns = AnnIndexes(self._ann_min, self._vector_files, self)
        return self._anns

    def ann_snapshot(self, model: str) -> tuple[int, vectors.ModelVectors] | None:
        """The version and cache of ``model`` now, its file written (for the graph builder)."""
        self._scoped_vector_search(model, (), MemoryFilter(), 1, save=True)
        cached = self._vectors.get(model)
        return None if cached is None or cached[1] is None else (cached[0], cached[1])

    @contextmanager
    def ann_unerased(self, since: int) -> Iterator[int | None]:
        """Holding the store's lock: the version now when no memory was deleted since the
        version ``since`` (the change log tells), else None (for the graph builder)."""
        from kioku.adapters.store.sqlite.vector_ann_files import erased_since

        with self._reading() as conn:
            now = read_version(conn)
            yield None if erased_since(conn, since, now) else now

    def _persist(self, cached: tuple[int, vectors.ModelVectors]) -> None:
        """Write the cache of a version to its file, outside any transaction."""
        if self._vector_files.write(cached[1]) is not None:
            with self._reading() as conn:
                changed = read_version(conn) != cached[0]
            if changed:
                # A write came while the file was made (an erasure, perhaps, whose removal of
                # the files ran before this one was renamed into place): take it away again.
                self._vector_files.remove()

    def save_vector_cache(self, model: str, *, wait: bool = False) -> None:
        """Load the cache (a search that finds nothing) and write its file if the cache came
        from the rows or from this store's own inserts (a mapped file is already there).
        Past ``ann_min_vectors``, its HNSW graph is built, grown or written in a background
        thread (see .vector_ann_index); ``wait``: return when that is done."""
        cached = self.ann_snapshot(model)
        if cached is not None and 0 < self._ann_min <= cached[1].size:
            self._ann_indexes.save(cached[0], cached[1], wait=wait)

    def wait_vector_graphs(self, model: str | None = None, timeout: float | None = None) -> bool:
        """Wait until the HNSW graph work in the background (building, checking a saved
        graph) for ``model`` (None: every model) is done; False on ``timeout``."""
        return True if self._anns is None else self._anns.wait(model, timeout)

    def embedding_models(self, flt: MemoryFilter) -> dict[str | None, int]:
        where, params = where_clause(search_scope(flt))
        with self._reading() as conn:
            return embedding_models(conn, where, params)

    # -- the batch and its log --------------------------------------------------------

    def batch_snapshot(self, until: datetime, select: ArchiveSelect | None = None) -> Snapshot:
        from kioku.adapters.store.sqlite import lifecycle

        with self._reading() as conn:
            return lifecycle.read_snapshot(conn, until, select)

    def write_scores(
        self,
        ids: Sequence[str],
        memory_days: Sequence[float],
        coefficient: Sequence[float],
        recall_count: Sequence[int],
        score: Sequence[float],
    ) -> None:
        from kioku.adapters.store.sqlite import lifecycle

        with self._writing() as conn:
            lifecycle.write_scores(conn, ids, memory_days, coefficient, recall_count, score)

    def add_links(self, links: Sequence[Link], at: datetime) -> None:
        from kioku.adapters.store.sqlite import lifecycle

        if links:
            with self._writing() as conn:
                lifecycle.add_links(conn, links, at)

    def remove_links(self, pairs: Sequence[tuple[str, str]]) -> None:
        from kioku.adapters.store.sqlite import lifecycle

        if pairs:
            with self._writing() as conn:
                lifecycle.remove_links(conn, pairs)

    def link_vectors(
        self, model: str, user_id: str, agent_id: str, ids: Sequence[str] | None
    ) -> tuple[builtins.list[str], npt.NDArray[np.float32]]:
        from kioku.adapters.store.sqlite import lifecycle

        with self._reading() as conn:
            return lifecycle.read_vectors(conn, model, user_id, agent_id, ids)

    def append_log(self, entries: Sequence[LogEntry]) -> None:
        from kioku.adapters.store.sqlite import lifecycle

        if entries:
            with self._writing() as conn:
                lifecycle.append_log(conn, entries)

    def read_log(
        self,
        *,
        memory_id: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        since: datetime | None = None,
        events: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> builtins.list[LogEntry]:
        if limit is not None:
            check_page(limit, 0)
        from kioku.adapters.store.sqlite import lifecycle

        with self._reading() as conn:
            return lifecycle.read_log(
                conn,
                memory_id=memory_id,
                user_id=user_id,
                agent_id=agent_id,
                since=since,
                events=events,
                limit=limit,
            )

    # -- upkeep ------------------------------------------------------------------------

    def stats(self, user_id: str | None, agent_id: str | None) -> StoreStats:
        from kioku.adapters.store.sqlite import maintenance

        where, params = where_clause(
            MemoryFilter(user_id=user_id, agent_id=agent_id, kind="episode")
        )
        scope, scope_params = where_clause(MemoryFilter(user_id=user_id, agent_id=agent_id))
        with self._reading() as conn:
            kinds = {
                str(kind): int(count)
                for kind, count in conn.execute(
                    f"SELECT kind, COUNT(*) FROM memories{scope} GROUP BY kind", scope_params
                )
            }
            return maintenance.stats(conn, self._path, where, params, kinds)

    def check_integrity(self) -> IntegrityReport:
        from kioku.adapters.store.sqlite import maintenance
        from kioku.adapters.store.sqlite.vector_file import damaged_files, graph_bytes

        with self._lock:
            report = maintenance.integrity_report(self._connection(), self._path)
            try:
                with self._reading() as conn:
                    problems, details = search.consistency_problems(conn)
            except StoreError as exc:
                problems = [f"{exc.message}; fix: {exc.hint}" if exc.hint else exc.message]
                details = {}
            problems = [*problems, *damaged_files(self._path)]
        details["vector_graph_bytes"] = graph_bytes(self._path)
        return replace(
            report,
            ok=report.ok and not problems,
            problems=(*report.problems, *problems),
            details={**report.details, **details},
        )

    def backup(self, target: Path, *, overwrite: bool = False) -> BackupRecord:
        """Copy the store to ``target`` and record in the backups manifest what it holds."""
        from kioku.adapters.store.sqlite import erasure, maintenance

        with self._lock:
            self._outside_atomic("a backup")
            held = maintenance.backup_into(
                self._connection(), self._path, Path(target), overwrite=overwrite
            )
            with self._writing() as conn:
                return erasure.record_backup(
                    conn, str(Path(target).resolve()), erasure.utc_now(), held
                )

    # -- erasure (schema version 6) -----------------------------------------------------

    def _outside_atomic(self, what: str) -> None:
        if self._depth > 0:
            raise StoreError(f"{what} cannot run inside atomic()", hint="call it outside")

    def delete_many(self, memory_ids: Sequence[str]) -> int:
        from kioku.adapters.store.sqlite import writes

        with self._writing() as conn:
            deleted = sum(writes.delete_memory(conn, i) for i in dict.fromkeys(memory_ids))
        if deleted:
            self._vector_files.remove()
        return deleted

    def scrub(self) -> ScrubReport:
        """After an erasure: merge the lexical index, then truncate the write-ahead log."""
        from kioku.adapters.store.sqlite import erasure

        with self._lock:
            self._outside_atomic("scrubbing")
            with self._writing() as conn:
                erasure.merge_index(conn)
                originals.merge_index(conn)
            with translating(self._path):
                truncated, detail = erasure.checkpoint_truncate(
                    self._connection(), self._busy_timeout_ms
                )
            self._vector_files.remove()
        return ScrubReport(
            index_merged=True,
            wal_truncated=truncated,
            wal_detail=detail,
            vector_files_removed=True,
        )

    def vacuum(self) -> tuple[int, int, ScrubReport]:
        """Merge the index, rebuild the file without free pages, truncate the log: the
        sizes in bytes (database plus log) before and after."""
        from kioku.adapters.store.sqlite import maintenance

        with self._lock:
            self._outside_atomic("vacuum")
            before = maintenance.size_bytes(self._path)
            with translating(self._path):
                self._connection().execute("VACUUM")
            report = self.scrub()
            return before, maintenance.size_bytes(self._path), report

    def reindex(
        self,
        model: str | None = None,
        *,
        force: bool = False,
        dry_run: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> builtins.list[VectorIndexReport]:
        """Nothing to build again (:func:`.maintenance.vector_index_reports`): each model's
        vectors as they are searched. The options change nothing here."""
        from kioku.adapters.store.sqlite import maintenance

        self._outside_atomic("reindex")
        with self._reading() as conn:
            return maintenance.vector_index_reports(conn, model, self._ann_min)


def open_sqlite_store(
    path: Path, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS, ann_min_vectors: int = 0
) -> SqliteStore:
    """Open (creating and migrating as needed) the SQLite store at ``path``; past
    ``ann_min_vectors`` vectors of a model (0: never), long queries use an HNSW graph."""
    return SqliteStore(path, busy_timeout_ms=busy_timeout_ms, ann_min_vectors=ann_min_vectors)
