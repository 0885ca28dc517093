"""Store upkeep that is not about single memories: stats, integrity checks, backups."""

from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import closing, suppress
from pathlib import Path
from typing import Final

from kioku.adapters.store.sqlite.connection import (
    OWNER_ONLY_DIR,
    OWNER_ONLY_FILE,
    translate,
)
from kioku.adapters.store.sqlite.migrations import LATEST_VERSION, schema_version
from kioku.adapters.store.sqlite.vector_layout import SUFFIX, cache_dir
from kioku.errors import StoreError, ValidationError
from kioku.ports.store import IntegrityReport, StoreStats, VectorIndexReport

__all__ = [
    "backup_into",
    "file_mode_problems",
    "integrity_report",
    "size_bytes",
    "stats",
    "vector_index_reports",
]

_SHOWN: Final = 5


def size_bytes(path: Path) -> int:
    """The database file plus its write-ahead log."""
    total = 0
    for part in (path, path.with_name(path.name + "-wal")):
        with suppress(OSError):
            total += part.stat().st_size
    return total


def stats(
    conn: sqlite3.Connection,
    path: Path,
    where: str,
    params: list[object],
    by_kind: dict[str, int] | None = None,
) -> StoreStats:
    """Counts of the memories ``where`` selects (the scope's episodes), and ``by_kind``."""
    total, protected, archived, revival = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(protected), 0), "
        "COALESCE(SUM(archived_at IS NOT NULL), 0), COALESCE(SUM(revival_requested), 0) "
        f"FROM memories{where}",
        params,
    ).fetchone()
    by_level = {1: 0, 2: 0, 3: 0, 4: 0}
    for level, count in conn.execute(
        f"SELECT current_level, COUNT(*) FROM memories{where} GROUP BY current_level", params
    ):
        by_level[int(level)] = int(count)
    by_category = {
        str(category): int(count)
        for category, count in conn.execute(
            f"SELECT category, COUNT(*) FROM memories{where} GROUP BY category ORDER BY category",
            params,
        )
    }
    return StoreStats(
        total=int(total),
        by_level=by_level,
        by_category=by_category,
        protected=int(protected),
        archived=int(archived),
        revival_requested=int(revival),
        size_bytes=size_bytes(path),
        by_kind=dict(by_kind or {}),
    )


def file_mode_problems(path: Path) -> tuple[list[str], dict[str, str]]:
    """Group/other permission bits on the store's files and directory, with the fix."""
    problems: list[str] = []
    modes: dict[str, str] = {}
    if os.name == "nt":  # pragma: no cover - POSIX modes do not apply
        return problems, modes
    candidates = [
        (path.parent, OWNER_ONLY_DIR, "700"),
        (path, OWNER_ONLY_FILE, "600"),
        (path.with_name(path.name + "-wal"), OWNER_ONLY_FILE, "600"),
        (path.with_name(path.name + "-shm"), OWNER_ONLY_FILE, "600"),
    ]
    vectors = cache_dir(path)  # the vector cache: ids and vectors of every memory
    if vectors is not None and vectors.is_dir():
        candidates.append((vectors, OWNER_ONLY_DIR, "700"))
        with suppress(OSError):
            candidates += [
                (entry, OWNER_ONLY_FILE, "600")
                for entry in sorted(vectors.iterdir())
                if entry.name.endswith(SUFFIX)
            ]
    for item, wanted, octal in candidates:
        try:
            mode = stat.S_IMODE(item.stat().st_mode)
        except OSError:
            continue
        modes[str(item)] = oct(mode)
        if mode & 0o077:
            problems.append(
                f"{item} can be read or changed by other users (mode {oct(mode)}, "
                f"expected {oct(wanted)}); fix: chmod {octal} {item}"
            )
    return problems, modes


def integrity_report(conn: sqlite3.Connection, path: Path) -> IntegrityReport:
    problems: list[str] = []
    details: dict[str, object] = {"path": str(path)}
    version = -1
    try:
        version = schema_version(conn)
        messages = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
        broken = conn.execute("PRAGMA foreign_key_check").fetchall()
    except sqlite3.Error as exc:
        error = translate(exc, path)
        problems.append(f"{error.message}; fix: {error.hint}" if error.hint else error.message)
    else:
        details["integrity_check"] = messages
        details["foreign_key_violations"] = len(broken)
        if messages != ["ok"]:
            problems.append(
                f"{path} is damaged: {'; '.join(messages[:_SHOWN])}; fix: restore a backup "
                "made with `kioku backup`, or export what is readable with "
                f"`sqlite3 {path} .dump`"
            )
        if broken:
            problems.append(
                f"{len(broken)} relations point at memories that do not exist; "
                "fix: run the nightly batch, which removes dangling relations"
            )
    if version != LATEST_VERSION:
        problems.append(
            f"schema version is {version}, expected {LATEST_VERSION}; fix: open the store "
            "with this kioku to migrate it, or upgrade kioku if the file is newer"
        )
    mode_problems, modes = file_mode_problems(path)
    problems.extend(mode_problems)
    details["file_modes"] = modes
    return IntegrityReport(
        ok=not problems,
        schema_version=version,
        expected_schema_version=LATEST_VERSION,
        problems=tuple(problems),
        details=details,
    )


