#!/usr/bin/env python3
"""The UserPromptSubmit hook's overhead over a bare interpreter start, with and without the daemon.

    python benchmarks/hooks.py [--size 36500] [--runs 21] [--store DIR] [--json]

A store of ``--size`` synthetic memories (the generator of ``recall_scale.py``) answers
prompts through the command ``kioku hooks install`` writes into Claude Code's settings,
``python -P -c 'from kioku.interfaces.cli.entry import main; main()' --home H hook
user-prompt-submit``
fed Claude Code's JSON on stdin, as the installed hook runs it. Three timings in the same run,
each the median of ``--runs`` processes: ``python -c pass`` (the floor), the hook answering in
its own process (``KIOKU_NO_DAEMON=1``), and the hook asking the warm daemon. Overhead = hook
median − floor median.

It measures what users see: the child processes run without ``PYTHONDONTWRITEBYTECODE`` (an
installed kioku has its ``.pyc`` files: pip compiles them, and an interpreter writes them on
first import), and each of the three is run once, untimed, before its timed runs, so the
bytecode exists and the store's vector cache file (``memories.db.vectors/``, written by the
first search after a change) is in place. ``--store DIR`` keeps the filled home in
``DIR/hooks-SIZE`` and reuses it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_scale import _JA, _words, fill

from kioku import Kioku
from kioku.interfaces.claude_code import daemon_client
from kioku.interfaces.claude_code.settings import ENTRY


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("KIOKU_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["KIOKU_NO_AUTO_BATCH"] = "1"
    env.update(extra)
    return env


def _time(args: list[str], stdin: str, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(args, input=stdin, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - t0, proc.stdout


def measure(home: Path, runs: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    prompts = [" ".join(_words(rng, 3)) for _ in range(runs)]
    prompts[::4] = [f"{rng.choice(_JA)}の{rng.choice(_JA)}" for _ in prompts[::4]]
    hook = [sys.executable, "-P", "-c", ENTRY, "--home", str(home), "hook", "user-prompt-submit"]

    def payload(prompt: str) -> str:
        return json.dumps(
            {
                "session_id": "bench",
                "transcript_path": str(home / "transcript.jsonl"),
                "cwd": str(home),
                "hook_event_name": "UserPromptSubmit",
                "prompt": prompt,
            }
        )

    _time([sys.executable, "-c", "pass"], "", _env())  # warm-up runs are not timed
    floor = [_time([sys.executable, "-c", "pass"], "", _env())[0] for _ in range(runs)]
    _time(hook, payload("warm up"), _env(KIOKU_NO_DAEMON="1"))
    cold: list[float] = []
    answered = 0
    for prompt in prompts:
        seconds, out = _time(hook, payload(prompt), _env(KIOKU_NO_DAEMON="1"))
        cold.append(seconds)
        answered += "<memories>" in out
    daemon_client.start_detached(home, None, 600)
    deadline = time.monotonic() + 120
    while not daemon_client.status(home)["running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    warm: list[float] = []
    try:
        _time(hook, payload("warm up"), _env())
        for prompt in prompts:
            seconds, out = _time(hook, payload(prompt), _env())
            warm.append(seconds)
            answered += "<memories>" in out
    finally:
        daemon_client.stop(home)
    f = statistics.median(floor)
    return {
        "runs": runs,
        "floor_ms": round(f * 1000, 1),
        "in_process_ms": round(statistics.median(cold) * 1000, 1),
        "in_process_overhead_ms": round((statistics.median(cold) - f) * 1000, 1),
        "daemon_ms": round(statistics.median(warm) * 1000, 1),
        "daemon_overhead_ms": round((statistics.median(warm) - f) * 1000, 1),
        "answers_with_memories": f"{answered} of {2 * runs}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=36_500)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--store", type=Path, help="keep the filled home here and reuse it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = (args.store or Path(tmp)) / f"hooks-{args.size}"
        if not (home / "memories.db").exists():
            with Kioku.open(home, env={}) as kioku:
                fill(kioku, args.size, args.seed)
        result = {"memories": args.size, **measure(home, args.runs, args.seed)}
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"{result['memories']:,} memories, median of {result['runs']} processes: "
        f"python -c pass {result['floor_ms']} ms; hook in process {result['in_process_ms']} ms "
        f"(overhead {result['in_process_overhead_ms']} ms); hook via the warm daemon "
        f"{result['daemon_ms']} ms (overhead {result['daemon_overhead_ms']} ms); "
        f"{result['answers_with_memories']} answers held memories"
    )


if __name__ == "__main__":
    main()
