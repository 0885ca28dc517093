"""The nightly batch: plan each due day (kioku.core.lifecycle), then apply it in one transaction.

Order of one day, as spec 000's 圧縮処理の内容 lays it out: recall reinforcement or +1 day,
retention, threshold compression with re-embedding, ratio enforcement, archive, relation
integrity and direction, auto-linking, revival of requested archived memories, auto-delete,
and the day is recorded as done. Everything of one day is written in one transaction together
with the record that the day is done, so a kill at any moment leaves either the whole day or
none of it, and running again applies each day exactly once.

Compressing with a real LLM takes time, so the texts are made before the transaction from a
first plan and reused inside it when the memory has not changed meanwhile; the transaction
re-reads and re-plans, so recalls and new memories that arrive in between are never lost.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np

from kioku.core.lifecycle.days import (
    MAX_CATCH_UP_DAYS,
    batch_moment,
    due_days,
    latest_due_day,
)
from kioku.core.lifecycle.links import Link, LinkChanges, Node, auto_links, review_links
from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.lifecycle.plan import DayPlan, Snapshot, Transition, plan_day
from kioku.core.model import Embedding, Level, Memory
from kioku.core.timefmt import format_ts, parse_ts
from kioku.errors import KiokuError
from kioku.ports.analyzer import Compressed
from kioku.ports.store import MemoryPatch

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = [
    "LAST_DAY_KEY",
    "LAST_RUN_KEY",
    "BatchLockedError",
    "BatchReport",
    "DaySummary",
    "batch_lock",
    "run_batches",
]

_log = logging.getLogger(__name__)

#: ``state`` keys: the date of the last day applied, and when a batch last finished (spec).
LAST_DAY_KEY: Final = "batch_last_day"
LAST_RUN_KEY: Final = "last_compression_run"

Progress = Callable[[str, int, int], None]


class BatchLockedError(KiokuError):
    """Another batch holds the lock."""


@dataclass(slots=True)
class DaySummary:
    """What one replayed day of the batch did."""

    day: str
    moment: str
    memories: int = 0
    reinforced: int = 0
    compressed: dict[str, int] = field(default_factory=dict)  # "1->2": n
    archived: int = 0
    ratio_forced: int = 0
    revived: int = 0
    revivals_deferred: int = 0
    deleted: int = 0
    linked: int = 0
    unlinked: int = 0
    turned: int = 0
    shares: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "day": self.day,
            "moment": self.moment,
            "memories": self.memories,
            "reinforced": self.reinforced,
            "compressed": dict(self.compressed),
            "archived": self.archived,
            "ratio_forced": self.ratio_forced,
            "revived": self.revived,
            "revivals_deferred": self.revivals_deferred,
            "deleted": self.deleted,
            "linked": self.linked,
            "unlinked": self.unlinked,
            "turned": self.turned,
            "shares": self.shares,
            "seconds": round(self.seconds, 3),
        }


@dataclass(slots=True)
class BatchReport:
    """What a batch run did, day by day."""

    status: str  # "done", "up_to_date", "already_running", "dry_run"
    days: list[DaySummary] = field(default_factory=list)
    due: list[str] = field(default_factory=list)
    last_day: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "status": self.status,
            "due": list(self.due),
            "last_day": self.last_day,
            "days": [d.to_dict() for d in self.days],
        }


@contextlib.contextmanager
def batch_lock(path: Path | None) -> Iterator[None]:
    """An exclusive, non-blocking lock on ``path`` (released by the OS if the process dies)."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            _lock_fd(fd)
        except OSError as exc:
            raise BatchLockedError("a batch is already running", hint="wait for it") from exc
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        os.close(fd)


