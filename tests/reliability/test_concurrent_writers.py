"""Many processes on one home at once: writers, nightly batches and recalls.

Eight writer processes (``kioku import`` of JSONL files, ``kioku remember`` loops and Python
processes using the API), two ``kioku batch --now`` loops over the same days and two
long-lived recalling processes all start together on a freshly initialised home (on
PostgreSQL, half as many: five writers, one batch loop, one recaller).
Afterwards every turn written is stored exactly once (found by its source id, or by its
session id for ``kioku remember``), no process failed or saw a locked database, and the store
passes its integrity check and ``kioku doctor``. Each test runs on SQLite and on PostgreSQL
(a schema of the test server, fewer turns and batch days).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kioku.service.lifecycle.batch import LAST_DAY_KEY
from tests.cli.conftest import run_kioku
from tests.reliability.support import (
    Finished,
    Place,
    integrity,
    kioku_argv,
    scale,
    start,
    state_value,
)

API_WRITER = textwrap.dedent(
    """
    import sys
    from kioku import Kioku

    home, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Kioku.open(home) as k:
        for i in range(n):
            k.remember_turn(
                f"{tag} turn {i}: the deploy of service {i % 7} failed again, 少し疲れた",
                f"Let us look at the volume permissions of service {i % 7} together",
                source_ids=[f"{tag}-{i}"],
            )
    """
)

RECALLER = textwrap.dedent(
    """
    import sys
    import time
    from pathlib import Path
    from kioku import Kioku

    home, stop, tag = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    queries = ["deploy failed", "volume permissions", "母の誕生日", "coffee with Aiko", "疲れた"]
    done = 0
    with Kioku.open(home) as k:
        while done < 5 or not stop.exists():
            k.recall(queries[done % len(queries)], session_id=tag)
            done += 1
            time.sleep(0.01)  # leave the writers some of the CPU
    print(done)
    """
)

CLI_LOOP = (
    'for i in $(seq 1 "$3"); do "$0" -m kioku --home "$1" remember '
    '--user "$2 turn $i: coffee with Aiko before the concert, 来週の木曜は母の誕生日" '
    '--assistant "Noted" --session "$2-$i" >/dev/null || exit 1; done'
)

BATCH_LOOP = (
    'home="$1"; shift; for now in "$@"; do '
    '"$0" -m kioku --home "$home" batch --now "$now" --force --json || exit 1; sleep 1; done'
)


def _json_documents(text: str) -> list[dict[str, Any]]:
    """Every JSON document in ``text``, written one after another."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return found
        value, pos = decoder.raw_decode(text, pos)
        found.append(value)


def _finish(name: str, proc: subprocess.Popen[str], timeout: float = 600) -> Finished:
    out, err = proc.communicate(timeout=timeout)
    return Finished(name, proc.returncode, out, err)


