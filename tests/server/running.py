"""A real ``kioku serve`` in a subprocess on a free loopback port, for the server's tests."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

_URL = re.compile(r"at (http://\S+/) ")


@dataclass
class Served:
    """A running server: its base URL (ending in /), home and process."""

    url: str
    home: Path
    process: subprocess.Popen[str]
    #: The environment the server was started with, beyond this process's.
    env: dict[str, str] | None = None

    def client(self, key: str | None = None, **kwargs: object) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0, **kwargs)  # type: ignore[arg-type]


def kioku(
    home: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run one ``kioku`` command on ``home`` and return what it did."""
    return subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def make_key(
    home: Path,
    name: str,
    user: str,
    rights: str = "read-write",
    env: dict[str, str] | None = None,
) -> str:
    """A new API key for ``user`` (the plain key, as `kioku keys create --json` shows it);
    ``env`` may point the home at a PostgreSQL server (``KIOKU_STORE_URL``)."""
    import json

    made = "config.toml" if (env or {}).get("KIOKU_STORE_URL") else "memories.db"
    if not (home / made).exists():
        assert kioku(home, "init", env=env).returncode == 0
    done = kioku(
        home, "keys", "create", name, "--key-user", user, "--rights", rights, "--json", env=env
    )
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["key"])


@contextlib.contextmanager
def serving(home: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``kioku --home HOME serve --port 0 ARGS`` until the block ends; waits until it answers."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kioku", "--home", str(home), "serve", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        found = _URL.search(first)
        if found is None:
            process.kill()
            _, err = process.communicate(timeout=30)
            raise AssertionError(f"kioku serve did not start: {first!r} {err!r}")
        url = found.group(1)
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(url + "v1/openapi.json", timeout=5)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.05)
        yield Served(url=url, home=home, process=process, env=env)
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
