"""Claude Code hooks (記憶注入システム, 記憶生成): what each hook event does, fail-open.

Claude Code runs a command for an event and writes one JSON object to its stdin
(``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and, per event, ``prompt``,
``source``, ``reason`` or ``trigger``). What the command prints on stdout is added to the
model's context for ``UserPromptSubmit`` and ``SessionStart`` (at most 10,000 characters).

* ``user-prompt-submit``: recall for the prompt and print the ``<memories>`` block (nothing for
  a slash command, an empty prompt, or when nothing is relevant);
* ``session-start``: print the strongest few memories and start an overdue batch;
* ``session-end`` / ``pre-compact``: only capture: append the transcript to the durable inbox
  ``HOME/inbox.jsonl`` and start a detached ``kioku hook drain`` that ingests it. These hooks
  get little time and sometimes an stdin that is never closed, so they read with a deadline
  and return at once;
* ``drain``: ingest every transcript of the inbox and remove the entries that are done.

Every hook fails open: an error is one line on stderr and in ``HOME/hooks.log`` (never any
memory text), and the exit code is 0 so the conversation goes on.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from kioku.records import Record

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.service.kioku import Kioku
    from kioku.service.recall import RecallResult

__all__ = [
    "CAPTURE_EVENTS",
    "EVENTS",
    "MAX_CONTEXT_CHARS",
    "DrainReport",
    "HookOptions",
    "capture",
    "drain",
    "log_error",
    "parse_payload",
    "read_stdin",
    "run_hook",
    "session_start_context",
    "user_prompt_context",
]

#: Command name → Claude Code event name.
EVENTS: Final = {
    "user-prompt-submit": "UserPromptSubmit",
    "session-start": "SessionStart",
    "session-end": "SessionEnd",
    "pre-compact": "PreCompact",
}
#: Events that only capture the transcript for the drain worker.
CAPTURE_EVENTS: Final = frozenset({"session-end", "pre-compact"})
#: Claude Code keeps at most this many characters of a hook's context output.
MAX_CONTEXT_CHARS: Final = 10_000
#: The session-start primer: how many memories and how many characters at most.
PRIME_COUNT: Final = 5
PRIME_BUDGET: Final = 1_500
#: A transcript that failed this many times is dropped from the inbox (and logged).
MAX_ATTEMPTS: Final = 3

INBOX_NAME: Final = "inbox.jsonl"
INBOX_LOCK_NAME: Final = "inbox.jsonl.lock"
DRAIN_LOCK_NAME: Final = "drain.lock"
LOG_NAME: Final = "hooks.log"
LOG_MAX_BYTES: Final = 1 << 20

#: How long each event waits for its stdin: (seconds in all, seconds after the first byte).
STDIN_DEADLINES: Final = {
    "user-prompt-submit": (5.0, 2.0),
    "session-start": (2.0, 0.5),
    "session-end": (0.8, 0.3),
    "pre-compact": (0.8, 0.3),
}


class HookError(Exception):
    """A hook could not do its work (bad input, missing field); logged, never raised out."""


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class HookOptions(Record):
    """The global options of ``kioku`` as far as hooks need them."""

    home: Path | None = None
    config_path: Path | None = None
    user_id: str | None = None
    agent_id: str | None = None

    @property
    def resolved_home(self) -> Path:
        from kioku.service.paths import resolve_home

        return resolve_home(self.home)

    def open(self) -> Kioku:
        from kioku.service.kioku import Kioku

        return Kioku.open(
            self.home,
            config_path=self.config_path,
            user_id=self.user_id,
            agent_id=self.agent_id,
        )

    def store_exists(self) -> bool:
        from kioku.service.paths import DB_FILENAME

        return (self.resolved_home / DB_FILENAME).is_file()


# -- stdin -----------------------------------------------------------------------------------


def read_stdin(fd: int, total: float, after_first: float) -> bytes:
    """What arrives on ``fd`` until it is closed, a whole JSON object has arrived, ``total``
    seconds have passed, or ``after_first`` seconds have passed since the first byte.

    A daemon thread does the blocking reads, so an stdin that is never closed cannot hold
    the hook up."""
    import queue

    chunks: queue.Queue[bytes] = queue.Queue()

    def pump() -> None:
        try:
            while True:
                chunk = os.read(fd, 65536)
                chunks.put(chunk)
                if not chunk:
                    return
        except OSError:
            chunks.put(b"")

    threading.Thread(target=pump, name="kioku-hook-stdin", daemon=True).start()
    start = time.monotonic()
    deadline = start + total
    data = bytearray()
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            chunk = chunks.get(timeout=left)
        except queue.Empty:
            break
        if not chunk:
            break
        if not data:
            deadline = min(deadline, time.monotonic() + after_first)
        data += chunk
        if _complete(bytes(data)):
            break
    return bytes(data)


def _complete(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data), dict)
    except ValueError:
        return False


def parse_payload(data: bytes) -> dict[str, Any]:
    """The hook's JSON object; HookError when it is not one."""
    if not data.strip():
        raise HookError("no input on stdin (expected the hook's JSON object)")
    try:
        payload = json.loads(data.decode("utf-8", errors="replace"))
    except ValueError as exc:
        raise HookError(f"stdin is not valid JSON ({exc.__class__.__name__}: {exc})") from None
    if not isinstance(payload, dict):
        raise HookError(f"stdin holds a JSON {type(payload).__name__}, not an object")
    return payload


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


