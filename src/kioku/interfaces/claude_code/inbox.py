"""The durable inbox of the capture hooks, its drain worker and its dead-letter file.

* ``HOME/inbox.jsonl``: one line per captured transcript (``transcript_path``,
  ``session_id``, ``event``, ``at``; ``attempts`` once a drain failed on it), appended and
  synced by the session-end and pre-compact hooks.
* ``kioku hook drain`` ingests every entry and removes it once its turns are stored. An entry
  that fails is kept for the next drain; after ``MAX_ATTEMPTS`` failed drains, or at once when
  its transcript is missing or its line is unreadable, it moves to the dead-letter file.
* ``HOME/inbox.dead.jsonl`` (0600): the inbox entries no drain could store, each with the
  error and the number of attempts (an unreadable line is kept as it was, under ``line``).
  It holds what the inbox held (paths and session ids), never turn text. ``kioku doctor``
  reports it; :func:`retry_dead` (``kioku ingest --retry``) ingests its entries again and
  removes each one only once it is stored.

Both files change only under the inbox lock (``HOME/inbox.jsonl.lock``): appends are one
synced write, rewrites go through a temporary file and an atomic rename, and an entry is
written to the dead-letter file before it leaves the inbox, so a crash at any point loses
nothing (at worst an entry is in both files, and ingestion is idempotent).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kioku.interfaces.claude_code.hook_common import (
    EVENTS,
    HookError,
    HookOptions,
    log_error,
    quietly,
    start_overdue_batch,
    usable_session,
)
from kioku.interfaces.claude_code.inbox_files import (
    DEAD_NAME,
    DRAIN_LOCK_NAME,
    INBOX_LOCK_NAME,
    INBOX_NAME,
    append_lines,
    dead_line,
    entry_of,
    file_lock,
    line_of,
    now_iso,
    read_lines,
    replace_lines,
)

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = [
    "DEAD_NAME",
    "INBOX_NAME",
    "MAX_ATTEMPTS",
    "DeadLetters",
    "DrainReport",
    "RetryReport",
    "capture",
    "dead_letters",
    "drain",
    "drain_command",
    "retry_dead",
    "start_drain",
    "unusable_path",
]

#: An entry that failed in this many drains moves to the dead-letter file.
MAX_ATTEMPTS: Final = 3


IngestFn = Callable[..., Any]


# -- capture ---------------------------------------------------------------------------------


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def unusable_path(path: str) -> str | None:
    """Why ``path`` cannot name a file on this system (a NUL character, or a lone surrogate
    the file system encoding cannot write); None when it can."""
    if "\x00" in path:
        return "it holds a NUL character, which no file name has"
    try:
        os.fsencode(path)
    except UnicodeEncodeError:
        return "it holds a lone surrogate, which no file name on this system has"
    return None


def capture(options: HookOptions, event: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """Append the transcript of ``payload`` to the inbox (synced to disk); the entry."""
    transcript = _text(payload, "transcript_path")
    if transcript is None:
        raise HookError("the input has no transcript_path")
    problem = unusable_path(transcript)
    if problem is not None:
        raise HookError(f"the input's transcript_path {transcript!r} is not a file name: {problem}")
    entry: dict[str, Any] = {
        "transcript_path": transcript,
        "session_id": _text(payload, "session_id"),
        "event": EVENTS.get(event, event),
        "at": now_iso(),
    }
    home = options.resolved_home
    with file_lock(home / INBOX_LOCK_NAME, block=True):
        append_lines(home / INBOX_NAME, [line_of(entry)])
    return entry


def drain_command(options: HookOptions) -> list[str]:
    """``python -m kioku --home HOME [--config F] [--user U] [--agent A] hook drain``."""
    command = [os.path.abspath(sys.executable), "-m", "kioku"]
    command += ["--home", str(options.resolved_home.absolute())]
    if options.config_path is not None:
        command += ["--config", str(options.config_path.expanduser().absolute())]
    if options.user_id:
        command += ["--user", options.user_id]
    if options.agent_id:
        command += ["--agent", options.agent_id]
    return [*command, "hook", "drain"]


def start_drain(options: HookOptions) -> int:
    """Start the drain worker in its own session and return at once with its pid."""
    import subprocess

    extra: dict[str, Any] = {}
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        extra["creationflags"] = subprocess.DETACHED_PROCESS | subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        extra["start_new_session"] = True
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and arguments
        drain_command(options),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        close_fds=True,
        cwd=str(options.resolved_home),
        **extra,
    )
    return int(process.pid)


# -- drain -----------------------------------------------------------------------------------


@dataclass(slots=True)
class DrainReport:
    """What one ``kioku hook drain`` did."""

    ingested: int = 0  # transcripts ingested
    added: int = 0  # memories added by them
    failed: int = 0  # transcripts that failed in this drain (kept, or moved to dead letters)
    dead: int = 0  # entries moved to the dead-letter file
    busy: bool = False  # another drain held the lock
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "ingested": self.ingested,
            "added": self.added,
            "failed": self.failed,
            "dead": self.dead,
            "busy": self.busy,
            "errors": list(self.errors),
        }


def _attempts(entry: Mapping[str, Any]) -> int:
    """The failed drains an entry records (0 when the count is missing or not a count)."""
    value = entry.get("attempts")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _inbox_pending(home: Path) -> bool:
    try:
        return (home / INBOX_NAME).stat().st_size > 0
    except OSError:
        return False


def _settle(home: Path, done: int, keep: list[str], dead: list[str]) -> None:
    """Under the inbox lock: append ``dead`` to the dead-letter file, then drop the first
    ``done`` inbox lines (those this pass read), put ``keep`` (entries to retry) first, and
    keep whatever was appended meanwhile."""
    with file_lock(home / INBOX_LOCK_NAME, block=True):
        if dead:
            append_lines(home / DEAD_NAME, dead)
        replace_lines(home / INBOX_NAME, [*keep, *read_lines(home / INBOX_NAME)[done:]])


def _drain_pass(
    home: Path, kioku: Kioku, ingest: IngestFn, report: DrainReport, failed: set[str]
) -> int:
    """Ingest what the inbox holds now; how many of its lines this pass settled (entries of a
    transcript that already failed in this run stay as they are, for a later drain)."""
    with file_lock(home / INBOX_LOCK_NAME, block=True):
        lines = read_lines(home / INBOX_NAME)
    keep: list[str] = []
    dead: list[str] = []
    done: set[str] = set()
    waiting = 0
    for line in lines:
        entry = entry_of(line)
        if entry is None:
            if line.strip():
                report.dead += 1
                report.errors.append(f"an unreadable inbox line was moved to {DEAD_NAME}")
                unreadable = {"line": line.rstrip("\n"), "error": "not an inbox entry"}
                dead.append(line_of({**unreadable, "attempts": 0, "dead_at": now_iso()}))
            continue
        path = entry["transcript_path"]
        if path in failed:
            keep.append(line)
            waiting += 1
            continue
        if path in done:
            continue  # the same transcript twice in one pass (pre-compact, then session-end)
        attempts = _attempts(entry) + 1
        problem = unusable_path(path)
        if problem is not None:  # written by hand, or by an older kioku: it never will be read
            report.dead += 1
            report.errors.append(f"transcript path {path!r} {problem} (moved to {DEAD_NAME})")
            dead.append(dead_line(entry, f"not a file name: {problem}", attempts))
            continue
        try:
            result = ingest(kioku, Path(path), session_id=usable_session(entry.get("session_id")))
        except FileNotFoundError:
            report.dead += 1
            report.errors.append(f"transcript not found: {path} (moved to {DEAD_NAME})")
            dead.append(dead_line(entry, "transcript not found", attempts))
            continue
        except Exception as exc:
            report.failed += 1
            failed.add(path)
            error = f"{type(exc).__name__}: {exc}"
            report.errors.append(f"{path}: {error} (attempt {attempts} of {MAX_ATTEMPTS})")
            if attempts < MAX_ATTEMPTS:
                keep.append(line_of({**entry, "attempts": attempts}))
            else:
                report.dead += 1
                report.errors.append(f"{path}: moved to {DEAD_NAME}; run `kioku ingest --retry`")
                dead.append(dead_line(entry, error, attempts))
            continue
        done.add(path)
        report.ingested += 1
        report.added += int(getattr(result, "added", 0))
    if lines:
        _settle(home, len(lines), keep, dead)
    return len(lines) - waiting


def drain(options: HookOptions, ingest: IngestFn | None = None) -> DrainReport:
    """Ingest every transcript in the inbox, one drain at a time (a second one returns with
    ``busy``). Entries are removed only after they are ingested or moved to the dead-letter
    file, so a worker that dies loses nothing: the next drain ingests them again (ingestion
    is idempotent). Warnings (a provider that falls back) go to ``HOME/hooks.log``."""
    report = DrainReport()
    home = options.resolved_home
    if ingest is None:
        from kioku.interfaces.claude_code.ingest import ingest_transcript

        ingest = ingest_transcript

    def warn(message: str) -> None:
        log_error(home, "drain", f"warning: {message}")

    kioku: Kioku | None = None
    failed: set[str] = set()
    settled = True
    try:
        while settled and _inbox_pending(home):
            with file_lock(home / DRAIN_LOCK_NAME, block=False) as locked:
                if not locked:
                    report.busy = True
                    break
                if kioku is None:
                    kioku = options.open(on_warning=warn)
                while settled and _inbox_pending(home):
                    # stop when a pass settled nothing: only entries to retry later are left
                    settled = _drain_pass(home, kioku, ingest, report, failed) > 0
            # released: look once more, for an entry appended while another worker gave up
        if kioku is not None:
            if report.added:
                kioku.warm_vector_cache()  # the next prompt answered in process maps it
            quietly(start_overdue_batch, kioku, options, "`kioku hook drain`")
    finally:
        if kioku is not None:
            kioku.close()
    return report


# -- the dead-letter file ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeadLetters:
    """What the dead-letter file holds: how many entries, and when the oldest died."""

    path: Path
    count: int
    oldest: str | None


def dead_letters(home: Path) -> DeadLetters:
    """The dead-letter file of ``home`` (count 0 when there is none)."""
    path = home / DEAD_NAME
    lines = [line for line in read_lines(path) if line.strip()]
    stamps: list[str] = []
    for line in lines:
        try:
            value = json.loads(line).get("dead_at")
        except (ValueError, AttributeError):
            continue
        if isinstance(value, str):
            stamps.append(value)
    return DeadLetters(path, len(lines), min(stamps) if stamps else None)


@dataclass(slots=True)
class RetryReport:
    """What ``kioku ingest --retry`` did with the dead-letter file."""

    ingested: int = 0  # entries stored and removed from the file
    added: int = 0  # memories added by them
    left: int = 0  # entries still in the file
    errors: list[str] = field(default_factory=list)


def retry_dead(home: Path, kioku: Kioku, ingest: IngestFn | None = None) -> RetryReport:
    """Ingest every entry of the dead-letter file again; remove each once it is stored.

    An entry that fails again stays, with the new error and one more attempt; an unreadable
    line stays as it is (look at it, then delete it by hand). Running it twice is safe:
    ingestion skips the turns already stored."""
    if ingest is None:
        from kioku.interfaces.claude_code.ingest import ingest_transcript

        ingest = ingest_transcript
    report = RetryReport()
    path = home / DEAD_NAME
    with file_lock(home / INBOX_LOCK_NAME, block=True):
        lines = [line for line in read_lines(path) if line.strip()]
    updated: dict[str, str] = {}  # a line of the file → what replaces it ("" removes it)
    for line in lines:
        entry = entry_of(line)
        if entry is None:
            report.left += 1
            report.errors.append(f"{path}: a line that is not an inbox entry stays in the file")
            continue
        transcript = entry["transcript_path"]
        try:
            session = usable_session(entry.get("session_id"))
            result = ingest(kioku, Path(transcript), session_id=session)
        except Exception as exc:
            error = (
                "transcript not found"
                if isinstance(exc, FileNotFoundError)
                else f"{type(exc).__name__}: {exc}"
            )
            report.left += 1
            report.errors.append(f"{transcript}: {error}")
            updated[line] = dead_line(entry, error, _attempts(entry) + 1)
            continue
        report.ingested += 1
        report.added += int(getattr(result, "added", 0))
        updated[line] = ""
    with file_lock(home / INBOX_LOCK_NAME, block=True):
        current = read_lines(path)  # the file as it is now: a drain may have appended
        replace_lines(
            path, [updated.pop(line, line) for line in current if updated.get(line) != ""]
        )
    return report
