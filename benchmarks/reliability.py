#!/usr/bin/env python3
"""The reliability suite's figures: operations, kills and iterations, as a Markdown table.

    python benchmarks/reliability.py [--scale N] [--workers N] [--json]

Runs ``pytest tests/reliability`` (concurrent writers, batches and recalls on one home; SIGKILL
during ``kioku import`` and ``kioku batch``) and prints what each test did, as its tests
record it, with the run's wall time. ``--scale N`` multiplies the operations and kill
iterations (``KIOKU_RELIABILITY_SCALE``) for a longer soak; ``--workers N`` runs the tests on
N pytest-xdist workers. The exit code is pytest's: the figures count only when it is 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _row(entry: dict[str, Any]) -> str:
    name = str(entry["test"]).rsplit("::", 1)[-1]
    figures = ", ".join(
        f"{key} {value:,}" if isinstance(value, int) else f"{key} {value}"
        for key, value in entry.items()
        if key != "test"
    )
    return f"| `{name}` | {figures} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=1, help="multiply operations and kills")
    parser.add_argument("--workers", type=int, default=0, help="pytest-xdist workers (0: none)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    args = parser.parse_args()
    if args.scale < 1 or args.workers < 0:
        parser.error("--scale must be at least 1 and --workers at least 0")

    with tempfile.TemporaryDirectory() as tmp:
        figures = Path(tmp) / "figures.json"
        env = {
            **os.environ,
            "KIOKU_RELIABILITY_FIGURES": str(figures),
            "KIOKU_RELIABILITY_SCALE": str(args.scale),
        }
        command = [
            sys.executable,
            "-m",
            "pytest",
            "tests/reliability",
            "-q",
            "-p",
            "no:cacheprovider",
        ]
        if args.workers:
            command += ["-n", str(args.workers)]
        started = time.monotonic()
        proc = subprocess.run(command, cwd=ROOT, env=env, check=False)
        seconds = time.monotonic() - started
        entries = json.loads(figures.read_text()) if figures.exists() else []

    if args.json:
        print(
            json.dumps(
                {
                    "exit_code": proc.returncode,
                    "seconds": round(seconds, 1),
                    "scale": args.scale,
                    "tests": entries,
                },
                indent=2,
            )
        )
        return proc.returncode
    print()
    print(f"pytest exit code {proc.returncode}; wall time {seconds:.0f} s; scale {args.scale}")
    print()
    print("| test | figures |")
    print("|---|---|")
    for entry in entries:
        print(_row(entry))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