def _write_jsonl(path: Path, tag: str, n: int) -> None:
    lines = [
        json.dumps(
            {
                "user": f"{tag} line {i}: 今日は雨で電車が遅れた, the exam is next week",
                "assistant": "That sounds stressful; shall we plan the study days?",
                "source_id": f"{tag}-{i}",
            },
            ensure_ascii=False,
        )
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="bash loops")
def test_eight_writers_two_batches_and_recalls_on_one_home(
    tmp_path: Path, place: Place, record_property: Callable[[str, object], None]
) -> None:
    home = place.home
    stop = tmp_path / "stop"
    k = scale()
    lean = place.backend == "postgres"  # half the processes, fewer turns and days
    n_import, n_api, n_cli = (20 * k, 8 * k, 2 * k) if lean else (150 * k, 60 * k, 6 * k)
    imports, apis, clis, loops = (2, 2, 1, 1) if lean else (3, 3, 2, 2)
    tokyo = ZoneInfo("Asia/Tokyo")
    first = datetime.now(tokyo).replace(hour=4, minute=0, second=0, microsecond=0)
    batch_days = [(first + timedelta(days=d)).isoformat() for d in range(1, 3 if lean else 7)]
    env = place.env()
    init = run_kioku("--home", str(home), "init", env=env)
    assert init.code == 0, init.err

    writers: dict[str, subprocess.Popen[str]] = {}
    expected_sources: set[str] = set()
    for p in range(imports):
        source = tmp_path / f"import{p}.jsonl"
        _write_jsonl(source, f"imp{p}", n_import)
        writers[f"import{p}"] = start(
            kioku_argv(home, "import", str(source), "--json"), **place.settings
        )
        expected_sources |= {f"imp{p}-{i}" for i in range(n_import)}
    for p in range(apis):
        argv = [sys.executable, "-c", API_WRITER, str(home), f"api{p}", str(n_api)]
        writers[f"api{p}"] = start(argv, **place.settings)
        expected_sources |= {f"api{p}-{i}" for i in range(n_api)}
    for p in range(clis):
        argv = ["bash", "-c", CLI_LOOP, sys.executable, str(home), f"cli{p}", str(n_cli)]
        writers[f"cli{p}"] = start(argv, **place.settings)
    expected_sessions = {f"cli{p}-{i}" for p in range(clis) for i in range(1, n_cli + 1)}
    others = {
        f"batch{b}": start(
            ["bash", "-c", BATCH_LOOP, sys.executable, str(home), *batch_days], **place.settings
        )
        for b in range(loops)
    }
    for r in range(loops):
        others[f"recall{r}"] = start(
            [sys.executable, "-c", RECALLER, str(home), str(stop), f"r{r}"], **place.settings
        )

    finished = [_finish(name, proc) for name, proc in writers.items()]
    stop.touch()
    finished += [_finish(name, proc) for name, proc in others.items()]

    for f in finished:
        assert f.code == 0, f"{f.name} exited {f.code}: {f.err}"
        assert "locked" not in f.err.lower(), f"{f.name}: {f.err}"
        assert "Traceback" not in f.err, f"{f.name}: {f.err}"
    imports = [json.loads(f.out) for f in finished if f.name.startswith("import")]
    assert [i["imported"] for i in imports] == [n_import] * len(imports)
    assert len(imports) == (2 if lean else 3)
    reports = [
        doc for f in finished if f.name.startswith("batch") for doc in _json_documents(f.out)
    ]
    statuses = Counter(r["status"] for r in reports)
    compressed = sum(n for r in reports for d in r["days"] for n in d["compressed"].values())
    # Two loops race over the same days: one may find the other already past its day.
    assert set(statuses) <= {"done", "up_to_date", "already_running", "clock_behind"}, statuses
    assert statuses["done"] >= 1
    recalls = sum(int(f.out) for f in finished if f.name.startswith("recall"))

    listed = run_kioku(
        "--home", str(home), "list", "--all", "--kind", "episode", "--limit", "100000", "--json",
        env=env,
    )  # fmt: skip
    assert listed.code == 0, listed.err
    memories = listed.json()
    sources = Counter(s for m in memories for s in m["source_ids"])
    sessions = Counter(m["session_id"] for m in memories if not m["source_ids"])
    assert set(sources) == expected_sources, "lost or unexpected turns"
    assert set(sessions) == expected_sessions, "lost or unexpected `kioku remember` turns"
    assert max(sources.values()) == 1, "a turn was stored twice"
    assert max(sessions.values()) == 1, "a `kioku remember` turn was stored twice"
    assert len(memories) == len(expected_sources) + len(expected_sessions)
    assert len({m["id"] for m in memories}) == len(memories)

    assert integrity(place) == "ok"
    doctor = run_kioku("--home", str(home), "doctor", "--json", env=env)
    assert doctor.code == 0, doctor.out + doctor.err
    assert doctor.json()["ok"] is True
    again = run_kioku(
        "--home", str(home), "batch", "--now", batch_days[-1], "--force", "--json", env=env
    )
    assert again.code == 0, again.err
    assert again.json()["status"] == "up_to_date"
    assert state_value(place, LAST_DAY_KEY) == batch_days[-1][:10]

    record_property(
        "reliability",
        {
            "store": place.backend,
            "processes": len(finished),
            "writes": len(memories),
            "batch runs": sum(statuses.values()),
            "batch days applied": statuses["done"],
            "compressed by the batches": compressed,
            "recalls": recalls,
            "lost": 0,
            "duplicated": 0,
            "lock errors": 0,
        },
    )


WRITER = textwrap.dedent(
    """
    import sys
    from kioku import Kioku

    home, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Kioku.open(home) as k:
        for i in range(n):
            k.remember(f"{tag}-{i}", "concurrent", intensity=i % 101, category="work")
    """
)


def test_four_processes_adding_each_on_a_brand_new_home(place: Place) -> None:
    """Four processes open a store that does not exist yet and add 250 memories each at
    once (on PostgreSQL, three add 20 each to a schema that does not exist yet: each one may
    create and migrate it)."""
    home = place.home
    processes, n = (3, 20) if place.backend == "postgres" else (4, 250)
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(home), f"w{p}", str(n)],
            env=place.env(),
            stderr=subprocess.PIPE,
        )
        for p in range(processes)
    ]
    for proc in writers:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    env = place.env()
    listed = run_kioku("--home", str(home), "list", "--limit", "5000", "--json", env=env).json()
    assert len(listed) == processes * n
    assert len({m["id"] for m in listed}) == processes * n
    want = {f"w{p}-{i}" for p in range(processes) for i in range(n)}
    assert {m["trigger"] for m in listed} == want
    assert integrity(place) == "ok"
    doctor = run_kioku("--home", str(home), "doctor", "--json", env=env)
    assert doctor.code == 0, doctor.out
    assert doctor.json()["ok"] is True