def _lock_fd(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def last_day(kioku: Kioku) -> date | None:
    """The last batch day applied; for a store whose batches ran before kioku kept the day
    (spec 000 keeps only ``last_compression_run``), the day that run belonged to."""
    raw = kioku.store.get_state(LAST_DAY_KEY)
    if raw is not None:
        with contextlib.suppress(ValueError):
            return date.fromisoformat(raw)
    run = last_run(kioku)
    if run is None:
        return None
    return latest_due_day(run, kioku.config.compression.schedule_hour)


def last_run(kioku: Kioku) -> datetime | None:
    raw = kioku.store.get_state(LAST_RUN_KEY)
    try:
        return None if raw is None else parse_ts(raw, kioku.clock.now().tzinfo or UTC)
    except ValueError:
        return None


def run_batches(
    kioku: Kioku,
    *,
    now: datetime | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
    lock_path: Path | None = None,
) -> BatchReport:
    """Apply every due batch day up to ``now`` (default: the clock), oldest first."""
    moment_now = now or kioku.clock.now()
    hour = kioku.config.compression.schedule_hour
    try:
        with batch_lock(lock_path):
            done = last_day(kioku)
            days = due_days(done, moment_now, hour)
            if done is not None and days and (days[0] - done).days > 1:
                skipped = (days[0] - done).days - 1
                message = (
                    f"the last batch day was {done.isoformat()}: catching up at most "
                    f"{MAX_CATCH_UP_DAYS} days, so {skipped} older day(s) are not replayed"
                )
                if kioku.on_warning is not None:
                    kioku.on_warning(message)
                _log.warning("%s", message)
            report = BatchReport(
                status="up_to_date" if not days else ("dry_run" if dry_run else "done"),
                due=[d.isoformat() for d in days],
                last_day=None if done is None else done.isoformat(),
            )
            if dry_run:
                if days:
                    report.days.append(_dry_run(kioku, days[0], moment_now))
                return report
            for n, day in enumerate(days):
                if progress is not None:
                    progress(f"day {day.isoformat()}", n, len(days))
                summary = _run_day(kioku, day, moment_now)
                if summary is not None:
                    report.days.append(summary)
                    report.last_day = summary.day
            return report
    except BatchLockedError:
        return BatchReport(status="already_running")


def _plan(kioku: Kioku, day: date, like: datetime) -> tuple[datetime, Snapshot, DayPlan]:
    """Read the store as of ``day``'s batch time and plan that day: (moment, snapshot, plan)."""
    hour = kioku.config.compression.schedule_hour
    moment = batch_moment(day, hour, like)
    previous = batch_moment(day - timedelta(days=1), hour, like)
    first_run = last_day(kioku) is None
    snap = kioku.store.batch_snapshot(moment)
    plan = plan_day(
        snap.population, snap.archived, kioku.config, moment, previous, first_run=first_run
    )
    return moment, snap, plan


def _dry_run(kioku: Kioku, day: date, like: datetime) -> DaySummary:
    moment, snap, plan = _plan(kioku, day, like)
    summary = _summary(day, moment, snap, plan)
    active = _active_nodes(snap, plan)
    for r in plan.revivals:
        active.pop(r.memory_id, None)  # as in the real run: revived after linking
    changes = review_links(_links(snap), active, kioku.config.relations.score_proximity_threshold)
    summary.unlinked = sum(1 for _, why in changes.removed if why == "inactive")
    summary.turned = sum(1 for _, why in changes.removed if why == "turned")
    return summary


def _summary(day: date, moment: datetime, snap: Snapshot, plan: DayPlan) -> DaySummary:
    steps: Counter[str] = Counter()
    for t in plan.transitions:
        for a in range(t.from_level, min(t.to_level, Level.TRACE)):
            steps[f"{a}->{a + 1}"] += 1
    return DaySummary(
        day=day.isoformat(),
        moment=format_ts(moment),
        memories=len(snap.population),
        reinforced=int(plan.reinforced.sum()),
        compressed=dict(sorted(steps.items())),
        archived=len(plan.archived_today),
        ratio_forced=sum(1 for t in plan.transitions if t.reason == "ratio"),
        revived=len(plan.revivals),
        revivals_deferred=len(plan.revivals_deferred),
        deleted=len(plan.deletions),
        shares={
            f"{snap.scopes[code][0]}/{snap.scopes[code][1]}": counts
            for code, counts in sorted(plan.shares.items())
            if code < len(snap.scopes)
        },
    )


def _links(snap: Snapshot) -> list[Link]:
    return [Link(s, t, k) for s, t, k in snap.links]


def _active_nodes(snap: Snapshot, plan: DayPlan) -> dict[str, Node]:
    pop = snap.population
    leaving = {t.memory_id for t in plan.archived_today}
    nodes = {
        str(pop.ids[i]): Node(float(plan.score[i]), float(pop.created[i]))
        for i in range(len(pop))
        if str(pop.ids[i]) not in leaving
    }
    arc = snap.archived
    for r in plan.revivals:
        nodes[r.memory_id] = Node(r.score, float(arc.created[r.index]))
    return nodes


# -- compression texts ---------------------------------------------------------------------


def _text_key(memory: Memory, target: int) -> str:
    digest = hashlib.blake2b(
        f"{memory.trigger}\x00{memory.content}".encode(), digest_size=12
    ).hexdigest()
    return f"{memory.id}:{digest}:{target}"


def _compress(kioku: Kioku, memory: Memory, from_level: int, to_level: int) -> list[Compressed]:
    """The texts of each step from ``from_level`` down to ``min(to_level, 3)``."""
    steps: list[Compressed] = []
    trigger, content = memory.trigger, memory.content
    for level in range(from_level, min(to_level, Level.TRACE)):
        if level == Level.FULL:
            out = kioku.analyzer.summarize(trigger, content)
        else:
            out = kioku.analyzer.extract_keywords(trigger, content)
        steps.append(out)
        trigger, content = out.trigger, out.content
    return steps


def _prefetch(kioku: Kioku, day: date, like: datetime) -> dict[str, list[Compressed]]:
    """Compression texts for the day's planned transitions, made outside the transaction."""
    _, _, plan = _plan(kioku, day, like)
    texts: dict[str, list[Compressed]] = {}
    wanted = [t for t in plan.transitions if t.from_level < min(t.to_level, Level.TRACE) + 1]
    memories = {m.id: m for m in kioku.store.get_many([t.memory_id for t in wanted])}
    for t in wanted:
        memory = memories.get(t.memory_id)
        if memory is not None and t.from_level < min(t.to_level, Level.TRACE):
            texts[_text_key(memory, t.to_level)] = _compress(
                kioku, memory, t.from_level, t.to_level
            )
    return texts


# -- one day -------------------------------------------------------------------------------


def _run_day(kioku: Kioku, day: date, like: datetime) -> DaySummary | None:
    started = time.perf_counter()
    offline = kioku.analyzer.name.startswith("offline")
    prefetched = {} if offline else _prefetch(kioku, day, like)
    store = kioku.store
    with store.atomic():
        done = last_day(kioku)
        if done is not None and done >= day:
            return None  # another process applied it meanwhile
        summary = _apply_day(kioku, day, like, prefetched)
        store.set_state(LAST_DAY_KEY, day.isoformat())
        store.set_state(LAST_RUN_KEY, format_ts(kioku.clock.now()))
    summary.seconds = time.perf_counter() - started
    return summary


def _apply_day(
    kioku: Kioku, day: date, like: datetime, prefetched: dict[str, list[Compressed]]
) -> DaySummary:
    cfg = kioku.config
    store = kioku.store
    moment, snap, plan = _plan(kioku, day, like)
    pop, arc = snap.population, snap.archived
    summary = _summary(day, moment, snap, plan)
    stamp = day.isoformat()
    log: list[LogEntry] = []

    def entry(event: Event, memory_id: str, scope: int, **values: object) -> LogEntry:
        user, agent = snap.scopes[scope]
        return LogEntry(
            event=event,
            memory_id=memory_id,
            at=moment,
            user_id=user,
            agent_id=agent,
            batch_day=stamp,
            **values,  # type: ignore[arg-type]
        )

    # Steps 1–2: reinforcement or a day older, and the new scores, for every active memory.
    if len(pop):
        store.write_scores(
            pop.ids.tolist(),
            plan.memory_days.tolist(),
            plan.coefficient.tolist(),
            plan.recall_count.tolist(),
            plan.score.tolist(),
        )
    for i in np.flatnonzero(plan.reinforced).tolist():
        log.append(
            entry(
                Event.REINFORCE,
                str(pop.ids[i]),
                int(pop.scope[i]),
                level_before=int(pop.level[i]),
                level_after=int(pop.level[i]),
                score_before=float(pop.score[i]),
                score_after=float(plan.score[i]),
                details={
                    "memory_days": [float(pop.memory_days[i]), float(plan.memory_days[i])],
                    "decay_coefficient": [float(pop.coefficient[i]), float(plan.coefficient[i])],
                    "recall_count": int(plan.recall_count[i]),
                },
            )
        )
    # Steps 3, 3.5, 4 and the archive: compression (with new vectors), forced or not.
    changed = _apply_transitions(kioku, plan, snap, moment, prefetched, log, entry)
    # Steps 5–6: relations to inactive memories go, reversed ones are turned.
    active = _active_nodes(snap, plan)
    for r in plan.revivals:
        active.pop(r.memory_id, None)  # revived after linking (step order of the issue)
    review = review_links(_links(snap), active, cfg.relations.score_proximity_threshold)
    store.remove_links([(link.source, link.target) for link, _ in review.removed])
    store.add_links([link for link, _, _ in review.added], moment)
    scope_of = _scope_lookup(snap)
    for link, why in review.removed:
        summary.unlinked += why == "inactive"
        summary.turned += why == "turned"
        log.append(
            entry(
                Event.UNLINK,
                link.source,
                scope_of.get(link.source, 0),
                details={"target": link.target, "type": link.type, "why": why},
            )
        )
    for link, why, _ in review.added:
        log.append(
            entry(
                Event.LINK,
                link.source,
                scope_of.get(link.source, 0),
                details={"target": link.target, "type": link.type, "why": why},
            )
        )
    # Step 7: link new and changed memories to similar ones.
    if cfg.relations.enable_auto_linking:
        existing = _surviving_links(snap, review)
        fresh = {str(pop.ids[i]) for i in np.flatnonzero(plan.fresh).tolist()} | changed
        fresh -= {t.memory_id for t in plan.archived_today}
        for link, similarity in _auto_link(kioku, snap, scope_of, moment, fresh, existing, active):
            summary.linked += 1
            log.append(
                entry(
                    Event.LINK,
                    link.source,
                    scope_of.get(link.source, 0),
                    details={
                        "target": link.target,
                        "type": link.type,
                        "why": "similar",
                        "similarity": round(similarity, 4),
                    },
                )
            )
    # Revival of requested archived memories, within the Level 3 share.
    for r in plan.revivals:
        store.update(
            r.memory_id,
            MemoryPatch(
                current_level=Level.TRACE,
                archived_at=None,
                revival_requested=False,
                revival_requested_at=None,
                recalled_since_last_batch=True,
                recall_count=r.recall_count,
                retention_score=r.score,
                memory_days=r.memory_days,
            ),
        )
        log.append(
            entry(
                Event.REVIVE,
                r.memory_id,
                int(arc.scope[r.index]),
                level_before=Level.ARCHIVED,
                level_after=Level.TRACE,
                score_after=r.score,
                details={"memory_days": round(r.memory_days, 4)},
            )
        )
    for i in plan.revivals_deferred:
        memory_id = str(arc.ids[i])
        store.update(memory_id, MemoryPatch(revival_requested=False, revival_requested_at=None))
        log.append(
            entry(
                Event.DEFER,
                memory_id,
                int(arc.scope[i]),
                level_before=Level.ARCHIVED,
                level_after=Level.ARCHIVED,
                details={"why": "level 3 is at its target share"},
            )
        )
    # Step 8: auto-delete from the archive.
    for i in plan.deletions:
        memory_id = str(arc.ids[i])
        if store.delete(memory_id):
            log.append(
                entry(
                    Event.DELETE,
                    memory_id,
                    int(arc.scope[i]),
                    level_before=Level.ARCHIVED,
                    details={"why": "auto_delete", "mode": cfg.archive.delete_condition_mode},
                )
            )
    store.append_log(log)
    return summary


def _scope_lookup(snap: Snapshot) -> dict[str, int]:
    pop, arc = snap.population, snap.archived
    lookup = dict(zip(pop.ids.tolist(), pop.scope.tolist(), strict=True))
    lookup.update(zip(arc.ids.tolist(), arc.scope.tolist(), strict=True))
    return lookup


def _surviving_links(snap: Snapshot, review: LinkChanges) -> list[tuple[str, str]]:
    gone = {(link.source, link.target) for link, _ in review.removed}
    pairs = [(s, t) for s, t, _ in snap.links if (s, t) not in gone]
    pairs.extend((link.source, link.target) for link, _, _ in review.added)
    return pairs


def _apply_transitions(
    kioku: Kioku,
    plan: DayPlan,
    snap: Snapshot,
    moment: datetime,
    prefetched: dict[str, list[Compressed]],
    log: list[LogEntry],
    entry: Callable[..., LogEntry],
) -> set[str]:
    """Rewrite, re-embed and archive the memories that move down; returns those re-embedded."""
    if not plan.transitions:
        return set()
    store = kioku.store
    pop = snap.population
    memories = {m.id: m for m in store.get_many([t.memory_id for t in plan.transitions])}
    rewritten: dict[str, tuple[Transition, Memory, list[Compressed]]] = {}
    for t in plan.transitions:
        memory = memories.get(t.memory_id)
        if memory is None:
            continue
        steps: list[Compressed] = []
        if t.from_level < min(t.to_level, Level.TRACE):
            steps = prefetched.get(_text_key(memory, t.to_level)) or _compress(
                kioku, memory, t.from_level, t.to_level
            )
        rewritten[t.memory_id] = (t, memory, steps)
    # Step 3.5: new vectors for every rewritten text, in one call.
    embed_ids = [mid for mid, (_, _, steps) in rewritten.items() if steps]
    vectors: dict[str, Embedding] = {}
    if embed_ids:
        embedder = kioku.embedder
        texts = [
            f"{rewritten[mid][2][-1].trigger}\n{rewritten[mid][2][-1].content}" for mid in embed_ids
        ]
        for mid, vector in zip(embed_ids, embedder.embed(texts), strict=True):
            vectors[mid] = Embedding(embedder.model_id, tuple(float(x) for x in vector.tolist()))
    for mid, (t, memory, steps) in rewritten.items():
        scope = int(pop.scope[t.index])
        patch = MemoryPatch(current_level=t.to_level)
        if steps:
            patch = replace(
                patch, trigger=steps[-1].trigger, content=steps[-1].content, embedding=vectors[mid]
            )
        if t.to_level == Level.ARCHIVED:
            patch = replace(patch, archived_at=moment)
        store.update(mid, patch)
        before = memory
        level = t.from_level
        for step in steps:
            log.append(
                entry(
                    Event.COMPRESS,
                    mid,
                    scope,
                    level_before=level,
                    level_after=level + 1,
                    score_before=float(pop.score[t.index]),
                    score_after=t.score,
                    details={
                        "reason": t.reason,
                        "method": "summary" if level == Level.FULL else "keywords",
                        "chars_before": len(before.trigger) + len(before.content),
                        "chars_after": len(step.trigger) + len(step.content),
                    },
                )
            )
            before = replace(before, trigger=step.trigger, content=step.content)
            level += 1
        if t.to_level == Level.ARCHIVED:
            log.append(
                entry(
                    Event.ARCHIVE,
                    mid,
                    scope,
                    level_before=level,
                    level_after=Level.ARCHIVED,
                    score_before=float(pop.score[t.index]),
                    score_after=t.score,
                    details={"reason": t.reason},
                )
            )
    return set(embed_ids)


def _auto_link(
    kioku: Kioku,
    snap: Snapshot,
    scope_of: dict[str, int],
    moment: datetime,
    fresh: set[str],
    existing: list[tuple[str, str]],
    active: dict[str, Node],
) -> list[tuple[Link, float]]:
    """Step 7, scope by scope: new and re-embedded memories against every active memory."""
    if not fresh:
        return []
    cfg = kioku.config.relations
    store = kioku.store
    model = kioku.embedder.model_id
    added: list[tuple[Link, float]] = []
    by_scope: dict[int, list[str]] = {}
    for memory_id in sorted(fresh):
        by_scope.setdefault(scope_of.get(memory_id, -1), []).append(memory_id)
    for code, members in sorted(by_scope.items()):
        if code < 0:
            continue
        user, agent = snap.scopes[code]
        ids, matrix = store.link_vectors(model, user, agent, None)
        if not ids:
            continue
        row = {memory_id: n for n, memory_id in enumerate(ids)}
        keep = [i for i, memory_id in enumerate(ids) if memory_id in active]
        chosen = [m for m in members if m in row and m in active]
        if not chosen or not keep:
            continue
        links = auto_links(
            chosen,
            matrix[[row[m] for m in chosen]],
            [ids[i] for i in keep],
            matrix[keep],
            existing,
            active,
            threshold=cfg.auto_link_similarity_threshold,
            max_relations=cfg.max_relations_per_memory,
            proximity=cfg.score_proximity_threshold,
        )
        store.add_links([link for link, _ in links], moment)
        existing.extend((link.source, link.target) for link, _ in links)
        added.extend(links)
    return added