# -- logging ---------------------------------------------------------------------------------


def log_error(home: Path | None, event: str, message: str, err: TextIO | None = None) -> None:
    """One line on stderr and appended to ``HOME/hooks.log``; never raises."""
    line = f"kioku hook {event}: {message}".replace("\n", " ")
    with suppress(Exception):  # fail open: a closed stderr must not matter
        print(line, file=err or sys.stderr)
    if home is None:
        return
    try:
        home.mkdir(parents=True, exist_ok=True)
        log = home / LOG_NAME
        try:
            if log.stat().st_size > LOG_MAX_BYTES:
                os.replace(log, log.with_name(LOG_NAME + ".1"))
        except OSError:
            pass
        stamp = datetime.now().astimezone().isoformat(timespec="seconds")
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, f"{stamp} {line}\n".encode())
        finally:
            os.close(fd)
    except Exception:  # noqa: S110 - fail open
        pass


# -- user-prompt-submit and session-start -----------------------------------------------------


def _budget(kioku: Kioku, cap: int = MAX_CONTEXT_CHARS) -> int:
    return max(0, min(kioku.config.retrieval.budget_chars, cap))


def should_skip(prompt: str | None) -> bool:
    """The spec's 除外ルール: empty prompts and slash commands get no memories."""
    text = (prompt or "").strip()
    return not text or text.startswith("/")


def user_prompt_context(kioku: Kioku, prompt: str | None, session_id: str | None) -> str:
    """The ``<memories>`` block for ``prompt`` (marks the recalls), or "" when nothing is
    relevant or the prompt is excluded. Never longer than the budget or 10,000 characters."""
    return user_prompt_recall(kioku, prompt, session_id)[0]


def user_prompt_recall(
    kioku: Kioku, prompt: str | None, session_id: str | None, *, mark: bool = True
) -> tuple[str, RecallResult | None]:
    """:func:`user_prompt_context` and the recall behind it (None for an excluded prompt).
    With ``mark=False`` nothing is written; :meth:`Kioku.leave_traces` does it later."""
    if should_skip(prompt):
        return "", None
    assert prompt is not None
    result = kioku.recall(prompt, session_id=session_id, mark=mark)
    block = result.block
    budget = _budget(kioku)
    if len(block) > budget:
        from kioku.service.recall import memories_block

        block = memories_block(result.items, budget)
    return block, result


def _strongest(kioku: Kioku, count: int) -> list[Memory]:
    from kioku.ports.store import Order

    chosen: list[Memory] = []
    seen: set[str] = set()
    for memories in (
        kioku.list(protected=True, order=Order.SCORE_DESC, limit=count),
        kioku.list(level=1, order=Order.SCORE_DESC, limit=count),
    ):
        for memory in memories:
            if memory.id not in seen and len(chosen) < count:
                seen.add(memory.id)
                chosen.append(memory)
    return chosen


def session_start_context(kioku: Kioku) -> str:
    """A small primer: the protected and the strongest Level 1 memories, best first, within
    ``PRIME_BUDGET`` characters (recalls are not marked: nothing asked for them)."""
    from kioku.core.inject import Injected, format_memories

    memories = _strongest(kioku, PRIME_COUNT)
    return format_memories(
        [Injected(m.created, m.current_level, False, m.trigger, m.content) for m in memories],
        _budget(kioku, PRIME_BUDGET),
    )


def start_overdue_batch(kioku: Kioku, options: HookOptions, reason: str) -> int | None:
    """The spec's fallback trigger: start an overdue batch in the background; its pid."""
    from kioku.service.schedule import auto_batch_disabled, batch_status, start_detached_batch

    if auto_batch_disabled(os.environ) or not batch_status(kioku).overdue:
        return None
    return start_detached_batch(options.resolved_home, options.config_path, reason)


# -- session-end and pre-compact: the inbox --------------------------------------------------


def _lock(fd: int, *, block: bool) -> None:
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        import msvcrt

        msvcrt.locking(fd, msvcrt.LK_LOCK if block else msvcrt.LK_NBLCK, 1)
    else:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX if block else fcntl.LOCK_EX | fcntl.LOCK_NB)


