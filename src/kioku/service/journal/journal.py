"""The write-ahead journal of one streaming response: what was streamed survives a SIGKILL.

While a model streams its answer, the text is buffered and written out as ``text`` events,
each followed by ``os.fsync``, whenever FLUSH_SIZE_CHARS characters are waiting or
FLUSH_INTERVAL_SEC seconds have passed since the last write. A small background thread
writes out a buffer the stream stopped feeding, so a stream that stalls mid-sentence and
then dies loses at most about a second of text. ``finalize`` marks the stream ``done`` and
deletes the file; a crash leaves it behind for :func:`~kioku.service.journal.files.recover`.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
import weakref
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from kioku.service.journal.files import (
    FORMAT,
    JournalClosedError,
    JournalError,
    JournalInUseError,
    JournalRecovery,
    OrphanJournalError,
    ToolCall,
    identify,
    is_held,
    journal_filename,
    sync_directory,
    try_lock,
)

__all__ = ["FLUSH_INTERVAL_SEC", "FLUSH_SIZE_CHARS", "TIMER_TICK_SEC", "StreamingJournal"]

FLUSH_INTERVAL_SEC: Final = 1.0
FLUSH_SIZE_CHARS: Final = 500
#: How often the background thread looks for a buffer older than FLUSH_INTERVAL_SEC.
TIMER_TICK_SEC: Final = 0.05
_OWNER_ONLY_DIR: Final = 0o700
_OWNER_ONLY_FILE: Final = 0o600


def _local_now() -> datetime:
    return datetime.now().astimezone()


def _encode(event: dict[str, Any]) -> bytes:
    line = json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n"
    return line.encode("utf-8", "surrogatepass")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _ensure_directory(directory: Path) -> None:
    """Create the journal directory owner-only (0700) if it is missing."""
    if directory.is_dir():
        return
    try:
        directory.mkdir(mode=_OWNER_ONLY_DIR, parents=True)
        os.chmod(directory, _OWNER_ONLY_DIR)  # a umask that drops owner bits must not matter
    except FileExistsError:
        if not directory.is_dir():
            raise JournalError(f"{directory} exists and is not a directory") from None


def _remove_stale_temps(directory: Path, name: str) -> None:
    """Remove temporary files of this journal's name left by an open that crashed; a
    temporary file an opener still holds is left alone."""
    for temp in directory.glob(f".{name}.*.tmp"):
        if not is_held(temp):
            temp.unlink(missing_ok=True)


def _release(fd: int, stop: threading.Event) -> None:
    """Stop the background thread and close the file (which drops the lock)."""
    stop.set()
    os.close(fd)


def _flush_when_stale(ref: weakref.ReferenceType[StreamingJournal], stop: threading.Event) -> None:
    """The background thread: every TIMER_TICK_SEC, write out a buffer older than the flush
    interval. It holds the journal only weakly, so a journal dropped unclosed still ends."""
    while not stop.wait(TIMER_TICK_SEC):
        journal = ref()
        if journal is None or not journal._flush_if_stale():
            return
        del journal


class StreamingJournal:
    """The journal of one streaming response; open it with :meth:`open`.

    Thread-safe: one lock guards the buffer and the file. Writes after :meth:`finalize` or
    :meth:`close` raise :class:`~kioku.service.journal.files.JournalClosedError`; a failed
    write (a full disk) raises :class:`~kioku.service.journal.files.JournalError` and stops
    the journal, whose file then stays for recovery.
    """

    def __init__(
        self,
        path: Path,
        fd: int,
        start: dict[str, Any],
        clock: Callable[[], float],
        now: Callable[[], datetime],
        background: bool,
    ) -> None:
        """Use :meth:`open`; this only wraps a journal file already created and locked."""
        self.path = path
        self.session_id: str = start["session_id"]
        self.trigger: str = start["trigger"]
        self.sender: str | None = start["sender"]
        self.started_at: str = start["started_at"]
        self._fd = fd
        self._clock = clock
        self._now = now
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._pending_chars = 0
        self._last_flush = clock()
        self._text: list[str] = []
        self._calls: dict[str, ToolCall] = {}
        self._closed = False
        self._failure: OSError | None = None
        stop = threading.Event()
        self._release = weakref.finalize(self, _release, fd, stop)
        self._timer: threading.Thread | None = None
        if background:
            self._timer = threading.Thread(
                target=_flush_when_stale,
                args=(weakref.ref(self), stop),
                name=f"kioku-journal-{self.session_id[:40]}",
                daemon=True,
            )
            self._timer.start()

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        session_id: str,
        *,
        trigger: str,
        sender: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = _local_now,
        background: bool = True,
    ) -> StreamingJournal:
        """Start the journal of a streaming response of ``session_id`` in ``directory``.

        The ``start`` event (trigger, sender, session, ``started_at`` from ``now``) is on
        disk before the file appears under its name. ``clock`` times the flush interval;
        ``background=False`` leaves out the thread that writes out a stalled buffer, so
        tests of the flush policy depend on ``clock`` alone. Raises
        :class:`~kioku.service.journal.files.OrphanJournalError` while an earlier journal of
        the session waits for recovery, and
        :class:`~kioku.service.journal.files.JournalInUseError` while one is open.
        """
        folder = Path(directory)
        name = journal_filename(session_id)
        path = folder / name
        _ensure_directory(folder)
        _refuse_existing(path, session_id)
        _remove_stale_temps(folder, name)
        start = {
            "event": "start",
            "format": FORMAT,
            "session_id": session_id,
            "trigger": trigger,
            "sender": sender,
            "started_at": now().isoformat(),
        }
        fd = _create_linked(folder, name, session_id, _encode(start))
        return cls(path, fd, start, clock, now, background)

    # -- writing ---------------------------------------------------------------------------

    def write_text(self, fragment: str) -> None:
        """Add a fragment of the response. It is written out with the text before it once
        FLUSH_SIZE_CHARS characters wait or FLUSH_INTERVAL_SEC passed since the last write;
        fragments are never split or altered. An empty fragment changes nothing."""
        with self._lock:
            self._check_writable()
            if not fragment:
                return
            self._pending.append(fragment)
            self._pending_chars += len(fragment)
            if (
                self._pending_chars >= FLUSH_SIZE_CHARS
                or self._clock() - self._last_flush >= FLUSH_INTERVAL_SEC
            ):
                self._flush_locked()

    def write_tool_start(self, tool: str, args_summary: str | None = None) -> str:
        """Record that a tool call started (after the text before it); returns its call id."""
        with self._lock:
            self._check_writable()
            call_id = f"call-{len(self._calls) + 1}"
            at = self._now().isoformat()
            self._flush_locked()
            self._append({"event": "tool_start", "call_id": call_id, "tool": tool,
                          "args": args_summary, "at": at})  # fmt: skip
            self._calls[call_id] = ToolCall(call_id, tool, args_summary, at)
            return call_id

    def write_tool_end(self, call_id: str, ok: bool, result_summary: str | None = None) -> None:
        """Record how the tool call ``call_id`` (from :meth:`write_tool_start`) ended."""
        with self._lock:
            self._check_writable()
            call = self._calls.get(call_id)
            if call is None or call.finished:
                state = "unknown" if call is None else "already ended"
                raise JournalError(f"tool call {call_id!r} is {state} in this journal")
            at = self._now().isoformat()
            self._flush_locked()
            self._append({"event": "tool_end", "call_id": call_id, "ok": ok,
                          "result": result_summary, "at": at})  # fmt: skip
            self._calls[call_id] = ToolCall(
                call_id, call.tool, call.args_summary, call.started_at,
                True, ok, result_summary, at,
            )  # fmt: skip

    def flush(self) -> None:
        """Write out the buffered text now (nothing if none is waiting)."""
        with self._lock:
            self._check_writable()
            self._flush_locked()

    # -- ending ----------------------------------------------------------------------------

    def finalize(self, *, delete: bool = True) -> JournalRecovery:
        """End the stream: write out the text, record ``done``, close the file and delete
        it; returns what was streamed. Call it once the response is stored elsewhere.
        With ``delete=False`` the completed file stays until
        :func:`~kioku.service.journal.files.discard` is given the returned record."""
        with self._lock:
            self._check_writable()
            self._flush_locked()
            self._append({"event": "done", "at": self._now().isoformat()})
            key = identify(self._fd) if not delete else None
            if delete:
                self.path.unlink()
                sync_directory(self.path.parent)
            self._closed = True
            self._release()
            recovery = JournalRecovery(
                session_id=self.session_id,
                trigger=self.trigger,
                sender=self.sender,
                started_at=self.started_at,
                text="".join(self._text),
                tool_calls=tuple(self._calls.values()),
                completed=True,
                path=self.path,
                file_key=key,
            )
        self._join_timer()
        return recovery

    def close(self) -> None:
        """Stop without finishing: write out the buffered text and close the file, which
        stays as an orphan to recover. Does nothing once finalized or closed."""
        with self._lock:
            if self._closed:
                return
            try:
                if self._failure is None:
                    self._flush_locked()
            finally:
                self._closed = True
                self._release()
        self._join_timer()

    @property
    def closed(self) -> bool:
        """Whether the journal was finalized, closed, or stopped by a failed write."""
        return self._closed

    def __enter__(self) -> StreamingJournal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close without finishing unless :meth:`finalize` was called: a stream that
        raised keeps its journal for recovery."""
        self.close()

    # -- internals -------------------------------------------------------------------------

    def _check_writable(self) -> None:
        if self._failure is not None:
            raise JournalError(
                f"the streaming journal {self.path} could not be written: {self._failure}",
                hint=f"check the free space and permissions of {self.path.parent}",
            ) from self._failure
        if self._closed:
            raise JournalClosedError(f"the streaming journal of {self.session_id!r} is closed")

    def _append(self, event: dict[str, Any]) -> None:
        """Write one event line and fsync it; a failure stops the journal for good."""
        try:
            _write_all(self._fd, _encode(event))
            os.fsync(self._fd)
        except OSError as exc:
            self._failure = exc
            self._closed = True
            self._release()
            self._check_writable()

    def _flush_locked(self) -> None:
        if not self._pending:
            return
        text = "".join(self._pending)
        self._append({"event": "text", "text": text})
        self._text.append(text)
        self._pending.clear()
        self._pending_chars = 0
        self._last_flush = self._clock()

    def _flush_if_stale(self) -> bool:
        """The background thread's check; False once the journal is closed."""
        with self._lock:
            if self._closed:
                return False
            if self._pending and self._clock() - self._last_flush >= FLUSH_INTERVAL_SEC:
                try:
                    self._flush_locked()
                except JournalError:
                    return False  # the writer sees the failure on its next call
            return True

    def _join_timer(self) -> None:
        timer = self._timer
        if timer is not None and timer is not threading.current_thread():
            timer.join()


def _refuse_existing(path: Path, session_id: str) -> None:
    if path.exists():
        if is_held(path):
            raise JournalInUseError(session_id, path)
        raise OrphanJournalError(session_id, path)


def _create_linked(folder: Path, name: str, session_id: str, start: bytes) -> int:
    """Write ``start`` to a new locked owner-only file and link it in as ``folder/name``;
    returns its descriptor, open for appending. Linking (not renaming) fails if a journal
    appeared meanwhile, so a concurrent open never replaces one."""
    path = folder / name
    temp = folder / f".{name}.{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temp, flags, _OWNER_ONLY_FILE)
    try:
        if hasattr(os, "fchmod"):
            os.fchmod(fd, _OWNER_ONLY_FILE)  # the umask must not change it
        try_lock(fd)
        _write_all(fd, start)
        os.fsync(fd)
        try:
            os.link(temp, path)
        except FileExistsError:
            _refuse_existing(path, session_id)
            raise JournalInUseError(session_id, path) from None
        except FileNotFoundError:
            raise JournalInUseError(session_id, path) from None  # our temp was swept
        temp.unlink()
        sync_directory(folder)
    except BaseException:
        os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    return fd
