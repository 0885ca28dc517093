"""A warm local recall server, so a hook forwards the prompt instead of loading everything.

A hook process pays for the interpreter, kioku's imports, opening the store and loading the
vector cache on every prompt. The daemon pays once: it keeps one :class:`~kioku.Kioku` open
(store, embedder, vector cache) and answers over a Unix socket in the home directory
(``HOME/daemon.sock``, owner-only). It is started on demand
(``python -m kioku.interfaces.claude_code.daemon``, see :func:`.daemon_client.start_detached`),
stops by itself after ``idle_seconds`` without a request, and notices a changed configuration
file by reopening. The protocol and the client are in :mod:`.daemon_client`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any, Final

from kioku.interfaces.claude_code.daemon_client import (
    DEFAULT_IDLE_SECONDS,
    HOOK_REQUEST,
    MAX_REQUEST,
    PID_NAME,
    socket_path,
    status,
    supported,
)

__all__ = ["serve"]

#: The most payload a raw hook request may carry.
_MAX_HOOK_PAYLOAD: Final = 16 << 20
#: Claude Code keeps at most this many characters of a hook's output.
_MAX_OUTPUT_CHARS: Final = 10_000
#: Seconds between two overdue-batch checks of the daemon.
_BATCH_CHECK_SECONDS: Final = 60.0


def _read_first_line(conn: socket.socket) -> tuple[bytes, bytes]:
    """The first line of a request (without its line break) and what followed it so far."""
    data = b""
    while b"\n" not in data and len(data) <= MAX_REQUEST:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    line, _, rest = data.partition(b"\n")
    return line, rest


#: What a recall leaves for after its answer: the service, the scope to restore, the result
#: and the session.
_Pending = tuple[Any, tuple[str, str], Any, str | None]


class _Server:
    def __init__(self, home: Path, config_path: Path | None, idle_seconds: float) -> None:
        self.home = home
        self.config_path = config_path
        self.idle_seconds = idle_seconds
        self.last_request = time.monotonic()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._kioku: Any = None
        self._config_stamp: tuple[float, int] | None = None
        self._batch_checked = -math.inf

    def _config_file(self) -> Path:
        return self.config_path or self.home / "config.toml"

    def _stamp(self) -> tuple[float, int] | None:
        try:
            st = self._config_file().stat()
        except OSError:
            return None
        return (st.st_mtime, st.st_size)

    def kioku(self) -> Any:
        """The open service, reopened when the configuration file changed."""
        from kioku.service.kioku import Kioku

        stamp = self._stamp()
        if self._kioku is None or stamp != self._config_stamp:
            if self._kioku is not None:
                self._kioku.close()
            self._kioku = Kioku.open(self.home, config_path=self.config_path)
            self._config_stamp = stamp
        return self._kioku

    def handle(self, request: dict[str, Any]) -> tuple[dict[str, Any], _Pending | None]:
        """The answer to one request, and for a recall the work to do once it is sent: pass
        it to :meth:`after` (the lock stays held until then)."""
        op = request.get("op")
        if op == "ping":
            return {"ok": True, "pid": os.getpid()}, None
        if op == "stop":
            self.stopping.set()
            return {"ok": True}, None
        if op != "recall":
            return {"ok": False, "error": f"unknown op {op!r}"}, None
        prompt = request.get("prompt")
        if not isinstance(prompt, str):
            return {"ok": False, "error": "recall needs a prompt string"}, None
        session = request.get("session_id")
        session = session if isinstance(session, str) else None
        user, agent = request.get("user_id"), request.get("agent_id")
        from kioku.interfaces.claude_code.hooks import user_prompt_recall

        self._lock.acquire()  # one request at a time: released by after()
        kioku = self.kioku()
        saved = (kioku.user_id, kioku.agent_id)
        try:
            if isinstance(user, str) and user:
                kioku.user_id = user
            if isinstance(agent, str) and agent:
                kioku.agent_id = agent
            block, result = user_prompt_recall(kioku, prompt, session, mark=False)
        except BaseException:
            kioku.user_id, kioku.agent_id = saved
            self._lock.release()
            raise
        return {"ok": True, "block": block}, (kioku, saved, result, session)

    def after(self, pending: _Pending | None) -> None:
        """Once the answer is sent: write the recall's marks, check for an overdue batch (at
        most once a minute), and let the next request in. Never raises."""
        if pending is None:
            return
        kioku, saved, result, session = pending
        try:
            with contextlib.suppress(Exception):  # a mark that fails is not worth an error
                if result is not None:
                    kioku.leave_traces(result, session_id=session)
            now = time.monotonic()
            if now - self._batch_checked >= _BATCH_CHECK_SECONDS:
                self._batch_checked = now
                from kioku.interfaces.claude_code.hook_common import (
                    HookOptions,
                    start_overdue_batch,
                )

                options = HookOptions(home=self.home, config_path=self.config_path)
                with contextlib.suppress(Exception):  # the batch is a bonus, never an error
                    start_overdue_batch(kioku, options, "the recall daemon")
        finally:
            kioku.user_id, kioku.agent_id = saved
            self._lock.release()

    def hook_answer(self, payload: bytes) -> tuple[bytes, _Pending | None]:
        """The raw protocol's answer to a UserPromptSubmit payload (and the work after it)."""
        from kioku.interfaces.claude_code.hooks import should_skip

        try:
            request = json.loads(payload)
        except ValueError:
            return b"FALLBACK\n", None
        prompt = request.get("prompt") if isinstance(request, dict) else None
        if not isinstance(prompt, str):
            return b"FALLBACK\n", None
        if should_skip(prompt):
            return b"OK\n", None  # the spec's exclusion: nothing to print
        answer, pending = self.handle(
            {"op": "recall", "prompt": prompt, "session_id": request.get("session_id")}
        )
        if not answer.get("ok"):
            return b"ERROR\n", pending
        block = answer.get("block") or ""
        text = f"{block[:_MAX_OUTPUT_CHARS]}\n" if block else ""
        return b"OK\n" + text.encode("utf-8"), pending

    def _serve_hook(self, conn: socket.socket, head: bytes) -> None:
        chunks, size = [head], len(head)
        while size <= _MAX_HOOK_PAYLOAD:
            chunk = conn.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        pending: _Pending | None = None
        try:
            if size > _MAX_HOOK_PAYLOAD:
                answer = b"ERROR\n"
            else:
                answer, pending = self.hook_answer(b"".join(chunks))
        except Exception:
            answer = b"ERROR\n"
        try:
            with contextlib.suppress(OSError):
                conn.sendall(answer)
                conn.shutdown(socket.SHUT_WR)  # the client reads to the end: end it now
        finally:
            self.after(pending)

    def serve_one(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(30.0)
            try:
                raw, rest = _read_first_line(conn)
                if raw == HOOK_REQUEST:
                    self._serve_hook(conn, rest)
                    self.last_request = time.monotonic()
                    return
                request = json.loads(raw.decode("utf-8"))
                if isinstance(request, dict):
                    answer, pending = self.handle(request)
                else:
                    answer, pending = {"ok": False, "error": "a request is a JSON object"}, None
            except Exception as exc:
                answer, pending = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}, None
            try:
                with contextlib.suppress(OSError):
                    data = json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n"
                    conn.sendall(data)
            finally:
                self.after(pending)
            self.last_request = time.monotonic()

    def close(self) -> None:
        if self._kioku is not None:
            self._kioku.close()


