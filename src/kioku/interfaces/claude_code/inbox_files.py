"""The inbox's files: names, the lock, whole-line appends and atomic rewrites, entry lines.

See :mod:`kioku.interfaces.claude_code.inbox` for what the files hold and who changes them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from kioku.interfaces.claude_code.hook_common import ensure_home

__all__ = [
    "DEAD_NAME",
    "DRAIN_LOCK_NAME",
    "INBOX_LOCK_NAME",
    "INBOX_NAME",
    "append_lines",
    "dead_line",
    "entry_of",
    "file_lock",
    "line_of",
    "now_iso",
    "read_lines",
    "replace_lines",
]

INBOX_NAME: Final = "inbox.jsonl"
INBOX_LOCK_NAME: Final = "inbox.jsonl.lock"
DEAD_NAME: Final = "inbox.dead.jsonl"
DRAIN_LOCK_NAME: Final = "drain.lock"


def now_iso() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")


# -- files and locks -------------------------------------------------------------------------


def _lock(fd: int, *, block: bool) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_LOCK if block else msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX if block else fcntl.LOCK_EX | fcntl.LOCK_NB)


@contextmanager
def file_lock(path: Path, *, block: bool) -> Iterator[bool]:
    """An exclusive lock on ``path``; yields False when ``block`` is off and it is taken."""
    ensure_home(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            _lock(fd, block=block)
        except OSError:
            if block:
                raise
            yield False
            return
        yield True
    finally:
        os.close(fd)  # closing releases the lock


def append_lines(path: Path, lines: list[str]) -> None:
    """Append whole lines in one synced write (the caller holds the inbox lock)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, "".join(lines).encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_lines(path: Path, lines: list[str]) -> None:
    """``path`` holds exactly ``lines`` (removed when there are none), atomically."""
    if not lines:
        path.unlink(missing_ok=True)
        return
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, "".join(lines).encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temp, path)


def read_lines(path: Path) -> list[str]:
    """The file's lines, each ending with a line break (none when it does not exist)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    return [line + "\n" for line in text.split("\n") if line]


def line_of(entry: Mapping[str, Any]) -> str:
    """``entry`` as one JSON line; a value with a lone surrogate (a path that is not UTF-8)
    is written escaped, so the line can be written as UTF-8 and reads back the same."""
    text = json.dumps(dict(entry), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(dict(entry))
    return text + "\n"


def entry_of(line: str) -> dict[str, Any] | None:
    """The inbox entry of ``line``, or None when it is not one."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(entry, dict):
        return None
    path = entry.get("transcript_path")
    return entry if isinstance(path, str) and path else None


def dead_line(entry: Mapping[str, Any], error: str, attempts: int) -> str:
    fields = {k: v for k, v in entry.items() if k not in ("error", "attempts", "dead_at")}
    return line_of({**fields, "attempts": attempts, "error": error, "dead_at": now_iso()})
