#!/usr/bin/env python3
"""Set up and run kioku from a fresh clone with nothing but python3 and pip.

    python3 tasks.py demo    # the main job: a guided tour on the embedded default store
    python3 tasks.py test    # lint, type-check and the whole test suite (installs Debian's
                             # chromium and pgbouncer for the tests that need them when
                             # run as root)
    python3 tasks.py test -m "not slow" tests/unit   # any further arguments go to pytest

The tests run on every core (pytest-xdist ``-n auto``) unless the arguments choose ``-n``
themselves or turn xdist off with ``-p no:xdist``.

Both create ``.venv`` beside this file on first use and (re)install the package when
``pyproject.toml`` changes. Nothing outside the clone is touched except pip's cache.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
DEMO_HOME = ROOT / ".kioku-demo"


def _run(*args: str | Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(a) for a in args), flush=True)
    subprocess.run([str(a) for a in args], check=True, cwd=ROOT, env=env)


def ensure_venv(extras: str) -> None:
    """Create the venv and install the package with ``extras`` unless already current."""
    stamp = VENV / f".installed-{extras or 'base'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest and PY.exists():
        return
    if not PY.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    target = f".[{extras}]" if extras else "."
    _run(PY, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    _run(PY, "-m", "pip", "install", "--quiet", "-e", target)
    stamp.write_text(digest)


def demo() -> None:
    ensure_venv("server")  # so `.venv/bin/kioku serve` works after the tour
    if DEMO_HOME.exists():
        shutil.rmtree(DEMO_HOME)
    _run(PY, ROOT / "examples" / "tour.py", "--home", DEMO_HOME)


def _parallel(pytest_args: list[str]) -> list[str]:
    """``-n auto`` unless the arguments already say how many workers, or turn xdist off."""
    for n, arg in enumerate(pytest_args):
        if arg in ("-n", "--numprocesses") or arg.startswith("--numprocesses="):
            return []
        if arg.startswith("-n") and not arg.startswith("--"):
            return []  # -n2, -nauto
        plugin = pytest_args[n + 1] if arg == "-p" and n + 1 < len(pytest_args) else arg[2:]
        if arg.startswith("-p") and plugin.strip() == "no:xdist":
            return []
    return ["-n", "auto"]


#: Debian packages some tests need: each with the file it installs and what it is for.
DEBIAN_PACKAGES = (
    ("chromium", Path("/usr/bin/chromium"), "the web UI's browser tests"),
    ("pgbouncer", Path("/usr/sbin/pgbouncer"), "the PostgreSQL tests through PgBouncer"),
)


def ensure_debian_packages() -> None:
    """Install the Debian packages of :data:`DEBIAN_PACKAGES` that are missing, when we can
    (apt-get, as root); a failed install stops the run. Elsewhere the tests that need them
    skip and say how to install them."""
    missing = [(name, why) for name, path, why in DEBIAN_PACKAGES if not path.exists()]
    if not missing:
        return
    names = [name for name, _ in missing]
    command = "apt-get install --no-install-recommends " + " ".join(names)
    apt = shutil.which("apt-get")
    if apt is None or not hasattr(os, "geteuid") or os.geteuid() != 0:
        for name, why in missing:
            print(f"{name} is missing: {why} will be skipped (as root on Debian: {command})")
        return
    for name, why in missing:
        print(f"{name} is missing: installing Debian's {name} for {why}", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        _run(apt, "update", env=env)
        _run(apt, "install", "-y", "--no-install-recommends", *names, env=env)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"could not install {', '.join(names)} ({exc}). Install with: {command}", flush=True)
        raise


def test(pytest_args: list[str]) -> None:
    ensure_venv("dev")
    _run(PY, "-m", "ruff", "check", "src", "tests", "examples", "scripts", "benchmarks", "tasks.py")
    _run(
        PY,
        "-m",
        "ruff",
        "format",
        "--check",
        "src",
        "tests",
        "examples",
        "scripts",
        "benchmarks",
        "tasks.py",
    )
    _run(PY, "-m", "mypy", "src")
    ensure_debian_packages()
    # The slowest tests are listed at the end, to keep the whole run within its budget.
    durations = [] if any(a.startswith("--durations") for a in pytest_args) else ["--durations=25"]
    _run(PY, "-m", "pytest", *_parallel(pytest_args), *durations, *pytest_args)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in {"demo", "test"}:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    try:
        if sys.argv[1] == "demo":
            demo()
        else:
            test(sys.argv[2:])
    except subprocess.CalledProcessError as exc:
        sys.exit(exc.returncode or 1)


if __name__ == "__main__":
    main()
