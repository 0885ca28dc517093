"""The PostgreSQL store's part for counts, health, token usage, tombstones and ranking fields.

A mixin of :class:`.store.PostgresStore`, kept apart so the store module stays readable. It
uses only the store's ``_reading``/``_writing`` transactions.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, cast

from kioku.adapters.store.postgres import migrations
from kioku.adapters.store.postgres.connection import Conn
from kioku.adapters.store.postgres.queries import where_clause
from kioku.adapters.store.postgres.writes import read_key
from kioku.core.model import Valence
from kioku.core.timefmt import format_ts
from kioku.ports.erasure import Tombstones, keyed_digest
from kioku.ports.store import IntegrityReport, MemoryFilter, ScoringFields, StoreStats

if TYPE_CHECKING:
    from kioku.core.usage import Purpose, Usage, UsageTotal

__all__ = ["ReadsPart"]

#: The bytes of the schema's HNSW indexes (those ``vector_indexes`` names) and of the server's
#: ``shared_buffers``: a walk is fast only while its index's pages are in the latter.
_INDEX_MEMORY: Final = (
    "SELECT COALESCE(SUM(pg_relation_size(to_regclass(quote_ident(current_schema()) || '.' "
    "|| quote_ident(index_name)))), 0), pg_size_bytes(current_setting('shared_buffers')) "
    "FROM vector_indexes WHERE index_name IS NOT NULL"
)

_SIZE: Final = (
    "SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = current_schema() AND c.relkind = 'r'"
)


class ReadsPart:
    """Store methods of counts, health, usage and tombstones."""

    def _reading(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _writing(self) -> AbstractContextManager[Conn]:
        raise NotImplementedError

    def _replica_status(self) -> dict[str, object] | None:
        """The read replica's state (:meth:`.replica.Replica.status`), None without one."""
        raise NotImplementedError

    def scoring_fields(self, memory_ids: Sequence[str]) -> builtins.list[ScoringFields]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return []
        with self._reading() as conn:
            rows = conn.execute(
                "SELECT id, created_utc, retention_score, recall_count, category, "
                "emotional_valence, emotional_arousal, emotional_tags, archived_at, kind, "
                "emotional_intensity, session_id "
                "FROM memories WHERE id = ANY(%s::text[])",
                (ids,),
            ).fetchall()
        return [
            ScoringFields(
                id=str(r[0]),
                created=datetime.fromtimestamp(float(str(r[1])), UTC),
                retention_score=float(str(r[2] or 0.0)),
                recall_count=int(str(r[3] or 0)),
                category=str(r[4]),
                valence=Valence(str(r[5])),
                arousal=int(str(r[6])),
                tags=tuple(str(t) for t in cast("list[object]", r[7] or [])),
                archived=r[8] is not None,
                kind=str(r[9]),
                intensity=int(str(r[10])),
                session_id=None if r[11] is None else str(r[11]),
            )
            for r in rows
        ]

    def stats(self, user_id: str | None, agent_id: str | None) -> StoreStats:
        where, params = where_clause(
            MemoryFilter(user_id=user_id, agent_id=agent_id, kind="episode")
        )
        scope, scope_params = where_clause(MemoryFilter(user_id=user_id, agent_id=agent_id))
        with self._reading() as conn:
            kinds = {
                str(kind): int(str(count))
                for kind, count in conn.execute(
                    f"SELECT kind, COUNT(*) FROM memories{scope} GROUP BY kind", scope_params
                )
            }
            row = conn.execute(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE protected), "
                "COUNT(*) FILTER (WHERE archived_at IS NOT NULL), "
                f"COUNT(*) FILTER (WHERE revival_requested) FROM memories{where}",
                params,
            ).fetchone()
            by_level = {1: 0, 2: 0, 3: 0, 4: 0}
            for level, count in conn.execute(
                f"SELECT current_level, COUNT(*) FROM memories{where} GROUP BY current_level",
                params,
            ):
                by_level[int(str(level))] = int(str(count))
            by_category = {
                str(category): int(str(count))
                for category, count in conn.execute(
                    f"SELECT category, COUNT(*) FROM memories{where} "
                    'GROUP BY category ORDER BY category COLLATE "C"',
                    params,
                )
            }
            size = conn.execute(_SIZE).fetchone()
        total, protected, archived, revival = (int(str(v)) for v in (row or (0, 0, 0, 0)))
        return StoreStats(
            total=total,
            by_level=by_level,
            by_category=by_category,
            protected=protected,
            archived=archived,
            revival_requested=revival,
            size_bytes=0 if size is None else int(str(size[0])),
            by_kind=kinds,
        )

    def check_integrity(self) -> IntegrityReport:
        """The schema version, and relations or vectors that break the schema's rules."""
        problems: list[str] = []
        with self._reading() as conn:
            version = migrations.schema_version(conn)
            dangling = conn.execute(
                "SELECT COUNT(*) FROM relations r WHERE NOT EXISTS "
                "(SELECT 1 FROM memories m WHERE m.id = r.target_id)"
            ).fetchone()
            memory = conn.execute(_INDEX_MEMORY).fetchone()
            unindexed = conn.execute(
                "SELECT COUNT(*) FROM (SELECT DISTINCT embedding_model, embedding_dim "
                "FROM memories WHERE embedding_model IS NOT NULL) AS m WHERE NOT EXISTS "
                "(SELECT 1 FROM vector_indexes v WHERE v.model = m.embedding_model "
                "AND v.dim = m.embedding_dim)"
            ).fetchone()
        broken = 0 if dangling is None else int(str(dangling[0]))
        missing = 0 if unindexed is None else int(str(unindexed[0]))
        if version != migrations.LATEST_VERSION:
            problems.append(
                f"schema version is {version}, expected {migrations.LATEST_VERSION}; fix: open "
                "the store with this kioku to migrate it, or upgrade kioku if it is newer"
            )
        if broken:
            problems.append(f"{broken} relations point at memories that do not exist")
        if missing:
            problems.append(f"{missing} embedding models have vectors but no vector index")
        details: dict[str, object] = {"dangling_relations": broken, "unindexed_models": missing}
        if memory is not None:
            details["vector_index_bytes"] = int(str(memory[0]))
            details["shared_buffers_bytes"] = int(str(memory[1]))
        replica = self._replica_status()
        if replica is not None:
            details["read_replica"] = replica
            problems.extend(_replica_problems(replica))
        return IntegrityReport(
            ok=not problems,
            schema_version=version,
            expected_schema_version=migrations.LATEST_VERSION,
            problems=tuple(problems),
            details=details,
        )

    # -- token usage -------------------------------------------------------------------

    def record_usage(self, usage: Usage) -> None:
        with self._writing() as conn:
            conn.execute(
                "INSERT INTO usage (at, at_utc, provider, model, purpose, input_tokens, "
                "output_tokens) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    format_ts(usage.at),
                    usage.at.timestamp(),
                    usage.provider,
                    usage.model,
                    usage.purpose,
                    max(0, int(usage.input_tokens)),
                    max(0, int(usage.output_tokens)),
                ),
            )

    def usage_totals(self, since: datetime | None = None) -> builtins.list[UsageTotal]:
        from kioku.core.usage import UsageTotal

        with self._reading() as conn:
            rows = conn.execute(
                "SELECT provider, model, purpose, COUNT(*), SUM(input_tokens), "
                "SUM(output_tokens), MIN(at_utc), MAX(at_utc) FROM usage "
                "WHERE at_utc >= %s GROUP BY provider, model, purpose "
                'ORDER BY provider COLLATE "C", model COLLATE "C", purpose COLLATE "C"',
                (since.timestamp() if since else float("-inf"),),
            ).fetchall()
        return [
            UsageTotal(
                provider=str(r[0]),
                model=str(r[1]),
                purpose=cast("Purpose", str(r[2])),
                calls=int(str(r[3])),
                input_tokens=int(str(r[4] or 0)),
                output_tokens=int(str(r[5] or 0)),
                first_at=datetime.fromtimestamp(float(str(r[6])), UTC),
                last_at=datetime.fromtimestamp(float(str(r[7])), UTC),
            )
            for r in rows
        ]

    # -- tombstones --------------------------------------------------------------------

    def tombstones(self) -> Tombstones:
        with self._reading() as conn:
            key = read_key(conn)
            digests = frozenset(str(r[0]) for r in conn.execute("SELECT digest FROM tombstones"))
        return Tombstones(key, digests)

    def add_tombstones(self, source_ids: Sequence[str], at: datetime) -> int:
        with self._writing() as conn:
            key = read_key(conn)
            digests = sorted({keyed_digest(key, source) for source in source_ids})
            if not digests:
                return 0
            return conn.execute(
                "INSERT INTO tombstones (digest, erased_at) "
                "SELECT d, %s FROM unnest(%s::text[]) AS d ON CONFLICT (digest) DO NOTHING",
                (format_ts(at.astimezone(UTC)), digests),
            ).rowcount

    def secret_digest(self, text: str) -> str:
        with self._reading() as conn:
            return keyed_digest(read_key(conn), text)


def _replica_problems(status: dict[str, object]) -> list[str]:
    """What is wrong with the read replica ``status`` describes, each with its fix."""
    where = status.get("where")
    if not status.get("reachable"):
        return [
            f"the read replica {where} does not answer ({status.get('error')}); searches "
            "use the primary meanwhile; fix: start it, or correct or empty store.read_url"
        ]
    found: list[str] = []
    if not status.get("standby"):
        found.append(
            f"the read replica {where} is not a standby (pg_is_in_recovery() is false); "
            "fix: point store.read_url at a streaming replica of the primary"
        )
    if status.get("schema_version") != migrations.LATEST_VERSION:
        found.append(
            f"the read replica {where} has schema version {status.get('schema_version')}, "
            f"expected {migrations.LATEST_VERSION}; searches use the primary until it has "
            "replayed the store's schema; fix: check that it replicates this primary"
        )
    return found
