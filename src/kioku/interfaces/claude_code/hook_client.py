"""The first try of ``kioku hook user-prompt-submit``: ask the warm daemon, with C modules only.

Claude Code runs this hook before every prompt, so every millisecond of it is paid on every
prompt. When a daemon serves the home, the answer costs an interpreter start, this module and
one socket round trip. The module imports only what is compiled into the interpreter or is a
small C extension (``_socket``, ``select``): not ``json`` (~10 ms), not ``socket`` (~10 ms with
its ``enum``), nothing of kioku proper. The payload is not parsed here: its bytes go to the
daemon, which parses it and answers ``OK`` with the ``<memories>`` block (perhaps empty) or
``FALLBACK`` (see :mod:`kioku.interfaces.claude_code.daemon`).

In every other case (no daemon, a ``--config`` file, ``KIOKU_NO_DAEMON=1``, any error) it
returns the stdin it read, and the full hook (:mod:`kioku.interfaces.claude_code.hooks`) takes
over with it.
"""

from __future__ import annotations

import os
import select
import sys
import time

__all__ = ["payload_complete", "try_daemon"]

_TOTAL = 5.0  # seconds to wait for the payload (as the full hook does)
_AFTER_FIRST = 2.0  # seconds to wait for the rest once the first bytes arrived
_SETTLE = 0.05  # stdin quiet this long without EOF: check whether the JSON is whole
_ANSWER_TIMEOUT = 20.0
_REQUEST = b"HOOK user-prompt-submit\n"
#: The most input a hook reads (``hook_common.MAX_INPUT_BYTES``); past it the rest is read and
#: dropped, and the full hook reports the input as too large.
_MAX_INPUT = 4 << 20

_OPEN, _CLOSE, _QUOTE, _BACKSLASH = 0x7B, 0x7D, 0x22, 0x5C


def payload_complete(data: bytes) -> bool:
    """Whether ``data`` holds one whole JSON object: its braces balance outside strings.

    Only consulted when stdin stays open without EOF (Claude Code sometimes never closes it);
    with a closed stdin the end of input is the end of the payload.
    """
    text = data.strip()
    if not text.startswith(b"{"):
        return False
    depth = 0
    in_string = escaped = False
    for byte in text:
        if in_string:
            if escaped:
                escaped = False
            elif byte == _BACKSLASH:
                escaped = True
            elif byte == _QUOTE:
                in_string = False
        elif byte == _QUOTE:
            in_string = True
        elif byte == _OPEN:
            depth += 1
        elif byte == _CLOSE:
            depth -= 1
            if depth == 0:
                return True
    return False


def _read_stdin() -> bytes:
    """Stdin until EOF, a whole JSON object, or the deadlines (stdin may never be closed)."""
    fd = 0
    deadline = time.monotonic() + _TOTAL
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return data
        wait = min(left, _SETTLE) if data else left
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            if not data or (len(data) <= _MAX_INPUT and payload_complete(data)):
                return data
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return data
        if not data:
            deadline = min(deadline, time.monotonic() + _AFTER_FIRST)
        if len(data) <= _MAX_INPUT:
            data += chunk[: _MAX_INPUT + 1 - len(data)]


def _home(argv: list[str]) -> str | None:
    """``--home`` from ``[--home H] hook user-prompt-submit``; None when other options appear."""
    home = os.environ.get("KIOKU_HOME") or os.path.expanduser("~/.kioku")
    i = 0
    while i < len(argv) and argv[i] != "hook":
        name, sep, value = argv[i].partition("=")
        if name != "--home":
            return None  # --config, --user, --agent: the full hook handles them
        if not sep:
            if i + 1 >= len(argv):
                return None
            value = argv[i + 1]
            i += 1
        home = os.path.expanduser(value)
        i += 1
    if argv[i + 1 :] != ["user-prompt-submit"]:
        return None
    return home


def _ask(path: str, raw: bytes) -> bytes | None:
    """The daemon's answer to the raw payload; None when it does not answer in full."""
    import _socket

    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        conn.settimeout(_ANSWER_TIMEOUT)
        conn.connect(path)
        conn.sendall(_REQUEST + raw)
        conn.shutdown(_socket.SHUT_WR)
        chunks = []
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        conn.close()
    return b"".join(chunks)


def try_daemon(argv: list[str]) -> tuple[bool, bytes | None]:
    """``(answered, stdin)``: True when the daemon's answer was printed; otherwise the stdin
    already read (None when nothing was read) for the full hook."""
    if os.environ.get("KIOKU_NO_DAEMON") == "1" or os.environ.get("KIOKU_CONFIG"):
        return False, None
    home = _home(argv)
    if home is None or sys.platform == "win32":
        return False, None
    path = os.path.join(home, "daemon.sock")
    if not os.path.exists(path):
        return False, None
    raw = _read_stdin()
    if len(raw) > _MAX_INPUT:
        return False, raw  # the full hook says that the input is too large
    answer = _ask(path, raw)
    if answer is None:
        return False, raw
    status, _, block = answer.partition(b"\n")
    if status != b"OK":
        return False, raw  # FALLBACK or ERROR: the full hook answers and logs
    if block:
        out = sys.stdout.buffer
        out.write(block)
        out.flush()
    return True, raw
