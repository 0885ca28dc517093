#!/usr/bin/env python3
"""The UserPromptSubmit hook's overhead over a bare interpreter start, with and without the daemon.

    python benchmarks/hooks.py [--size 36500] [--runs 21] [--store DIR] [--json]

A store of ``--size`` synthetic memories (the generator of ``recall_scale.py``) answers
prompts through the command ``kioku hooks install`` writes into Claude Code's settings,
``python -P -c 'from kioku.interfaces.cli.entry import main; main()' --home H hook
user-prompt-submit``
fed Claude Code's JSON on stdin, as the installed hook runs it. Three series: ``python -c
pass`` (the floor), the hook answering in its own process (``KIOKU_NO_DAEMON=1``), and the hook
asking the warm daemon.

The series are interleaved: each of ``--runs`` rounds runs the floor, the in-process hook and
the daemon hook once each, in an order that rotates from round to round, so the drift of a
shared machine weighs on the three alike. Each series is reported as its median, p25-p75 and
min-max; an overhead (hook - floor) is the median of the per-round differences, with their
p25-p75.

The store's state is held fixed: every process started here (the untimed warm-ups, the hooks,
the daemon) runs with ``KIOKU_NO_AUTO_BATCH=1``, so no overdue nightly batch starts during the
timed runs. The active and archived memories, the memories per level, the batch state
(``batch_last_day``, ``last_compression_run``) and ``batch.log`` are read before and after
timing, with the daemon's pid (a daemon that stopped would leave the hooks to answer in process);
any change ends the run with exit status 1, saying what changed. A store kept with
``--store DIR`` (in ``DIR/hooks-SIZE``) whose state is not that of a fresh fill is refused.

It measures what users see: the child processes run without ``PYTHONDONTWRITEBYTECODE`` (an
installed kioku has its ``.pyc`` files: pip compiles them, and an interpreter writes them on
first import), and each of the three is run once, untimed, before the rounds, so the bytecode
exists and the store's vector cache file (``memories.db.vectors/``, written by the first search
after a change) is in place.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_scale import _JA, _words, fill

from kioku import Kioku
from kioku.interfaces.claude_code import daemon_client
from kioku.interfaces.claude_code.settings import ENTRY
from kioku.ports.store import MemoryFilter
from kioku.service.lifecycle.batch_state import LAST_DAY_KEY, LAST_RUN_KEY
from kioku.service.lifecycle.schedule import AUTO_BATCH_ENV, LOG_NAME

SERIES = ("floor", "in_process", "daemon")


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("KIOKU_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env[AUTO_BATCH_ENV] = "1"
    env.update(extra)
    return env


def _time(args: list[str], stdin: str, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(args, input=stdin, capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - t0, proc.stdout


def store_state(home: Path) -> dict[str, Any]:
    """What a nightly batch would change: memories active, archived and per level, the batch
    state recorded in the store, and the size of ``batch.log`` (absent: -1)."""
    with Kioku.open(home, env={}) as kioku:
        store = kioku.store
        scope = {"user_id": kioku.user_id, "agent_id": kioku.agent_id}
        stats = store.stats(kioku.user_id, kioku.agent_id)
        state = {
            "active": store.count(MemoryFilter(**scope, archived=False)),
            "archived": stats.archived,
            "by_level": {str(k): v for k, v in sorted(stats.by_level.items()) if v},
            "batch_last_day": store.get_state(LAST_DAY_KEY),
            "last_compression_run": store.get_state(LAST_RUN_KEY),
        }
    log = home / LOG_NAME
    state["batch_log_bytes"] = log.stat().st_size if log.exists() else -1
    return state


def fresh_state(size: int) -> dict[str, Any]:
    """The state right after ``fill``: every memory active at level 1, no batch ever run."""
    return {
        "active": size,
        "archived": 0,
        "by_level": {"1": size},
        "batch_last_day": None,
        "last_compression_run": None,
        "batch_log_bytes": -1,
    }


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    return [f"{k} {before[k]!r} -> {after.get(k)!r}" for k in before if before[k] != after.get(k)]


def spread(values: list[float]) -> dict[str, float]:
    """Median, p25, p75, min and max in milliseconds."""
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return {
        "median": round(statistics.median(values) * 1000, 1),
        "p25": round(q1 * 1000, 1),
        "p75": round(q3 * 1000, 1),
        "min": round(min(values) * 1000, 1),
        "max": round(max(values) * 1000, 1),
    }


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

    answered = 0

    def floor(_: str) -> float:
        return _time([sys.executable, "-c", "pass"], "", _env())[0]

    def in_process(prompt: str) -> float:
        nonlocal answered
        seconds, out = _time(hook, payload(prompt), _env(KIOKU_NO_DAEMON="1"))
        answered += "<memories>" in out
        return seconds

    def daemon(prompt: str) -> float:
        nonlocal answered
        seconds, out = _time(hook, payload(prompt), _env())
        answered += "<memories>" in out
        return seconds

    run: dict[str, Callable[[str], float]] = {
        "floor": floor,
        "in_process": in_process,
        "daemon": daemon,
    }
    # The daemon inherits this process's environment (daemon_client.start_detached).
    os.environ[AUTO_BATCH_ENV] = "1"
    daemon_client.start_detached(home, None, 600)
    deadline = time.monotonic() + 120
    while not daemon_client.status(home)["running"] and time.monotonic() < deadline:
        time.sleep(0.1)
    if not daemon_client.status(home)["running"]:
        raise SystemExit("the daemon did not start within 120 s")
    times: dict[str, list[float]] = {name: [] for name in SERIES}
    try:
        for name in SERIES:  # warm-ups, not timed
            run[name]("warm up")
        answered = 0
        before = store_state(home)
        before["daemon_pid"] = daemon_client.status(home)["pid"]
        for round_no, prompt in enumerate(prompts):
            shift = round_no % len(SERIES)
            for name in SERIES[shift:] + SERIES[:shift]:
                times[name].append(run[name](prompt))
        # The same daemon answered throughout: one that stopped would have left the hooks to
        # answer in process (and start another).
        after = {**store_state(home), "daemon_pid": daemon_client.status(home)["pid"]}
    finally:
        daemon_client.stop(home)
    changed = changes(before, after)
    if changed:
        print(
            "the store or the daemon changed during the timed runs, so the figures are void: "
            + "; ".join(changed),
            file=sys.stderr,
        )
        raise SystemExit(1)
    del before["daemon_pid"]
    result: dict[str, Any] = {"runs": runs, "store_state": before}
    for name in SERIES:
        result[name] = spread(times[name])
    for name in ("in_process", "daemon"):
        diffs = [h - f for h, f in zip(times[name], times["floor"], strict=True)]
        overhead = spread(diffs)
        result[f"{name}_overhead"] = {k: overhead[k] for k in ("median", "p25", "p75")}
    # The keys of the earlier, sequential output, kept for scripts that read them.
    result["floor_ms"] = result["floor"]["median"]
    for name in ("in_process", "daemon"):
        result[f"{name}_ms"] = result[name]["median"]
        result[f"{name}_overhead_ms"] = result[f"{name}_overhead"]["median"]
    result["answers_with_memories"] = f"{answered} of {2 * runs}"
    return result


def _prepare(home: Path, size: int, seed: int) -> None:
    """Fill a new home, or check that a kept one is still as a fresh fill left it."""
    if (home / "memories.db").exists():
        found = store_state(home)
        changed = changes(fresh_state(size), found)
        if changed:
            print(
                f"{home} is no longer as a fresh fill left it ({'; '.join(changed)}): "
                f"remove it (rm -r {home}) and run again to fill a new one",
                file=sys.stderr,
            )
            raise SystemExit(2)
        return
    with Kioku.open(home, env={}) as kioku:
        fill(kioku, size, seed)


def _row(name: str, s: dict[str, float]) -> str:
    return (
        f"  {name:<24} {s['median']:>8.1f} {s['p25']:>8.1f}-{s['p75']:<8.1f} "
        f"{s['min']:>8.1f}-{s['max']:<8.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=36_500)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--store", type=Path, help="keep the filled home here and reuse it")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.runs < 2:
        parser.error("--runs must be at least 2 (spreads need two values)")
    os.environ[AUTO_BATCH_ENV] = "1"
    with tempfile.TemporaryDirectory() as tmp:
        home = (args.store or Path(tmp)) / f"hooks-{args.size}"
        _prepare(home, args.size, args.seed)
        result = {"memories": args.size, **measure(home, args.runs, args.seed)}
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(result))
        return
    state = result["store_state"]
    print(
        f"{result['memories']:,} memories ({state['active']:,} active, no batch run), "
        f"{result['runs']} interleaved rounds; load average after "
        f"{' '.join(str(x) for x in result['load_average'])}"
    )
    print(f"  {'ms':<24} {'median':>8} {'p25-p75':^17} {'min-max':^17}")
    print(_row("python -c pass (floor)", result["floor"]))
    print(_row("hook in process", result["in_process"]))
    print(_row("hook via the warm daemon", result["daemon"]))
    for name, label in (("in_process", "in process"), ("daemon", "via the daemon")):
        o = result[f"{name}_overhead"]
        print(
            f"  overhead {label}: {o['median']} ms (median of per-round hook - floor; "
            f"p25-p75 {o['p25']}-{o['p75']})"
        )
    print(f"  {result['answers_with_memories']} answers held memories")


if __name__ == "__main__":
    main()
