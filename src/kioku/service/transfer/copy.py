"""Copy every table of one store into another, then verify counts and checksums.

A migration runs in three passes. The first reads the target's rows (their keys and
digests) and the source's, and refuses, before writing anything, a target holding a row the
source does not have or a row under the same key with other values. The second copies the
source's rows the target lacks, in batches that are each one transaction and that leave out
rows already there, so a migration cut short is completed by running it again, and a second
run copies nothing. The third reads the target again and compares each table's row count and
checksum with the source's.

The erasure key (the ``state`` row that keys the tombstones' digests) is the one exception
to "never overwrite": a target that holds nothing else gets the source's key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from kioku.errors import KiokuError
from kioku.ports.transfer.access import TableAccess
from kioku.ports.transfer.canonical import Row, TableSum, row_digest
from kioku.ports.transfer.tables import SKIPPED_STATE, TABLES, TableSpec
from kioku.records import Record

__all__ = [
    "ERASURE_KEY",
    "MigrationConflictError",
    "MigrationReport",
    "TableReport",
    "copy_store",
    "table_rows",
]

#: The ``state`` row holding a store's secret for keyed digests (both adapters).
ERASURE_KEY = "erasure_key"
BATCH = 500
#: Rows per batch into PostgreSQL, which writes a batch with one ``COPY`` (larger batches
#: spread each transaction's fixed cost over more rows).
POSTGRES_BATCH = 5000
_SHOWN = 3

Key = tuple[object, ...]
Progress = Callable[[str, int], None]


class MigrationConflictError(KiokuError):
    """The target holds data the source does not: nothing was written."""

    exit_code = 2


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class TableReport(Record):
    """One table's migration."""

    table: str
    source_rows: int
    #: Rows the target held before (equal to the source's under the same keys).
    already: int
    copied: int
    #: The target's rows and checksum after the copy (-1 and "" on a dry run).
    target_rows: int
    source_checksum: str
    target_checksum: str

    @property
    def ok(self) -> bool:
        return self.source_rows == self.target_rows and (
            self.source_checksum == self.target_checksum
        )


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MigrationReport(Record):
    source: str
    target: str
    dry_run: bool
    tables: tuple[TableReport, ...] = field(default=())
    #: Whether the target's erasure key was replaced by the source's.
    key_replaced: bool = False

    @property
    def copied(self) -> int:
        return sum(t.copied for t in self.tables)

    @property
    def mismatched(self) -> tuple[TableReport, ...]:
        return () if self.dry_run else tuple(t for t in self.tables if not t.ok)

    @property
    def verified(self) -> bool:
        return not self.dry_run and not self.mismatched


@dataclass(slots=True)
class _Plan:
    spec: TableSpec
    source: TableSum
    target_keys: dict[Key, bytes]
    missing: set[Key]
    conflicts: list[str]


def table_rows(access: TableAccess, spec: TableSpec, batch: int) -> Iterator[Sequence[Row]]:
    """The table's canonical rows that a migration copies (not a store's own bookkeeping)."""
    for rows in access.rows(spec, batch):
        if spec.name == "state":
            rows = [r for r in rows if r[0] not in SKIPPED_STATE]
        yield rows


def _key(spec: TableSpec, row: Row) -> Key:
    return tuple(row[i] for i in spec.key_index)


def _index(access: TableAccess, spec: TableSpec, batch: int) -> dict[Key, bytes]:
    return {_key(spec, r): row_digest(r) for rows in table_rows(access, spec, batch) for r in rows}


def _plan(source: TableAccess, target: TableAccess, spec: TableSpec, batch: int) -> _Plan:
    plan = _Plan(spec, TableSum(), _index(target, spec, batch), set(), [])
    seen: set[Key] = set()
    for rows in table_rows(source, spec, batch):
        for row in rows:
            key, digest = _key(spec, row), row_digest(row)
            plan.source.add(digest)
            seen.add(key)
            held = plan.target_keys.get(key)
            if held is None:
                plan.missing.add(key)
            elif held != digest:
                plan.conflicts.append(f"{_show(spec, key)} holds other values")
    extra = [k for k in plan.target_keys if k not in seen]
    plan.conflicts.extend(f"{_show(spec, k)} is not in the source" for k in sorted(extra, key=repr))
    return plan


