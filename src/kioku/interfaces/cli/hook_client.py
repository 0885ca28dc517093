"""The first try of ``kioku hook user-prompt-submit``: ask the warm daemon, standard library only.

Claude Code runs this hook before every prompt. When a daemon serves the home, the answer
costs an interpreter start, this module and one socket round trip; nothing of kioku proper is
imported. In every other case (no daemon, a ``--config`` file, ``KIOKU_NO_DAEMON=1``, an error)
it returns the stdin it read, and the full hook (kioku.service.hooks) takes over with it.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import time

__all__ = ["try_daemon"]

_TOTAL = 5.0  # seconds to wait for the payload (as the full hook does)
_AFTER_FIRST = 2.0
_ANSWER_TIMEOUT = 20.0


def _read_stdin() -> bytes:
    """Stdin until EOF, a whole JSON object, or the deadlines (stdin may never be closed)."""
    fd = sys.stdin.fileno()
    deadline = time.monotonic() + _TOTAL
    data = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return data
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return data
        chunk = os.read(fd, 65536)
        if not chunk:
            return data
        if not data:
            deadline = min(deadline, time.monotonic() + _AFTER_FIRST)
        data += chunk
        try:
            json.loads(data)
        except ValueError:
            continue
        return data


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
    try:
        payload = json.loads(raw)
        prompt = payload.get("prompt") if isinstance(payload, dict) else None
        if not isinstance(prompt, str):
            return False, raw
        if not prompt.strip() or prompt.strip().startswith("/"):
            return True, raw  # the spec's exclusion: nothing to print
        session = payload.get("session_id")
        request = {
            "op": "recall",
            "prompt": prompt,
            "session_id": session if isinstance(session, str) else None,
        }
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(_ANSWER_TIMEOUT)
            conn.connect(path)
            conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
            answer_raw = b""
            while not answer_raw.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    break
                answer_raw += chunk
        answer = json.loads(answer_raw)
    except (OSError, ValueError, AttributeError):
        return False, raw
    if not isinstance(answer, dict) or not answer.get("ok"):
        return False, raw
    block = answer.get("block")
    if isinstance(block, str) and block:
        sys.stdout.write(block[:10_000] + "\n")
        sys.stdout.flush()
    return True, raw
