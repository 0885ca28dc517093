"""The journal's files: their names, their locks, and reading them back after a crash.

A journal lives at ``<directory>/<file name>.jsonl``, one JSON object a line. The first line
is always a complete ``start`` event (the writer creates the file under a temporary name and
links it into place only once that line is on disk), so a file whose first line is not one
is not a journal and is reported, never deleted.

A writer holds an exclusive advisory lock on its file for as long as it is open; the OS
drops it when the process dies. A journal file nobody holds is an *orphan*: the stream that
wrote it ended without ``finalize``. Reading one back never deletes it unless asked, so a
caller can store what was recovered first and :func:`discard` the file afterwards.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from kioku.errors import KiokuError, ValidationError
from kioku.records import Record

__all__ = [
    "JournalClosedError",
    "JournalCorruptError",
    "JournalError",
    "JournalInUseError",
    "JournalNotFoundError",
    "JournalRecovery",
    "OrphanJournalError",
    "ToolCall",
    "discard",
    "has_orphan",
    "journal_filename",
    "journal_path",
    "orphans",
    "recover",
]

FORMAT: Final = "kioku-journal/1"
MAX_SESSION_CHARS: Final = 200
SUFFIX: Final = ".jsonl"
_VERBATIM = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9._-]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DEVICE_NAMES: Final = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{p}{n}" for p in ("com", "lpt") for n in range(1, 10)]
)


class JournalError(KiokuError):
    """A streaming journal could not be written or read."""


class _SessionJournalError(JournalError):
    """An error about the journal file of one session (``session_id``, ``path``)."""

    def __init__(self, session_id: str, path: Path, message: str, hint: str | None) -> None:
        super().__init__(message, hint=hint)
        self.session_id = session_id
        self.path = path


class OrphanJournalError(_SessionJournalError):
    """A journal left by an earlier stream of the session is still there."""

    def __init__(self, session_id: str, path: Path) -> None:
        message = f"session {session_id!r} has an unrecovered streaming journal at {path}"
        hint = "recover it first (recover(), then discard() once its text is stored)"
        super().__init__(session_id, path, message, hint)


class JournalInUseError(_SessionJournalError):
    """Another open journal (in this or another process) is writing the session's file."""

    def __init__(self, session_id: str, path: Path) -> None:
        message = f"the streaming journal of session {session_id!r} is open in a live stream"
        hint = f"wait for that stream to end; only a journal nobody writes is recovered ({path})"
        super().__init__(session_id, path, message, hint)


class JournalNotFoundError(_SessionJournalError):
    """The session has no journal file."""

    def __init__(self, session_id: str, path: Path) -> None:
        message = f"session {session_id!r} has no streaming journal ({path} is missing)"
        super().__init__(session_id, path, message, None)


class JournalCorruptError(JournalError):
    """A file where a journal belongs is not one (or belongs to another session)."""

    def __init__(self, path: Path, detail: str) -> None:
        self.path = path
        hint = "it was left in place: inspect it, then move it away or delete it"
        super().__init__(f"{path} is not a kioku streaming journal ({detail})", hint=hint)


