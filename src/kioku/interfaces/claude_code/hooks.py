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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TextIO

from kioku.interfaces.claude_code.hook_common import (
    CAPTURE_EVENTS,
    EVENTS,
    MAX_INPUT_BYTES,
    HookError,
    HookOptions,
    log_error,
    quietly,
    start_overdue_batch,
    usable_session,
)
from kioku.interfaces.claude_code.inbox import DrainReport, capture, drain, start_drain

if TYPE_CHECKING:
    from pathlib import Path

    from kioku.core.model import Memory
    from kioku.service.kioku import Kioku
    from kioku.service.recall.results import RecallResult

__all__ = [
    "CAPTURE_EVENTS",
    "EVENTS",
    "MAX_CONTEXT_CHARS",
    "MAX_INPUT_BYTES",
    "DrainReport",
    "HookError",
    "HookOptions",
    "capture",
    "drain",
    "log_error",
    "parse_payload",
    "read_stdin",
    "run_hook",
    "session_start_context",
    "start_overdue_batch",
    "user_prompt_context",
]

#: Claude Code keeps at most this many characters of a hook's context output.
MAX_CONTEXT_CHARS: Final = 10_000
#: The session-start primer: how many memories and how many characters at most.
PRIME_COUNT: Final = 5
PRIME_BUDGET: Final = 1_500

#: How long each event waits for its stdin: (seconds in all, seconds after the first byte).
STDIN_DEADLINES: Final = {
    "user-prompt-submit": (5.0, 2.0),
    "session-start": (2.0, 0.5),
    "session-end": (0.8, 0.3),
    "pre-compact": (0.8, 0.3),
}
#: What an event did not do when its input was too large.
_NOT_DONE: Final = {
    "user-prompt-submit": "no memories were recalled for this prompt",
    "session-start": "no memories were primed",
    "session-end": "the transcript was not queued",
    "pre-compact": "the transcript was not queued",
}


# -- stdin -----------------------------------------------------------------------------------


def read_stdin(fd: int, total: float, after_first: float, limit: int = MAX_INPUT_BYTES) -> bytes:
    """What arrives on ``fd`` until it is closed, a whole JSON object has arrived, ``total``
    seconds have passed, or ``after_first`` seconds have passed since the first byte.

    A daemon thread does the blocking reads, so an stdin that is never closed cannot hold
    the hook up. Past ``limit`` bytes the rest is read and thrown away (the writer is not left
    blocked): the result then holds ``limit + 1`` bytes, which :func:`check_size` refuses."""
    return _read_stdin(fd, total, after_first, limit)[0]


def _read_stdin(fd: int, total: float, after_first: float, limit: int) -> tuple[bytes, bool]:
    """:func:`read_stdin`, and whether a deadline cut the input short (no end of input, no
    whole object)."""
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
            return bytes(data), bool(data)
        try:
            chunk = chunks.get(timeout=left)
        except queue.Empty:
            return bytes(data), bool(data)
        if not chunk:
            return bytes(data), False
        if not data:
            deadline = min(deadline, time.monotonic() + after_first)
        if len(data) > limit:
            continue  # too large already: read on to the end, keep nothing more
        data += chunk[: limit + 1 - len(data)]
        if len(data) <= limit and _complete(data):
            return bytes(data), False


def _complete(data: bytearray) -> bool:
    if not data.rstrip().endswith(b"}"):
        return False  # not the end of an object: spare the parse
    try:
        return isinstance(json.loads(bytes(data), parse_int=_json_int), dict)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        return False


def _json_int(text: str) -> int | float:
    """A JSON integer as Python reads it; one too long to read as an int (past 4,300 digits)
    as a float, so a number in a field kioku never looks at cannot spoil the whole object."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def check_size(data: bytes, event: str, limit: int = MAX_INPUT_BYTES) -> None:
    """HookError with its own message when the hook input is larger than ``limit``."""
    if len(data) > limit:
        raise HookError(
            f"the hook input is larger than {limit >> 20} MiB, the most kioku reads; "
            f"{_NOT_DONE.get(event, 'nothing was done')} (the input was not read further)"
        )


def parse_payload(data: bytes) -> dict[str, Any]:
    """The hook's JSON object; HookError when it is not one."""
    if not data.strip():
        raise HookError("no input on stdin (expected the hook's JSON object)")
    try:
        payload = json.loads(data.decode("utf-8", errors="replace"), parse_int=_json_int)
    except ValueError as exc:
        raise HookError(f"stdin is not valid JSON ({exc.__class__.__name__}: {exc})") from None
    except RecursionError:
        raise HookError("stdin is not usable JSON (nested too deeply)") from None
    if not isinstance(payload, dict):
        raise HookError(f"stdin holds a JSON {type(payload).__name__}, not an object")
    return payload


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


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
    primed = kioku.prime(
        prompt, session_id=usable_session(session_id), mark=mark, max_chars=MAX_CONTEXT_CHARS
    )
    return primed.block, primed.recall


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
        data, cut = (
            (raw, False)
            if raw is not None
            else _read_stdin(fd, total, after_first, MAX_INPUT_BYTES)
        )
        check_size(data, event)
        try:
            payload = parse_payload(data)
        except HookError as exc:
            if not cut:
                raise
            raise HookError(
                f"{exc}: the input was still arriving when the hook stopped waiting "
                f"({len(data)} bytes after at most {total:g} s); {_NOT_DONE[event]}"
            ) from None
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
            quietly(start_overdue_batch, kioku, options, "the SessionStart hook")
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
    """The block from the warm daemon (:mod:`.daemon`), or None to answer in process.

    When no daemon answers, one is started in the background for the next prompts, unless
    ``KIOKU_NO_DAEMON=1``. A home with its own ``--config`` file is always answered in process.
    """
    if options.config_path is not None or os.environ.get("KIOKU_NO_DAEMON") == "1":
        return None
    from kioku.interfaces.claude_code import daemon_client

    home = options.resolved_home
    answer = daemon_client.ask(
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
        quietly(daemon_client.start_detached, home)
    return None
