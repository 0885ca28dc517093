"""Opening a SQLite file safely, and turning sqlite3 errors into kioku errors.

Nothing outside this package sees a ``sqlite3`` exception: :func:`translate` maps each one
onto the :class:`~kioku.errors.StoreError` family, with a hint that says what to do.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from kioku.errors import StoreCorruptError, StoreError, StoreLockedError, ValidationError

__all__ = [
    "OWNER_ONLY_DIR",
    "OWNER_ONLY_FILE",
    "connect",
    "corrupt_error",
    "create_owner_only",
    "is_busy",
    "is_corrupt",
    "not_utf8",
    "translate",
    "translating",
]

OWNER_ONLY_DIR: Final = 0o700
OWNER_ONLY_FILE: Final = 0o600

# Primary result codes (https://sqlite.org/rescode.html); extended codes keep them in the low byte.
_SQLITE_PERM: Final = 3
_SQLITE_BUSY: Final = 5
_SQLITE_LOCKED: Final = 6
_SQLITE_READONLY: Final = 8
_SQLITE_IOERR: Final = 10
_SQLITE_CORRUPT: Final = 11
_SQLITE_FULL: Final = 13
_SQLITE_CANTOPEN: Final = 14
_SQLITE_NOTADB: Final = 26

_WAL_ATTEMPTS: Final = 20
# os.umask is process-wide: serialise the threads that change it.
_UMASK_LOCK = threading.Lock()


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` means another connection holds a lock we need."""
    code = _primary_code(exc)
    if code is not None:
        return code in (_SQLITE_BUSY, _SQLITE_LOCKED)
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text


def is_corrupt(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` means the file is not a SQLite database or is damaged."""
    if _primary_code(exc) in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return True
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text


def corrupt_error(path: Path, detail: str) -> StoreCorruptError:
    """The error for a file that is not a SQLite database, or a damaged one."""
    aside = path.with_name(path.name + ".corrupt")
    return StoreCorruptError(
        f"{path} is not a kioku database or is damaged ({detail})",
        hint=(
            f"restore a backup made with `kioku backup` by copying it over {path}, "
            f"or move the file aside (mv {path} {aside}) to start with an empty store"
        ),
    )


def translate(exc: sqlite3.Error, path: Path) -> StoreError:
    """The kioku error for a sqlite3 error raised while working on ``path``."""
    detail = str(exc) or type(exc).__name__
    code = _primary_code(exc)
    if is_busy(exc):
        return StoreLockedError(
            f"{path} is locked: another kioku process holds the database",
            hint="retry in a moment, or raise store.busy_timeout_ms in the configuration",
        )
    if is_corrupt(exc):
        return corrupt_error(path, detail)
    if code == _SQLITE_FULL:
        return StoreError(
            f"cannot write to {path}: the disk is full ({detail})",
            hint="free some disk space and retry; nothing was half-written",
        )
    if code in (_SQLITE_PERM, _SQLITE_READONLY, _SQLITE_CANTOPEN):
        return StoreError(
            f"cannot open or write {path} ({detail})",
            hint="check that the file and its directory exist and are writable by you",
        )
    if code == _SQLITE_IOERR:
        return StoreError(
            f"input/output error on {path} ({detail})",
            hint="check the disk, then run `kioku doctor`",
        )
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreError(
            f"a change to {path} was refused because it breaks a rule of the store ({detail})",
            hint="validate memories before storing them; nothing was written",
        )
    return StoreError(f"database error on {path} ({detail})")


def not_utf8(exc: UnicodeEncodeError) -> ValidationError:
    """The error for text SQLite cannot take: it holds a lone surrogate, which is how Python
    shows a byte that is not UTF-8 (in a command-line argument, say)."""
    value = exc.object if isinstance(exc.object, str) else ""
    shown = value if len(value) <= 80 else value[:79] + "…"
    bad = value[exc.start : exc.start + 1]
    return ValidationError(
        "value",
        shown,
        "UTF-8 text",
        hint=f"it holds {bad!r}, a byte that is not UTF-8; give the value as UTF-8 text",
    )


@contextmanager
def translating(path: Path) -> Iterator[None]:
    """Re-raise any sqlite3 error inside the block as a kioku StoreError, and text that is not
    UTF-8 as a ValidationError (nothing of it was written)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise translate(exc, path) from exc
    except UnicodeEncodeError as exc:
        raise not_utf8(exc) from None


def create_owner_only(path: Path) -> None:
    """Create the parent directory (0o700) and the file (0o600) when they are missing.

    Existing directories and files keep their modes; ``check_integrity`` reports loose ones.
    An existing file is never opened here: closing any descriptor of a file drops every POSIX
    lock the process holds on it, so opening and closing the database beside a connection
    already open in this process would silently release that connection's locks, and another
    process closing its last connection could then checkpoint and remove the write-ahead log
    under it (SQLite's "How To Corrupt", 2.2). A file made here is new (``O_EXCL``), so no
    connection can hold a lock on it yet.
    """
    try:
        if not path.parent.exists():
            path.parent.mkdir(mode=OWNER_ONLY_DIR, parents=True, exist_ok=True)
        if path.exists():
            return
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, OWNER_ONLY_FILE)
        except FileExistsError:
            return  # another process made it meanwhile
        os.close(fd)
    except OSError as exc:
        raise StoreError(
            f"cannot create or open {path} ({exc.strerror or exc})",
            hint="check that the path is a file you can write, in a directory you can write",
        ) from exc


def _enable_wal(conn: sqlite3.Connection, path: Path) -> None:
    """Switch to WAL, retrying while a brand-new file is being set up by another process."""
    for attempt in range(_WAL_ATTEMPTS):
        last = attempt == _WAL_ATTEMPTS - 1
        try:
            row = conn.execute("PRAGMA journal_mode=WAL").fetchone()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or last:
                raise
        else:
            mode = str(row[0]).lower() if row else ""
            if mode == "wal":
                return
            if last:
                raise StoreError(
                    f"cannot switch {path} to WAL journal mode (it stays in {mode!r})",
                    hint="make sure the file is on a local disk that supports shared memory",
                )
        time.sleep(min(0.02 * (attempt + 1), 0.25))


def connect(path: Path, busy_timeout_ms: int) -> sqlite3.Connection:
    """One configured connection: autocommit, WAL, foreign keys on, owner-only side files."""
    if busy_timeout_ms < 0:
        raise StoreError(
            f"busy_timeout_ms must be zero or more, got {busy_timeout_ms}",
            hint="set store.busy_timeout_ms to a number of milliseconds, e.g. 30000",
        )
    create_owner_only(path)
    with _UMASK_LOCK:
        old_umask = os.umask(0o077)
        try:
            with translating(path):
                conn = sqlite3.connect(
                    str(path),
                    timeout=busy_timeout_ms / 1000.0,
                    isolation_level=None,
                    check_same_thread=False,
                )
            try:
                with translating(path):
                    conn.row_factory = sqlite3.Row
                    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
                    conn.execute("PRAGMA foreign_keys = ON")
                    # Freed cells and pages are zeroed, not left in the free list; the
                    # rest of erasure (index segments, the -wal) is in .erasure.
                    conn.execute("PRAGMA secure_delete = ON")
                    _enable_wal(conn, path)
                    conn.execute("PRAGMA synchronous = NORMAL")
                    # Statement journals of savepoints (every remembered turn nests a few)
                    # stay in memory instead of going to a temporary file.
                    conn.execute("PRAGMA temp_store = MEMORY")
            except BaseException:
                conn.close()
                raise
        finally:
            os.umask(old_umask)
    return conn
