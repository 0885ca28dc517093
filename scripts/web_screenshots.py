#!/usr/bin/env python3
"""Screenshots of the web UI for docs/web-ui.md: docs/images/web-*.png.

Seeds a demo home in a temporary directory through the CLI (episodes over the last months,
nightly batches between them, a few recalls, a knowledge item and a procedure), starts
``kioku serve`` on it, and photographs the main pages with Debian's chromium (Playwright).

    .venv/bin/python scripts/web_screenshots.py [--out docs/images]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ENV = {**os.environ, "KIOKU_NO_AUTO_BATCH": "1"}

EPISODES = [
    # days ago, trigger, content, intensity, category, valence, tags
    (120, "Our dog Koro died this morning.", "Grief; we buried him under the maple.", 95,
     "emotional", "negative", "sadness,loneliness"),
    (100, "We decided to move the launch to March.", "After the outage; the team agreed.", 60,
     "decision", "neutral", "determination"),
    (90, "Coffee at the new cafe by the station.", "Flat white, too sweet cake.", 20,
     "casual", "positive", "joy"),
    (75, "The deploy failed on the migration step.", "Rolled back; the index was missing.", 55,
     "work", "negative", "frustration"),
    (60, "Got promoted to lead engineer!", "Joy and pride; celebrated with the team.", 85,
     "emotional", "positive", "joy,pride"),
    (45, "Rain all weekend, read a novel.", "A quiet, good weekend.", 25,
     "casual", "positive", "relief"),
    (30, "Chose Postgres over MySQL for the new service.", "JSONB and the team knows it.", 50,
     "decision", "neutral", ""),
    (14, "Koro's photo came up on my phone.", "Smiled and cried a little.", 70,
     "emotional", "negative", "nostalgia,sadness"),
    (3, "Lunch with Aiko, talked about her trip to Kyoto.", "She loved the temples.", 35,
     "casual", "positive", "joy"),
]  # fmt: skip


def kioku(home: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "kioku", "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=ENV,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"kioku {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def seed(home: Path) -> str:
    """The demo store; returns the id of the memory the memory page shows."""
    kioku(home, "init")
    now = datetime.now().astimezone()
    shown = ""
    batches = sorted({d for d, *_ in EPISODES} | {110, 95, 80, 65, 50, 35, 20, 10, 1})
    done: set[int] = set()
    for day in sorted(batches, reverse=True):
        for ago, trigger, content, intensity, category, valence, tags in EPISODES:
            if ago == day:
                at = (now - timedelta(days=ago)).replace(hour=11, minute=0, second=0)
                args = ["add", "--trigger", trigger, "--content", content, "--intensity"]
                args += [str(intensity), "--category", category, "--valence", valence]
                args += ["--at", at.isoformat(timespec="seconds"), "--json"]
                if tags:
                    args += ["--tags", tags]
                memory = json.loads(kioku(home, *args))
                if trigger.startswith("Got promoted"):
                    shown = str(memory["id"])
        if day in (80, 50, 20):
            kioku(home, "recall", "promoted lead engineer")
        if day not in done:
            moment = (now - timedelta(days=day)).replace(hour=4, minute=0, second=0)
            kioku(home, "batch", "--now", moment.isoformat(timespec="seconds"))
            done.add(day)
    kioku(home, "write", "knowledge", "The staging database is db-stg-2.", "--title", "staging DB")
    kioku(home, "write", "procedure", "--title", "deploy", "--description",
          "[deploy] release the web app", "--step", "run the tests", "--step",
          "run the migrations on staging", "--step", "tag and push the release")  # fmt: skip
    return shown


def serve(home: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "kioku", "--home", str(home), "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    assert process.stdout is not None
    found = re.search(r"at (http://\S+/) ", process.stdout.readline())
    if found is None:
        process.kill()
        raise SystemExit("kioku serve did not start")
    url = found.group(1)
    for _ in range(200):
        try:
            httpx.get(url + "v1/openapi.json", timeout=5)
            break
        except httpx.TransportError:
            time.sleep(0.05)
    return process, url


def shoot(url: str, memory_id: str, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    pages = [
        ("web-browse.png", "", None),
        ("web-memory.png", f"memories/{memory_id}", None),
        ("web-timeline.png", "timeline?days=365", None),
        ("web-stats.png", "stats", None),
        ("web-simulate.png", "simulate", "simulate"),
    ]
    written: list[Path] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        for name, path, action in pages:
            page.goto(url + path)
            if action == "simulate":
                page.click("button:has-text('Run the simulation')", no_wait_after=True)
                page.wait_for_selector("#result-title", timeout=300_000)
            target = out / name
            # The timeline is long: its first screen says what it is.
            full = name != "web-timeline.png"
            page.screenshot(path=str(target), full_page=full, type="png")
            written.append(target)
        browser.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    out = parser.parse_args().out
    with tempfile.TemporaryDirectory(prefix="kioku-screens-") as tmp:
        home = Path(tmp) / "home"
        memory_id = seed(home)
        process, url = serve(home)
        try:
            for path in shoot(url, memory_id, out):
                print(f"{path} ({path.stat().st_size // 1024} KB)")
        finally:
            process.terminate()
            process.wait(timeout=30)


if __name__ == "__main__":
    main()
