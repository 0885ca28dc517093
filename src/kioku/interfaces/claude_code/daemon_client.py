"""The client half of the warm recall daemon (:mod:`.daemon`): asking it, its status,
stopping it, and starting it in the background. Standard library only, so a hook can try the
daemon before importing anything heavy.

The daemon answers over a Unix socket in the home directory (``HOME/daemon.sock``,
owner-only). Protocol: one JSON object per line each way. Requests: ``{"op": "ping"}``,
``{"op": "recall", "prompt": ..., "session_id": ..., "user_id": ..., "agent_id": ...}`` →
``{"ok": true, "block": "<memories>…"}``, ``{"op": "stop"}``. Any error is an ``{"ok": false,
"error": ...}`` answer; the client then answers in its own process instead.

The UserPromptSubmit hook speaks a leaner form so that its process need not import ``json``
(:mod:`kioku.interfaces.claude_code.hook_client`): the line ``HOOK user-prompt-submit``, then Claude
Code's payload exactly as the hook read it, then end of input. The answer is ``OK`` and a line
break followed by the text to print (nothing for an excluded prompt or no relevant memory), or
``FALLBACK`` (the payload is not the hook's JSON: the hook answers in process and logs why), or
``ERROR``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

__all__ = [
    "DEFAULT_IDLE_SECONDS",
    "HOOK_REQUEST",
    "MAX_REQUEST",
    "PID_NAME",
    "SOCKET_NAME",
    "ask",
    "socket_path",
    "start_detached",
    "status",
    "stop",
    "supported",
]

SOCKET_NAME: Final = "daemon.sock"
PID_NAME: Final = "daemon.pid"
DEFAULT_IDLE_SECONDS: Final = 1800.0
#: The longest request line (and answer line) either side reads.
MAX_REQUEST: Final = 1 << 20
#: The first line of a raw hook request.
HOOK_REQUEST: Final = b"HOOK user-prompt-submit"


def socket_path(home: Path) -> Path:
    return home / SOCKET_NAME


def supported() -> bool:
    return hasattr(socket, "AF_UNIX") and sys.platform != "win32"


def ask(home: Path, request: dict[str, Any], timeout: float = 5.0) -> dict[str, Any] | None:
    """Send one request; the answer, or None when no daemon answers (never raises)."""
    if not supported():
        return None
    path = socket_path(home)
    if not path.exists():
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(timeout)
            conn.connect(str(path))
            conn.sendall(json.dumps(request).encode("utf-8") + b"\n")
            data = _read_line(conn)
        answer = json.loads(data.decode("utf-8")) if data else None
        return answer if isinstance(answer, dict) else None
    except (OSError, ValueError):
        return None


def _read_line(conn: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = conn.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if chunk.endswith(b"\n") or size > MAX_REQUEST:
            break
    return b"".join(chunks).split(b"\n", 1)[0]


def status(home: Path) -> dict[str, Any]:
    """Whether a daemon answers for ``home``, and its pid."""
    answer = ask(home, {"op": "ping"}, timeout=1.0)
    return {
        "running": bool(answer and answer.get("ok")),
        "pid": None if not answer else answer.get("pid"),
        "socket": str(socket_path(home)),
    }


def stop(home: Path) -> int | None:
    """Ask the daemon of ``home`` to stop; its pid when one was running and agreed."""
    pid = status(home)["pid"]
    answer = ask(home, {"op": "stop"}, timeout=2.0)
    if not (answer and answer.get("ok")):
        return None
    return pid if isinstance(pid, int) else 0


def start_detached(
    home: Path, config_path: Path | None = None, idle_seconds: float = DEFAULT_IDLE_SECONDS
) -> int | None:
    """Start a daemon for ``home`` in the background unless one answers; its pid or None."""
    if not supported() or status(home)["running"]:
        return None
    args = [sys.executable, "-m", "kioku.interfaces.claude_code.daemon", "--home", str(home)]
    args += ["--idle", str(idle_seconds)]
    if config_path is not None:
        args += ["--config", str(config_path)]
    proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    return proc.pid
