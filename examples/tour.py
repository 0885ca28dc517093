#!/usr/bin/env python3
"""A guided tour of kioku's command line on a fresh home directory.

Every step runs the real ``kioku`` command and shows it, so you can repeat any of them.
Run it with ``python3 tasks.py demo`` (or ``python examples/tour.py --home DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

TURNS = Path(__file__).resolve().parent / "turns.jsonl"

MEMORIES = [
    {
        "trigger": "今日は雨だね、と挨拶された",
        "content": "天気の雑談をした。特に何も決まらなかった。",
        "intensity": "20",
        "category": "casual",
        "valence": "neutral",
        "arousal": "25",
    },
    {
        "trigger": "Asked why the orders report query takes two seconds",
        "content": "Found a missing index on orders.customer_id; with it the JOIN runs in 40 ms.",
        "intensity": "38",
        "category": "work",
        "valence": "positive",
        "arousal": "45",
        "tags": "satisfaction,relief",
        "keywords": "SQL,index,JOIN",
    },
    {
        "trigger": "「記憶システムのストレージ、MongoDBにしたらどう思う？」と聞かれた",
        "content": "技術選定について意見を求められた。JSONで十分という結論になり、"
        "設計の妥当性が確認できて少し安心した。",
        "intensity": "48",
        "category": "decision",
        "valence": "positive",
        "arousal": "35",
        "tags": "relief,satisfaction",
        "keywords": "MongoDB,JSON,技術選定",
    },
    {
        "trigger": "Told me their dog Momo died this morning",
        "content": "We talked for a long time. They remembered walking Momo by the river "
        "every evening. I promised to remember her name.",
        "intensity": "82",
        "category": "emotional",
        "valence": "negative",
        "arousal": "30",
        "tags": "sadness,love,nostalgia",
        "keywords": "Momo,dog,river",
        "protected": "",
    },
]


class Tour:
    def __init__(self, home: Path) -> None:
        self.home = home

    def run(self, *args: str, show: bool = True) -> str:
        shown = ["kioku", "--home", str(self.home), *args]
        if show:
            print(f"\n$ {shlex.join(shown)}", flush=True)
        proc = subprocess.run(
            [sys.executable, "-m", "kioku", "--home", str(self.home), *args],
            capture_output=True,
            text=True,
            check=False,
            # The tour runs the batch itself (step 10) rather than in the background.
            env={**os.environ, "KIOKU_NO_AUTO_BATCH": "1"},
        )
        if show:
            sys.stdout.write(proc.stdout)
            sys.stderr.write(proc.stderr)
        if proc.returncode != 0:
            raise SystemExit(f"tour stopped: the command above exited {proc.returncode}")
        return proc.stdout

    def add(self, memory: dict[str, str]) -> str:
        args = ["add", "--json"]
        for key, value in memory.items():
            args.append(f"--{key}")
            if value:
                args.append(value)
        out = self.run(*args, show=False)
        created = json.loads(out)
        print(
            f"\n$ kioku add --category {memory['category']} --intensity {memory['intensity']} ..."
            f"\n{created['id']}  decay {created['decay_coefficient']:.4f}  "
            f"score {created['retention_score']:.0f}  {memory['trigger'][:50]}"
        )
        return str(created["id"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, help="home directory to use (default: a temp dir)")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="kioku-tour-"))
    tour = Tour(home)

    print("== 1. Create a home: a config file with the spec's defaults and a SQLite store")
    tour.run("init")

    print("\n== 2. Remember conversation turns: the offline analyzer reads each one")
    print("   (emotion, category, keywords, and whether you asked it to be remembered)")
    for line in TURNS.read_text(encoding="utf-8").splitlines():
        turn = json.loads(line)
        print(f"\n$ kioku remember --user {shlex.quote(turn['user'][:40] + '…')} --assistant …")
        sys.stdout.write(
            tour.run(
                "remember", "--user", turn["user"], "--assistant", turn["assistant"], show=False
            )
        )

    print("\n== 3. Recall: what matters for a new message, ready to put before a prompt")
    print("   Lexical and vector search, ranked by retention and relevance; Japanese works too.")
    tour.run("recall", "母の誕生日っていつだっけ？")
    tour.run("recall", "that Docker permission error again", "--explain")

    print("\n== 4. Or describe a memory yourself: four moments of different kinds")
    print("   The category sets the decay range; intensity places the memory inside it.")
    ids = [tour.add(m) for m in MEMORIES]

    print("\n== 5. What is remembered")
    tour.run("list")

    print("\n== 6. One memory in full, and how its retention will evolve")
    print("   Work talk fades within days unless it is recalled:")
    tour.run("show", ids[1])

    print("\n== 7. The emotional moment decays slowly, and it is protected:")
    tour.run("show", ids[3])

    print("\n== 8. Totals, a health check and a backup")
    tour.run("stats", "--cost")
    tour.run("doctor")
    tour.run("backup", str(home / "backup.db"))

    print("\n== 9. Erase the small talk completely")
    tour.run("forget", ids[0])
    tour.run("stats", "--json")

    print("\n== 10. A year passes: the nightly batch forgets the way people do")
    print("   Each night recalled memories are reinforced and the others fade a day; faded")
    print("   memories are summarised, then reduced to keywords, then archived. It normally runs")
    print(
        "   at 03:00 (`kioku schedule install`); one command catches up every missed day in order."
    )
    print("   A batch ahead of the clock needs --force: here the tour plays a year in advance.")
    tour.run("batch")
    later = (datetime.now().astimezone() + timedelta(days=365)).isoformat(timespec="seconds")
    print(f"\n$ kioku batch --now {later} --force")
    days = json.loads(tour.run("batch", "--now", later, "--force", "--json", show=False))["days"]
    steps: dict[str, int] = {}
    for day in days:
        for step, n in day["compressed"].items():
            steps[step] = steps.get(step, 0) + n
    print(
        f"{len(days)} days applied: {steps.get('1->2', 0)} summaries, "
        f"{steps.get('2->3', 0)} reduced to keywords, "
        f"{sum(d['archived'] for d in days)} archived, {sum(d['linked'] for d in days)} links"
    )
    print("\n   Still vivid after a year: protected memories keep their level and their full")
    print("   score (SCORE = intensity, P = protected). The rest faded:")
    tour.run("list", "--all")
    print("\n   Recalled a year later, ahead of what faded:")
    tour.run("recall", "母の誕生日っていつだっけ？")
    print("\n   Every step is in the lifecycle log:")
    tour.run("log", "--limit", "8")

    print(f"\nDone. The memories are in {home}; try `kioku --home {home} --help`.")


if __name__ == "__main__":
    main()