@contextmanager
def _file_lock(path: Path, *, block: bool) -> Iterator[bool]:
    """An exclusive lock on ``path``; yields False when ``block`` is off and it is taken."""
    path.parent.mkdir(parents=True, exist_ok=True)
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


def capture(options: HookOptions, event: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """Append the transcript of ``payload`` to the inbox (synced to disk); the entry."""
    transcript = _text(payload, "transcript_path")
    if transcript is None:
        raise HookError("the input has no transcript_path")
    entry: dict[str, Any] = {
        "transcript_path": transcript,
        "session_id": _text(payload, "session_id"),
        "event": EVENTS.get(event, event),
        "at": datetime.now().astimezone().isoformat(timespec="seconds"),
    }
    home = options.resolved_home
    line = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8")
    with _file_lock(home / INBOX_LOCK_NAME, block=True):
        fd = os.open(home / INBOX_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
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


@dataclass(slots=True)
class DrainReport:
    """What one ``kioku hook drain`` did."""

    ingested: int = 0  # transcripts ingested
    added: int = 0  # memories added by them
    failed: int = 0  # transcripts that failed (kept for a retry, or dropped after MAX_ATTEMPTS)
    dropped: int = 0  # entries removed without success (unreadable, missing, too many failures)
    busy: bool = False  # another drain held the lock
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "ingested": self.ingested,
            "added": self.added,
            "failed": self.failed,
            "dropped": self.dropped,
            "busy": self.busy,
            "errors": list(self.errors),
        }


def _read_inbox(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    return text.splitlines(keepends=True)


def _rewrite_inbox(home: Path, done: int, keep: list[str]) -> None:
    """Under the inbox lock: drop the first ``done`` lines (those this pass read), put
    ``keep`` (entries to retry) first, and keep whatever was appended meanwhile."""
    path = home / INBOX_NAME
    with _file_lock(home / INBOX_LOCK_NAME, block=True):
        rest = _read_inbox(path)[done:]
        lines = [*keep, *rest]
        if not lines:
            path.unlink(missing_ok=True)
            return
        temp = path.with_name(f".{INBOX_NAME}.{os.getpid()}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, "".join(lines).encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)


def _inbox_pending(home: Path) -> bool:
    try:
        return (home / INBOX_NAME).stat().st_size > 0
    except OSError:
        return False


IngestFn = Callable[..., Any]


def _drain_pass(
    options: HookOptions,
    kioku: Kioku,
    ingest: IngestFn,
    report: DrainReport,
    failed: set[str],
) -> int:
    """Ingest what the inbox holds now; how many of its lines this pass settled (entries of a
    transcript that already failed in this run stay as they are, for a later drain)."""
    home = options.resolved_home
    with _file_lock(home / INBOX_LOCK_NAME, block=True):
        lines = _read_inbox(home / INBOX_NAME)
    keep: list[str] = []
    done: set[str] = set()
    waiting = 0
    for line in lines:
        try:
            entry = json.loads(line)
            if not isinstance(entry, dict):
                raise TypeError("not an object")
            path = entry["transcript_path"]
            if not isinstance(path, str) or not path:
                raise TypeError("no transcript_path")
        except (ValueError, KeyError, TypeError):
            if line.strip():
                report.dropped += 1
                report.errors.append("an unreadable inbox line was dropped")
            continue
        if path in failed:
            keep.append(line if line.endswith("\n") else line + "\n")
            waiting += 1
            continue
        if path in done:
            continue  # the same transcript twice in one pass (pre-compact, then session-end)
        session = entry.get("session_id")
        try:
            result = ingest(kioku, Path(path), session_id=session if session else None)
        except FileNotFoundError:
            report.dropped += 1
            report.errors.append(f"transcript not found: {path}")
            continue
        except Exception as exc:
            report.failed += 1
            failed.add(path)
            attempts = int(entry.get("attempts", 0)) + 1
            report.errors.append(f"{path}: {type(exc).__name__}: {exc} (attempt {attempts})")
            if attempts < MAX_ATTEMPTS:
                keep.append(json.dumps({**entry, "attempts": attempts}, ensure_ascii=False) + "\n")
            else:
                report.dropped += 1
            continue
        done.add(path)
        report.ingested += 1
        report.added += int(getattr(result, "added", 0))
    if lines:
        _rewrite_inbox(home, len(lines), keep)
    return len(lines) - waiting


def drain(options: HookOptions, ingest: IngestFn | None = None) -> DrainReport:
    """Ingest every transcript in the inbox, one drain at a time (a second one returns with
    ``busy``). Entries are removed only after they are ingested, so a worker that dies loses
    nothing: the next drain ingests them again (ingestion is idempotent)."""
    report = DrainReport()
    home = options.resolved_home
    if ingest is None:
        from kioku.service.transcripts import ingest_transcript

        ingest = ingest_transcript
    kioku: Kioku | None = None
    failed: set[str] = set()
    settled = True
    try:
        while settled and _inbox_pending(home):
            with _file_lock(home / DRAIN_LOCK_NAME, block=False) as locked:
                if not locked:
                    report.busy = True
                    break
                if kioku is None:
                    kioku = options.open()
                while settled and _inbox_pending(home):
                    # stop when a pass settled nothing: only entries to retry later are left
                    settled = _drain_pass(options, kioku, ingest, report, failed) > 0
            # released: look once more, for an entry appended while another worker gave up
        if kioku is not None:
            if report.added:
                kioku.warm_vector_cache()  # the next prompt answered in process maps it
            _quietly(start_overdue_batch, kioku, options, "`kioku hook drain`")
    finally:
        if kioku is not None:
            kioku.close()
    return report


# -- one hook run ----------------------------------------------------------------------------


def run_hook(
    event: str,
    options: HookOptions,
    *,
    stdin_fd: int | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    raw: bytes | None = None,
) -> int:
    """Run hook ``event`` (a key of EVENTS) reading its JSON from ``stdin_fd`` (or taking
    ``raw``, already read); always 0."""
    home: Path | None = None
    try:
        home = options.resolved_home
        total, after_first = STDIN_DEADLINES[event]
        fd = sys.stdin.fileno() if stdin_fd is None else stdin_fd
        payload = parse_payload(raw if raw is not None else read_stdin(fd, total, after_first))
        text = _dispatch(event, options, payload)
        if text:
            stream = out or sys.stdout
            stream.write(text[:MAX_CONTEXT_CHARS] + "\n")
            stream.flush()
    except BrokenPipeError:
        pass
    except Exception as exc:
        if os.environ.get("KIOKU_DEBUG"):
            raise
        message = str(exc) if isinstance(exc, HookError) else f"{type(exc).__name__}: {exc}"
        log_error(home, event, message, err)
    return 0


def _dispatch(event: str, options: HookOptions, payload: Mapping[str, Any]) -> str:
    if event in CAPTURE_EVENTS:
        capture(options, event, payload)
        start_drain(options)
        return ""
    if event == "user-prompt-submit":
        prompt = payload.get("prompt")
        if not isinstance(prompt, str) or should_skip(prompt) or not options.store_exists():
            return ""
        warm = _ask_daemon(options, prompt, _text(payload, "session_id"))
        if warm is not None:
            return warm
        # No overdue-batch check here: SessionStart and the daemon make it, and on every
        # prompt answered in process it would cost the import of the batch machinery.
        _limit_blas_threads()
        with options.open() as kioku:
            return user_prompt_context(kioku, prompt, _text(payload, "session_id"))
    if event == "session-start":
        if not options.store_exists():
            return ""
        with options.open() as kioku:
            text = session_start_context(kioku)
            _quietly(start_overdue_batch, kioku, options, "the SessionStart hook")
        return text
    raise HookError(f"unknown hook event {event!r}")


def _limit_blas_threads() -> None:
    """Let OpenBLAS start one thread, should this process load numpy (unless the user chose).

    A prompt answered in process usually searches the vector cache file without numpy. When it
    cannot (the file is missing or stale after a write), it loads numpy for one small product,
    which a thread pool does not speed up while the pool's idle threads spin on the CPU: about
    a third more CPU time. OpenBLAS reads the variable when it loads; nothing this process
    starts from here on inherits it (the daemon was started before)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _ask_daemon(options: HookOptions, prompt: str, session_id: str | None) -> str | None:
    """The block from the warm daemon (kioku.service.daemon), or None to answer in process.

    When no daemon answers, one is started in the background for the next prompts, unless
    ``KIOKU_NO_DAEMON=1``. A home with its own ``--config`` file is always answered in process.
    """
    if options.config_path is not None or os.environ.get("KIOKU_NO_DAEMON") == "1":
        return None
    from kioku.service import daemon

    home = options.resolved_home
    answer = daemon.ask(
        home,
        {
            "op": "recall",
            "prompt": prompt,
            "session_id": session_id,
            "user_id": options.user_id,
            "agent_id": options.agent_id,
        },
        timeout=20.0,
    )
    if answer is not None and answer.get("ok") and isinstance(answer.get("block"), str):
        return str(answer["block"])
    if answer is None:
        _quietly(daemon.start_detached, home)
    return None


def _quietly(function: Callable[..., object], *args: object) -> None:
    """The background batch is a bonus: its failure never changes a hook's answer."""
    try:
        function(*args)
    except Exception:
        if os.environ.get("KIOKU_DEBUG"):
            raise