def _show(spec: TableSpec, key: Key) -> str:
    pairs = ", ".join(f"{c}={v!r}" for c, v in zip(spec.key, key, strict=True))
    return f"{spec.name} ({pairs})"


def _key_problem(plans: Sequence[_Plan]) -> bool:
    """Whether the only difference in ``state`` is a blank target's erasure key; removes it
    from the conflicts when the key may be replaced."""
    state = next(p for p in plans if p.spec.name == "state")
    blank = all(not p.target_keys for p in plans if p.spec.name != "state")
    differs = f"{_show(state.spec, (ERASURE_KEY,))} holds other values"
    if blank and differs in state.conflicts:
        state.conflicts.remove(differs)
        return True
    return False


def copy_store(
    source: TableAccess,
    target: TableAccess,
    *,
    dry_run: bool = False,
    batch: int | None = None,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy ``source`` into ``target`` and verify it (see the module's text), ``batch`` rows
    per transaction (by default :data:`POSTGRES_BATCH` into PostgreSQL, else :data:`BATCH`).

    Raises :class:`MigrationConflictError` (nothing written) when the target holds rows the
    source does not, or other values under the same keys.
    """
    if batch is None:
        batch = POSTGRES_BATCH if target.backend == "postgres" else BATCH
    plans = [_plan(source, target, spec, batch) for spec in TABLES]
    replace_key = _key_problem(plans)
    conflicts = [c for p in plans for c in p.conflicts]
    if conflicts:
        shown = "; ".join(conflicts[:_SHOWN])
        more = f" (and {len(conflicts) - _SHOWN} more)" if len(conflicts) > _SHOWN else ""
        raise MigrationConflictError(
            f"the target {target.describe()} already holds other data: {shown}{more}; "
            "nothing was written",
            hint="migrate into an empty target (another --schema, or an absent SQLite file); "
            "a migration completes a target but never overwrites it",
        )
    reports: list[TableReport] = []
    if not dry_run and replace_key:
        key_row = next(
            r
            for rows in table_rows(source, plans[0].spec, batch)
            for r in rows
            if r[0] == ERASURE_KEY
        )
        target.set_state(ERASURE_KEY, str(key_row[1]))
    for plan in plans:
        copied = 0 if dry_run else _copy(source, target, plan, batch, progress)
        if dry_run:
            after, checksum = -1, ""
        else:
            after_sum = TableSum()
            for rows in table_rows(target, plan.spec, batch):
                after_sum.extend([row_digest(r) for r in rows])
            after, checksum = after_sum.count, after_sum.checksum
        # A replaced erasure key counts as copied, not as already there.
        replaced = int(replace_key and plan.spec.name == "state")
        reports.append(
            TableReport(
                table=plan.spec.name,
                source_rows=plan.source.count,
                already=len(plan.target_keys) - replaced,
                copied=(len(plan.missing) if dry_run else copied) + replaced,
                target_rows=after,
                source_checksum=plan.source.checksum,
                target_checksum=checksum,
            )
        )
    return MigrationReport(
        source=source.describe(),
        target=target.describe(),
        dry_run=dry_run,
        tables=tuple(reports),
        key_replaced=replace_key and not dry_run,
    )


def _copy(
    source: TableAccess, target: TableAccess, plan: _Plan, batch: int, progress: Progress | None
) -> int:
    copied = 0
    if plan.missing:
        pending: list[Row] = []
        for rows in table_rows(source, plan.spec, batch):
            pending.extend(r for r in rows if _key(plan.spec, r) in plan.missing)
            while len(pending) >= batch:
                copied += target.insert(plan.spec, pending[:batch])
                del pending[:batch]
                if progress is not None:
                    progress(plan.spec.name, copied)
        if pending:
            copied += target.insert(plan.spec, pending)
            if progress is not None:
                progress(plan.spec.name, copied)
    target.finish(plan.spec)
    return copied