def serve(
    home: Path, config_path: Path | None = None, idle_seconds: float = DEFAULT_IDLE_SECONDS
) -> None:
    """Run the daemon in this process until stopped or idle (used by ``start_detached``)."""
    if not supported():
        raise OSError("the recall daemon needs Unix sockets")
    from kioku.interfaces.claude_code.hook_common import ensure_home

    ensure_home(home)
    path = socket_path(home)
    if status(home)["running"]:
        return  # another daemon already serves this home
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a stale socket left by a daemon that died
    server = _Server(home, config_path, idle_seconds)
    old_umask = os.umask(0o177)
    try:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
    finally:
        os.umask(old_umask)
    listener.listen(16)
    listener.settimeout(1.0)
    _write_pid(home / PID_NAME)
    try:
        # A process that lives for many prompts searches the vector cache in memory with
        # numpy; the numpy-free scan of the cache file is for a hook that answers one prompt
        # and exits (see adapters/store/sqlite/vector_lite.py). Load numpy before the store
        # is searched, or every search would scan the file.
        import numpy  # noqa: F401

        server.kioku()  # warm up: open the store, load the embedder and the vector cache
        with contextlib.suppress(Exception):
            server.kioku().recall("warm up", mark=False)
        while not server.stopping.is_set():
            if time.monotonic() - server.last_request > server.idle_seconds:
                break
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            threading.Thread(target=server.serve_one, args=(conn,), daemon=True).start()
    finally:
        listener.close()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        with contextlib.suppress(FileNotFoundError):
            (home / PID_NAME).unlink()
        server.close()


def _write_pid(path: Path) -> None:
    """This process's id in ``path``, owner-only (0600) whatever the umask."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # a file left by an older daemon keeps its mode otherwise
        os.write(fd, f"{os.getpid()}\n".encode())
    finally:
        os.close(fd)


def _main(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m kioku.interfaces.claude_code.daemon")
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--config", type=Path)
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE_SECONDS)
    args = parser.parse_args(argv)
    serve(args.home, args.config, args.idle)


if __name__ == "__main__":
    _main(sys.argv[1:])