def _refuse_existing(target: Path) -> None:
    if target.exists() or target.is_symlink():
        raise StoreError(
            f"backup target {target} already exists",
            hint="choose a new file name, or move the old backup away first",
        )


def _verify_copy(copy: Path) -> list[tuple[str, str]]:
    """Check the copy; ``(memory id, user id)`` of every memory it holds."""
    from kioku.adapters.store.sqlite.erasure import backup_held

    with closing(sqlite3.connect(str(copy), isolation_level=None)) as check:
        messages = [str(row[0]) for row in check.execute("PRAGMA integrity_check")]
        # A backup is one self-contained file: no -wal needed to read it.
        check.execute("PRAGMA journal_mode = DELETE")
        held = backup_held(check) if messages == ["ok"] else []
    if messages != ["ok"]:
        raise StoreError(
            f"the backup copy failed its integrity check: {'; '.join(messages[:_SHOWN])}",
            hint="run `kioku doctor` on the store, then try the backup again",
        )
    return held


def backup_into(
    conn: sqlite3.Connection, source: Path, target: Path, *, overwrite: bool = False
) -> list[tuple[str, str]]:
    """Write a consistent snapshot of ``conn``'s database to ``target`` (mode 0o600).

    ``VACUUM INTO`` reads one snapshot, so other processes can keep writing meanwhile. The
    copy goes to a temporary file in ``target``'s directory (which must exist), is checked,
    then renamed over ``target`` (only with ``overwrite`` when it exists): an existing file is
    never lost before the new copy is complete. Returns ``(memory id, user id)`` of every
    memory the copy holds.
    """
    if not overwrite:
        _refuse_existing(target)
    if not target.parent.is_dir():
        raise StoreError(
            f"the backup directory {target.parent} does not exist",
            hint="create it first (kioku does not create directories for a backup)",
        )
    try:
        temp = target.with_name(f".{target.name}.{os.urandom(4).hex()}.tmp")
        # VACUUM INTO accepts an empty file: creating it first fixes its mode at 0o600.
        os.close(os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, OWNER_ONLY_FILE))
    except OSError as exc:
        raise StoreError(
            f"cannot create the backup file next to {target} ({exc.strerror or exc})",
            hint="check that the backup directory is writable by you",
        ) from exc
    try:
        try:
            conn.execute("VACUUM INTO ?", (str(temp),))
        except sqlite3.Error as exc:
            raise translate(exc, source) from exc
        try:
            held = _verify_copy(temp)
        except sqlite3.Error as exc:
            raise translate(exc, target) from exc
        os.chmod(temp, OWNER_ONLY_FILE)
        if not overwrite:
            _refuse_existing(target)
        os.replace(temp, target)
    except OSError as exc:
        raise StoreError(
            f"cannot write the backup {target} ({exc.strerror or exc})",
            hint="check the free space and permissions of the backup directory",
        ) from exc
    finally:
        for leftover in (
            temp,
            temp.with_name(temp.name + "-wal"),
            temp.with_name(temp.name + "-shm"),
            temp.with_name(temp.name + "-journal"),
        ):
            with suppress(OSError):
                leftover.unlink()
    return held


def vector_index_reports(
    conn: sqlite3.Connection, model: str | None, ann_min: int
) -> list[VectorIndexReport]:
    """How each model's vectors are searched (``model``: only its own): exactly, and past
    ``ann_min`` vectors (when not 0) with the HNSW graph too, which the store keeps up to
    date itself. Nothing here has build settings to apply, so nothing is rebuilt."""
    rows = conn.execute(
        "SELECT embedding_model, embedding_dim, COUNT(*) FROM memories "
        "WHERE embedding_model IS NOT NULL GROUP BY embedding_model, embedding_dim "
        "ORDER BY embedding_model, embedding_dim"
    ).fetchall()
    found = [(str(m), int(d), int(n)) for m, d, n in rows if model is None or m == model]
    if model is not None and not found:
        known = ", ".join(sorted({str(r[0]) for r in rows}))
        raise ValidationError(
            "model",
            model,
            "a model this store has vectors of" + (f": {known}" if known else ""),
            hint="`kioku reindex` without --model reports every model",
        )
    reports = []
    for name, dim, count in found:
        how = "exact + hnsw graph" if 0 < ann_min <= count else "exact"
        reports.append(VectorIndexReport(name, dim, count, how, how, False))
    return reports