class JournalClosedError(JournalError):
    """A write reached a journal that was already finalized or closed."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ToolCall(Record):
    """One tool call of a stream: when it started and, if it finished, how."""

    call_id: str
    tool: str
    args_summary: str | None
    started_at: str
    finished: bool = False
    ok: bool | None = None
    result_summary: str | None = None
    finished_at: str | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class JournalRecovery(Record):
    """What a journal holds: the stream's session, its text so far and its tool calls.

    ``completed`` says whether the stream reached ``finalize`` (a ``done`` event);
    ``skipped_lines`` counts lines that could not be read (a line torn by the crash, or
    damage). ``path`` and ``file_key`` identify the file read, so :func:`discard` removes
    that file and never a newer journal of the same session.
    """

    session_id: str
    trigger: str
    sender: str | None
    started_at: str
    text: str
    tool_calls: tuple[ToolCall, ...]
    completed: bool
    skipped_lines: int = 0
    path: Path | None = field(default=None, compare=False)
    file_key: tuple[int, ...] | None = field(default=None, compare=False, repr=False)


def check_session_id(session_id: str) -> str:
    """``session_id`` if it can name a journal: 1 to 200 characters, not blank, no control
    characters, encodable as UTF-8. Raises :class:`~kioku.errors.ValidationError`."""
    fits = isinstance(session_id, str) and session_id.strip() and not _CONTROL.search(session_id)
    if fits and len(session_id) <= MAX_SESSION_CHARS:
        with contextlib.suppress(UnicodeEncodeError):
            session_id.encode("utf-8")
            return session_id
    allowed = f"1 to {MAX_SESSION_CHARS} characters, not blank, without control characters"
    raise ValidationError("session_id", session_id, allowed)


def journal_filename(session_id: str) -> str:
    """The file name of a session's journal; distinct sessions never share one.

    A plain lower-case name (letters, digits, ``.``, ``_``, ``-``, starting with a letter or
    digit) is used as it is. Any other is reduced to its safe characters and given ``~`` and
    a hash of the whole name; ``~`` never occurs in a name used as it is, and the hash is
    lower-case, so the names stay distinct on case-insensitive file systems too.
    """
    check_session_id(session_id)
    if _VERBATIM.fullmatch(session_id) and session_id.split(".")[0] not in _DEVICE_NAMES:
        return session_id + SUFFIX
    readable = _UNSAFE_RUN.sub("_", session_id)[:48].strip("._")
    digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:24]
    return f"{readable}~{digest}{SUFFIX}"


def journal_path(directory: str | os.PathLike[str], session_id: str) -> Path:
    """Where the journal of ``session_id`` lives in ``directory``."""
    return Path(directory) / journal_filename(session_id)


def try_lock(fd: int) -> bool:
    """Take the exclusive advisory lock of an open journal without waiting; False if held."""
    try:
        if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def sync_directory(directory: Path) -> None:
    """Make a file's creation or removal in ``directory`` durable (where the OS can)."""
    if os.name != "posix":  # pragma: no cover - directories cannot be opened elsewhere
        return
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - a file system without directory fsync
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def _unheld(path: Path, session_id: str) -> Iterator[int | None]:
    """The journal at ``path`` opened and locked (None if it is missing); raises
    :class:`JournalInUseError` while a live writer holds it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        yield None
        return
    try:
        if not try_lock(fd):
            raise JournalInUseError(session_id, path)
        yield fd
    finally:
        os.close(fd)


def is_held(path: Path) -> bool:
    """Whether a live writer holds the journal at ``path`` (False if it is missing)."""
    try:
        with _unheld(path, ""):
            return False
    except JournalInUseError:
        return True


def identify(fd: int) -> tuple[int, ...]:
    """What tells an open journal file from any other, even one later made at its name."""
    st = os.fstat(fd)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _read_all(fd: int) -> bytes:
    with open(fd, "rb", closefd=False) as handle:
        return handle.read()


def _event(raw: bytes) -> dict[str, Any] | None:
    """One line decoded as an event object, or None if it is not one."""
    try:
        value = json.loads(raw.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not isinstance(value.get("event"), str):
        return None
    return value


def _opt_str(value: object) -> bool:
    return value is None or isinstance(value, str)


def _start_of(event: dict[str, Any] | None) -> dict[str, Any] | None:
    if event is None or event.get("event") != "start" or event.get("format") != FORMAT:
        return None
    keys = ("session_id", "trigger", "started_at")
    if not all(isinstance(event.get(k), str) for k in keys) or not _opt_str(event.get("sender")):
        return None
    return event


class _Reader:
    """Folds a journal's events after ``start`` into text, tool calls and a done flag."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[str, ToolCall] = {}
        self.completed = False
        self.skipped = 0

    def take(self, event: dict[str, Any] | None) -> None:
        if event is None or not self._apply(event):
            self.skipped += 1

    def _apply(self, event: dict[str, Any]) -> bool:
        kind, at = event["event"], event.get("at")
        if kind == "text" and isinstance(event.get("text"), str):
            self.text.append(event["text"])
            return True
        if kind == "done" and isinstance(at, str):
            self.completed = True
            return True
        call_id = event.get("call_id")
        if not isinstance(call_id, str) or not isinstance(at, str):
            return False
        if kind == "tool_start" and isinstance(event.get("tool"), str):
            if call_id in self.calls or not _opt_str(event.get("args")):
                return False
            self.calls[call_id] = ToolCall(call_id, event["tool"], event.get("args"), at)
            return True
        if kind == "tool_end" and isinstance(event.get("ok"), bool):
            call = self.calls.get(call_id)
            if call is None or call.finished or not _opt_str(event.get("result")):
                return False
            end = {"ok": event["ok"], "result_summary": event.get("result"), "finished_at": at}
            self.calls[call_id] = dataclasses.replace(call, finished=True, **end)
            return True
        return False


