"""Where a backup goes, checked before anything is written.

A target behaves as ``cp`` would treat it: an existing directory, or a path ending in ``/``,
means a new file inside it, named ``memories-YYYYMMDD-HHMMSS.db`` after the local time (with
``-2``, ``-3`` ... when that name is taken); a path ending in ``/`` that does not exist, or a
file whose directory does not exist, is an error (no directory is created). A target that is,
or links to, a file kioku keeps in the home (the database, its ``-wal``/``-shm``/``-journal``,
the vector cache, the configuration, the inbox, the logs) is refused, whatever ``--force``
says: paths are compared after resolving symbolic links, and existing files by device and
inode, so a hard link is caught too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from kioku.errors import KiokuError

if TYPE_CHECKING:
    from kioku.adapters.store.sqlite.recover import SalvageReport

__all__ = ["BackupTargetError", "recover", "resolve_target"]

#: Files of the home that are not named after the database.
_HOME_FILES: Final = frozenset(
    {
        "config.toml",
        "config.json",
        "inbox.jsonl",
        "inbox.jsonl.lock",
        "hooks.log",
        "hooks.log.1",
        "daemon.sock",
        "daemon.pid",
        "daemon.log",
        "batch.lock",
        "batch.log",
    }
)


class BackupTargetError(KiokuError):
    """The backup target is not a place a backup may be written to."""

    exit_code = 2


def _owned(home: Path, db: Path, config: Path | None) -> Iterator[Path]:
    """The paths of files kioku keeps (existing or not)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        yield db.with_name(db.name + suffix)
    for name in _HOME_FILES:
        yield home / name
    if config is not None:
        yield config


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _is_owned(target: Path, home: Path, db: Path, config: Path | None) -> bool:
    real = Path(os.path.realpath(target))
    real_db = Path(os.path.realpath(db))
    if real.parent == real_db.parent and real.name.startswith(real_db.name):
        return True  # memories.db, its -wal/-shm/-journal, memories.db.vectors, .corrupt
    vectors = real_db.with_name(real_db.name + ".vectors")
    if vectors in real.parents:
        return True
    for owned in _owned(home, db, config):
        if Path(os.path.realpath(owned)) == real:
            return True
    if not target.exists():
        return False
    # A hard link (or a path the resolution above could not see through) to a kioku file.
    candidates = [p for p in _owned(home, db, config) if p.exists()]
    if vectors.is_dir():
        candidates += [p for p in vectors.iterdir() if p.is_file()]
    return any(_same_file(target, p) for p in candidates)


def _stamped(directory: Path, now: datetime) -> Path:
    stem = f"memories-{now:%Y%m%d-%H%M%S}"
    target = directory / f"{stem}.db"
    n = 2
    while target.exists() or target.is_symlink():
        target = directory / f"{stem}-{n}.db"
        n += 1
    return target


def resolve_target(
    given: str | os.PathLike[str],
    *,
    home: Path,
    db: Path,
    config: Path | None,
    now: datetime,
    overwrite: bool,
) -> Path:
    """The file a backup asked for as ``given`` goes to; BackupTargetError (exit 2) when it
    may not be written, with nothing written."""
    text = os.fspath(given)
    if not text.strip():
        raise BackupTargetError("the backup path is empty", hint="name a file or a directory")
    path = Path(text).expanduser()
    wants_dir = text.endswith(("/", os.sep))
    if wants_dir and not path.is_dir():
        raise BackupTargetError(
            f"the backup directory {path} does not exist",
            hint="create it first (mkdir -p), or name a file in an existing directory",
        )
    target = _stamped(path, now) if path.is_dir() else path
    if not target.parent.is_dir():
        raise BackupTargetError(
            f"the directory of {target} does not exist",
            hint=f"create it first (mkdir -p {target.parent}); kioku does not create it",
        )
    if _is_owned(target, home, db, config):
        raise BackupTargetError(
            f"refusing to write a backup over {target}: it is a file of the kioku store in {home}",
            hint="back up to a path outside the store's own files, e.g. ~/kioku-backups/",
        )
    if (target.exists() or target.is_symlink()) and not overwrite:
        raise BackupTargetError(
            f"{target} already exists",
            hint="choose another path, or pass --force to replace it (atomically)",
        )
    if target.is_dir():
        raise BackupTargetError(f"{target} is a directory", hint="name a file")
    return target


def recover(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> SalvageReport:
    """Salvage the store ``source`` (a database file, or a home holding ``memories.db``) into
    the new file ``target``; the source is only read (see :mod:`kioku.adapters.store.sqlite.
    recover`). BackupTargetError (exit 2) for a target that exists or has no directory."""
    from kioku.adapters.store.sqlite.recover import salvage
    from kioku.service.home import DB_FILENAME

    src = Path(source).expanduser()
    if src.is_dir():
        src = src / DB_FILENAME
    if not src.is_file():
        raise BackupTargetError(
            f"{src} does not exist", hint="name a damaged memories.db or the home holding it"
        )
    dst = Path(target).expanduser()
    if dst.exists() or dst.is_symlink():
        raise BackupTargetError(
            f"{dst} already exists", hint="name a new file: recover never overwrites"
        )
    if not dst.parent.is_dir():
        raise BackupTargetError(
            f"the directory of {dst} does not exist",
            hint=f"create it first (mkdir -p {dst.parent})",
        )
    return salvage(src, dst)
