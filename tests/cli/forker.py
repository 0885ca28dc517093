"""``kioku`` processes forked from a process that has already imported kioku.

Every ``kioku`` a test runs as a subprocess pays Python's start and the import of kioku, numpy
and click before it does anything: 0.3 to 0.6 s of CPU for ``list``, ``add``, ``recall`` or
``stats`` on a small home, against about 0.1 s forked as below.
:func:`run` starts each one instead by ``fork`` from a server process (one per test process)
that imported those modules and did nothing else. The child is still a process of its own:
its own environment, working directory, standard streams and file locks, its exit code or
signal as ``subprocess`` reports them, its own interpreter shutdown; it runs ``kioku`` the way
``python -m kioku`` does (``runpy``), so each command starts from freshly imported modules
that no command has touched.

What a forked child cannot show is Python's start itself: an environment read at start-up
(``PYTHON*``, the locale, ``TZ`` applied by ``tzset`` is the exception) or the cost and the
set of modules imported. :func:`usable` keeps those cases on ``subprocess``: an environment
that differs from the server's in more than ``KIOKU_*`` settings, and the Claude Code hook
path, whose cold start is what its tests measure. ``KIOKU_TEST_FORK=0`` turns this off.

Run as a script (``python forker.py SOCKET``) this module is the server.
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["enabled", "run", "usable"]

#: What the server imports before it serves, besides kioku's own modules: the standard
#: library modules commands import as they run.
PRELOAD = (
    "numpy",
    "numpy.typing",
    "logging",
    "subprocess",
    "tomllib",
    "plistlib",
    "difflib",
    "secrets",
    "random",
    "hmac",
    "shlex",
    "sqlite3",
)
#: Parts of kioku the server leaves out: the framework adapters and the servers (FastAPI, MCP
#: and the optional libraries behind them), which no command in these tests runs forked.
SKIP = (
    "kioku.__main__",
    "kioku.integrations",
    "kioku.interfaces.http",
    "kioku.interfaces.mcp",
    "kioku.interfaces.web",
)

#: The servers of this test process, by the environment they were started with.
#: Set by pytest for each test phase: a subprocess sees it, and so does a forked child (its
#: environment is the request's), but it is read by nothing at start-up.
VOLATILE = frozenset({"PYTEST_CURRENT_TEST"})
#: At most this many servers per test process (each is about 100 MB).
MAX_SERVERS = 3
_servers: dict[frozenset[tuple[str, str]], tuple[subprocess.Popen[bytes], str]] = {}


# ---------------------------------------------------------------------------------------------
# The server (a separate process)


def _recv_request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data = b""
    fds: list[int] = []
    while not data.endswith(b"\n"):
        chunk, got, _flags, _addr = socket.recv_fds(conn, 1 << 16, 3)
        if not chunk:
            raise EOFError("the client left")
        data += chunk
        fds += got
    return json.loads(data), fds


def _preload() -> None:
    import importlib
    import pkgutil

    import kioku

    for name in PRELOAD:
        importlib.import_module(name)
    packages = [kioku]
    while packages:
        package = packages.pop()
        for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            if info.name.startswith(SKIP):
                continue
            try:
                module = importlib.import_module(info.name)
            except Exception:  # noqa: S112 - optional: a command importing it will say so
                continue
            if info.ispkg:
                packages.append(module)


def _serve(path: str) -> tuple[dict[str, Any], list[int]] | None:
    """Serve until the parent leaves (None); in a forked child, return its request."""
    _preload()
    # What was imported is never collected: moved out of the collector's reach, the child's
    # collections and its interpreter shutdown skip it (and do not touch its pages).
    gc.collect()
    gc.freeze()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin, selectors.EVENT_READ, "parent")  # EOF: the test process left
    children: dict[int, tuple[socket.socket, int]] = {}  # pidfd -> (connection, pid)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in sel.select():
            if key.data == "parent":
                return None
            if key.data == "accept":
                conn, _ = listener.accept()
                try:
                    request, fds = _recv_request(conn)
                except (OSError, EOFError, ValueError):
                    conn.close()
                    continue
                pid = os.fork()
                if pid == 0:
                    sel.close()
                    listener.close()
                    for other, _pid in children.values():
                        other.close()
                    for pidfd in children:
                        os.close(pidfd)
                    conn.close()
                    return request, fds
                for fd in fds:
                    os.close(fd)
                conn.sendall(f"{pid}\n".encode())
                pidfd = os.pidfd_open(pid)
                children[pidfd] = (conn, pid)
                sel.register(pidfd, selectors.EVENT_READ, "child")
            else:
                pidfd = int(key.fd)
                sel.unregister(pidfd)
                conn, pid = children.pop(pidfd)
                os.close(pidfd)
                _, status = os.waitpid(pid, 0)
                with contextlib.suppress(OSError):  # the client gave up on it (a timeout)
                    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                conn.close()


def _become(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: take the request's streams, environment, directory and argv."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    os.chdir(request["cwd"])
    sys.path[0] = request["cwd"]  # what ``python -m`` puts first
    sys.argv = ["-m", *request["args"]]


# ---------------------------------------------------------------------------------------------
# The client (in the test process)


def enabled() -> bool:
    return os.environ.get("KIOKU_TEST_FORK", "1") != "0" and hasattr(os, "pidfd_open")


def _start(env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str] | None:
    path = os.path.join(tempfile.mkdtemp(prefix="kioku-fork-"), "s")
    proc = subprocess.Popen(
        [sys.executable, __file__, path],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
        cwd=os.getcwd(),
    )
    assert proc.stdout is not None
    if proc.stdout.readline() != b"ready\n":
        proc.kill()
        proc.wait()
        return None
    atexit.register(_stop, proc, path)
    return proc, path


def _stop(proc: subprocess.Popen[bytes], path: str) -> None:
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(Path(path).parent, ignore_errors=True)


def _differs(a: dict[str, str], b: dict[str, str]) -> bool:
    def outside(env: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in env.items() if not k.startswith("KIOKU_")}

    return outside(a) != outside(b)


def usable(args: tuple[str, ...], env: dict[str, str], base: dict[str, str]) -> bool:
    """Whether ``kioku ARGS`` with ``env`` may be forked (see the module)."""
    return enabled() and "hook" not in args and not _differs(env, base)


def _server_for(base: dict[str, str]) -> tuple[subprocess.Popen[bytes], str] | None:
    """The server of this test process started with ``base`` as its environment (started on
    first use; a test that changed the environment gets one of its own); None when it is gone
    or there are already a few."""
    key = frozenset((k, v) for k, v in base.items() if k not in VOLATILE)
    if key not in _servers:
        if len(_servers) >= MAX_SERVERS:
            return None
        started = _start(base)
        if started is None:
            return None
        _servers[key] = started
    proc, path = _servers[key]
    return None if proc.poll() is not None else (proc, path)


def run(
    args: tuple[str, ...], env: dict[str, str], base: dict[str, str], timeout: float
) -> tuple[int, str, str] | None:
    """Run ``python -m kioku ARGS`` forked from the server: (exit code, stdout, stderr), or
    None when no server could be had (the caller then runs a subprocess)."""
    server = _server_for(base)
    if server is None:
        return None
    _, path = server
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    stdin = _stdin()
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
        request = {"args": list(args), "env": env, "cwd": os.getcwd()}
        socket.send_fds(conn, [json.dumps(request).encode() + b"\n"], [stdin, out_w, err_w])
    finally:
        os.close(out_w)
        os.close(err_w)
        os.close(stdin)
    reader = conn.makefile("rb")
    pid = int(reader.readline())
    deadline = time.monotonic() + timeout
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    sel = selectors.DefaultSelector()
    for fd in chunks:
        sel.register(fd, selectors.EVENT_READ)
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            ready = sel.select(max(left, 0))
            if not ready and left <= 0:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired([sys.executable, "-m", "kioku", *args], timeout)
            for key, _ in ready:
                data = os.read(int(key.fd), 1 << 16)
                if data:
                    chunks[int(key.fd)].append(data)
                else:
                    sel.unregister(key.fd)
        code = int(reader.readline())
    finally:
        sel.close()
        os.close(out_r)
        os.close(err_r)
        reader.close()
        conn.close()
    out, err = (b"".join(chunks[fd]).decode() for fd in (out_r, err_r))
    return code, _text(out), _text(err)


def _stdin() -> int:
    """A copy of this process's standard input, which a subprocess would inherit (or
    ``/dev/null`` when it has none)."""
    try:
        return os.dup(0)
    except OSError:
        return os.open(os.devnull, os.O_RDONLY)


def _text(value: str) -> str:
    """Newlines as ``subprocess.run(text=True)`` gives them."""
    return value.replace("\r\n", "\n").replace("\r", "\n")


def _child_main() -> None:
    served = _serve(sys.argv[1])
    if served is None:
        return
    request, fds = served
    _become(request, fds)
    import runpy

    runpy.run_module("kioku", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    _child_main()