def parse(
    data: bytes, path: Path, session_id: str, key: tuple[int, ...] | None = None
) -> JournalRecovery:
    """A journal's bytes read back. Unreadable lines after the first are skipped and
    counted (a torn last line among them); a first line that is not a ``start`` event, or
    one of another session, raises :class:`JournalCorruptError`."""
    lines = data.split(b"\n")
    start = _start_of(_event(lines[0]))
    if start is None:
        raise JournalCorruptError(path, "its first line is not a journal start event")
    if start["session_id"] != session_id:
        raise JournalCorruptError(path, f"it belongs to session {start['session_id']!r}")
    reader = _Reader()
    for raw in lines[1:]:
        if raw.strip():
            reader.take(_event(raw))
    text, calls = "".join(reader.text), tuple(reader.calls.values())
    session = (start["session_id"], start["trigger"], start.get("sender"), start["started_at"])
    return JournalRecovery(*session, text, calls, reader.completed, reader.skipped, path, key)


def recover(
    directory: str | os.PathLike[str], session_id: str, *, delete: bool = False
) -> JournalRecovery:
    """Read back the orphaned journal of ``session_id``; never raises for a torn last line.

    The file is kept unless ``delete`` is true. To lose nothing to a crash, keep it: store
    what was recovered, then remove the file with :func:`discard`. Raises
    :class:`JournalNotFoundError` if there is no journal, :class:`JournalInUseError` while a
    live stream writes it and :class:`JournalCorruptError` for a file that is not one.
    """
    path = journal_path(directory, session_id)
    with _unheld(path, session_id) as fd:
        if fd is None:
            raise JournalNotFoundError(session_id, path)
        found = parse(_read_all(fd), path, session_id, identify(fd))
        if delete:
            path.unlink()
            sync_directory(path.parent)
    return found


def discard(recovery: JournalRecovery) -> bool:
    """Delete the journal file ``recovery`` was read from, once its content is safe
    elsewhere. Only that very file goes: False if it is gone or was replaced since.
    Raises :class:`JournalInUseError` if a live stream holds it."""
    if recovery.path is None or recovery.file_key is None:
        return False
    with _unheld(recovery.path, recovery.session_id) as fd:
        if fd is None or identify(fd) != recovery.file_key:
            return False
        recovery.path.unlink()
        sync_directory(recovery.path.parent)
    return True


def has_orphan(directory: str | os.PathLike[str], session_id: str) -> bool:
    """Whether ``session_id`` has a journal file that no live stream holds."""
    path = journal_path(directory, session_id)
    return path.is_file() and not is_held(path)


def _session_of(path: Path) -> str | None:
    """The session whose journal ``path`` is: the one its start line names if the file
    carries that session's name, else its stem if that is a session name used as it is (so
    :func:`recover` can report the file), else None."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(1 << 20)
    except OSError:
        return None
    start = _start_of(_event(first))
    named = [] if start is None else [str(start["session_id"])]
    for session in [*named, path.name[: -len(SUFFIX)]]:
        with contextlib.suppress(ValidationError):
            if journal_filename(session) == path.name:
                return session
    return None


def orphans(directory: str | os.PathLike[str]) -> list[str]:
    """The sessions with an orphaned journal in ``directory`` (sorted; none if the
    directory is missing). Journals that live streams hold are left out."""
    folder = Path(directory)
    if not folder.is_dir():
        return []
    files = [p for p in folder.iterdir() if p.name.endswith(SUFFIX) and p.name[0] != "."]
    found = {s for p in files if p.is_file() and not is_held(p) and (s := _session_of(p))}
    return sorted(found)
