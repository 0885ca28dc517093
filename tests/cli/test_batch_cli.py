"""batch, log, the lifecycle lines of stats and show, and the background batch trigger."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import time
from datetime import date, timedelta
from pathlib import Path

import pytest

from tests.cli.conftest import Run, clean_env

ADD = ("add", "--trigger", "t", "--content", "c")
AT = "2026-01-10T12:00:00+09:00"


def _add(kioku: Run, intensity: int, category: str, at: str = AT, text: str = "t") -> str:
    result = kioku(
        "add", "--trigger", text, "--content", text, "--intensity", str(intensity),
        "--category", category, "--at", at,
    )  # fmt: skip
    assert result.code == 0, result.err
    return result.out.strip()


def test_batch_applies_each_due_day_once_then_is_up_to_date(kioku: Run) -> None:
    work = _add(kioku, 50, "work")
    _add(kioku, 90, "emotional")
    first = kioku("batch", "--now", "2026-01-11T04:00:00+09:00", "--json")
    assert first.code == 0, first.err
    data = first.json()
    assert data["status"] == "done"
    assert [d["day"] for d in data["days"]] == ["2026-01-11"]
    day = data["days"][0]
    assert day["memories"] == 2
    assert day["compressed"] == {"1->2": 1}  # 50 × 0.885^0.625 < 50: summarised
    assert data["next_batch_at"] == "2026-01-12T03:00:00+09:00"
    # Three nights missed: each is applied, in order.
    later = kioku("batch", "--now", "2026-01-14T05:00:00+09:00", "--json").json()
    assert [d["day"] for d in later["days"]] == ["2026-01-12", "2026-01-13", "2026-01-14"]
    again = kioku("batch", "--now", "2026-01-14T06:00:00+09:00")
    assert again.code == 0
    assert "up to date" in again.out
    assert "2026-01-14" in again.out
    assert "2026-01-15T03:00:00+09:00" in again.out
    shown = kioku("show", work, "--json").json()
    assert shown["current_level"] >= 2


def test_batch_text_has_a_line_per_day_and_the_shares(kioku: Run) -> None:
    _add(kioku, 40, "casual")
    result = kioku("batch", "--now", "2026-01-12T04:00:00+09:00")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].split()[:4] == ["DAY", "MEMORIES", "REINFORCED", "L1→2"]
    assert lines[1].startswith("2026-01-12")
    assert "default/default: 1 non-protected memories" in result.out
    assert "target ≤ 15%" in result.out
    assert result.err == ""  # no progress bar when stderr is not a terminal


def test_dry_run_plans_the_next_day_and_writes_nothing(kioku: Run, home: Path) -> None:
    _add(kioku, 50, "work")
    dry = kioku("batch", "--now", "2026-01-11T04:00:00+09:00", "--dry-run", "--json")
    assert dry.code == 0, dry.err
    data = dry.json()
    assert data["status"] == "dry_run"
    assert data["due"] == ["2026-01-11"]
    assert data["days"][0]["compressed"] == {"1->2": 1}
    text = kioku("batch", "--now", "2026-01-11T04:00:00+09:00", "--dry-run")
    assert "dry run, nothing written: 1 day(s) due" in text.out
    assert kioku("log", "--json").json() == []
    stats = kioku("stats", "--json").json()
    assert stats["by_level"]["1"] == 1
    assert stats["batch"]["last_day"] is None


def test_a_second_batch_returns_at_once_while_one_runs(kioku: Run, home: Path) -> None:
    _add(kioku, 50, "work")
    fd = os.open(home / "batch.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result = kioku("batch")
        assert result.code == 0, result.err
        assert "already running" in result.out
        assert kioku("batch", "--json").json()["status"] == "already_running"
    finally:
        os.close(fd)
    assert kioku("batch", "--json").json()["status"] == "done"


def test_log_shows_what_the_batch_and_forget_did(kioku: Run) -> None:
    work = _add(kioku, 50, "work", text="The deploy failed on the staging server")
    other = _add(kioku, 60, "decision", text="We picked SQLite over Postgres for the notes")
    kioku("batch", "--now", "2026-01-11T04:00:00+09:00")
    kioku("forget", other)
    rows = kioku("log", "--json").json()
    assert [r["event"] for r in rows] == ["compress", "delete"]
    compress, delete = rows
    assert compress["memory_id"] == work
    assert (compress["level_before"], compress["level_after"]) == (1, 2)
    assert compress["batch_day"] == "2026-01-11"
    assert compress["details"]["method"] == "summary"
    assert delete["memory_id"] == other
    assert delete["details"]["why"] == "forget"
    only = kioku("log", "--event", "delete", "--json").json()
    assert [r["event"] for r in only] == ["delete"]
    assert [r["memory_id"] for r in kioku("log", "--id", work, "--json").json()] == [work]
    assert len(kioku("log", "--limit", "1", "--json").json()) == 1
    assert kioku("log", "--since", "2030-01-01", "--json").json() == []
    text = kioku("log")
    assert text.code == 0
    assert text.out.splitlines()[0].split() == [
        "TIME", "EVENT", "MEMORY", "LEVEL", "SCORE", "DETAILS",
    ]  # fmt: skip
    assert "2026-01-11 03:00  compress" in text.out
    assert "1→2" in text.out
    assert "SCOPE" in kioku("log", "--all-scopes").out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("batch", "--now", "yesterday"), "--now"),
        (("log", "--event", "explode"), "--event"),
        (("log", "--limit", "0"), "--limit"),
        (("log", "--since", "soon"), "--since"),
    ],
)
def test_bad_input_exits_2(kioku: Run, args: tuple[str, ...], needle: str) -> None:
    result = kioku(*args)
    assert result.code == 2
    assert needle in result.err


def test_stats_reports_compression_and_the_batch(kioku: Run) -> None:
    _add(kioku, 50, "work")
    _add(kioku, 90, "emotional")
    kioku(*ADD, "--intensity", "70", "--category", "emotional", "--protected", "--at", AT)
    before = kioku("stats", "--json").json()
    assert before["batch"]["last_day"] is None
    assert before["batch"]["overdue"] is True
    assert before["memory_compression_rate"] is None  # nothing compressed yet
    kioku("batch", "--now", "2026-01-11T04:00:00+09:00")
    data = kioku("stats", "--json").json()
    assert data["memory_archive_count"] == 0
    assert data["non_protected"] == 2
    # Spec 004: (original − compressed) / original, UTF-8 bytes, over the summarised memory.
    [entry] = kioku("log", "--event", "compress", "--json").json()
    original, compressed = entry["details"]["bytes_before"], entry["details"]["bytes_after"]
    assert data["compression"] == {
        "memories": 1,
        "original_bytes": original,
        "compressed_bytes": compressed,
        "unknown_size": 0,
    }
    assert data["memory_compression_rate"] == round((original - compressed) / original, 4)
    assert data["levels"]["1"] == {"count": 1, "share": 0.5, "target": 0.15}
    assert data["levels"]["2"]["count"] == 1
    assert data["levels"]["4"]["target"] == 0.2
    assert data["batch"]["last_day"] == "2026-01-11"
    # Days are due since 2026-01-11, but a batch just ran: not overdue for the fallback.
    assert data["batch"]["due_days"] > 0
    assert data["batch"]["overdue"] is False
    kioku("batch")
    now = kioku("stats", "--json").json()["batch"]
    assert now["overdue"] is False
    assert now["due_days"] == 0
    text = kioku("stats").out
    assert "smaller (memory_compression_rate)" in text
    assert "memory_archive_count" in text
    assert "batch       last day" in text


def test_show_projects_the_score_month_by_month(kioku: Run) -> None:
    memory_id = kioku(*ADD, "--intensity", "80", "--category", "decision").out.strip()
    data = kioku("show", memory_id, "--json").json()
    projection = data["retention"]["projection"]
    assert len(projection) == 12
    ends = [date.fromisoformat(p["at"]) for p in projection]
    assert all((end + timedelta(days=1)).day == 1 for end in ends)  # month ends
    assert ends == sorted(ends)
    scores = [p["score"] for p in projection]
    assert scores == sorted(scores, reverse=True)
    assert [f["level"] for f in data["retention"]["forecast"]] == [2, 3, 4]
    shown = kioku("show", memory_id)
    assert shown.code == 0, shown.err
    assert "if never recalled, at the end of each month" in shown.out
    assert "→ L3 trace" in shown.out
    month_lines = shown.out.split("at the end of each month")[1].strip().splitlines()[1:]
    assert len(month_lines) == 6  # two columns of six months


# -- the fallback trigger ---------------------------------------------------------------------


def _last_day(home: Path) -> str | None:
    with sqlite3.connect(home / "memories.db") as conn:
        row = conn.execute("SELECT value FROM state WHERE key = 'batch_last_day'").fetchone()
    return None if row is None else str(row[0])


def test_an_overdue_batch_starts_in_the_background_without_blocking(kioku: Run, home: Path) -> None:
    _add(kioku, 50, "work")
    assert _last_day(home) is None
    on = clean_env(KIOKU_NO_AUTO_BATCH="")
    # Hold the database's write lock: the background batch has to wait for it, the command
    # that started it must not.
    blocker = sqlite3.connect(home / "memories.db", timeout=30)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        listed = kioku("list", "--json", env=on)
        assert listed.code == 0, listed.err
        assert len(listed.json()) == 1
        log = (home / "batch.log").read_text()
        assert "overdue batch started by `kioku list`" in log
        assert _last_day(home) is None  # still waiting for the lock
    finally:
        blocker.rollback()
        blocker.close()
    deadline = time.monotonic() + 60
    while _last_day(home) is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _last_day(home) is not None
    # Up to date now: the next command starts nothing.
    while '"status"' not in (home / "batch.log").read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert kioku("list", env=on).code == 0
    time.sleep(0.5)
    assert (home / "batch.log").read_text().count("overdue batch started") == 1


def test_no_background_batch_when_disabled_or_for_tool_commands(kioku: Run, home: Path) -> None:
    _add(kioku, 50, "work")
    assert kioku("list").code == 0  # KIOKU_NO_AUTO_BATCH=1 in the test environment
    on = clean_env(KIOKU_NO_AUTO_BATCH="")
    assert kioku("doctor", env=on).code == 0
    assert kioku("config", "show", env=on).code == 0
    assert kioku("batch", "--dry-run", env=on).code == 0
    time.sleep(0.5)
    assert not (home / "batch.log").exists()
    assert _last_day(home) is None


def test_a_batch_far_ahead_of_the_clock_needs_force(kioku: Run) -> None:
    _add(kioku, 90, "emotional")
    refused = kioku("batch", "--now", "2100-01-01T12:00:00+09:00")
    assert refused.code == 2
    assert "--force" in refused.err
    assert len(refused.err.strip().splitlines()) == 1
    assert kioku("stats", "--json").json()["batch"]["last_day"] is None  # nothing written
    ahead = (date.today() + timedelta(days=40)).isoformat() + "T12:00:00+09:00"
    forced = kioku("batch", "--now", ahead, "--force", "--json")
    assert forced.code == 0, forced.err
    assert forced.json()["status"] == "done"


def test_an_automatic_batch_stops_at_the_limit_and_names_the_command(kioku: Run) -> None:
    _add(kioku, 90, "emotional")
    assert kioku("batch", "--now", "2026-01-11T04:00:00+09:00").code == 0
    result = kioku("batch", "--auto", "--now", "2026-03-01T04:00:00+09:00", "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert len(data["days"]) == 31
    assert data["left_due"] == 18
    assert "run `kioku batch`" in data["warnings"][0]
    assert "kioku: warning:" in result.err
    assert "run `kioku batch`" in result.err


def test_a_batch_before_the_last_batch_day_does_nothing(kioku: Run) -> None:
    _add(kioku, 90, "emotional")
    assert kioku("batch", "--now", "2026-01-12T04:00:00+09:00").code == 0
    before = kioku("list", "--all", "--json").json()
    result = kioku("batch", "--now", "2026-01-11T04:00:00+09:00")
    assert result.code == 0, result.err
    assert "nothing done" in result.out
    assert "before the last batch day (2026-01-12)" in result.err
    assert kioku("list", "--all", "--json").json() == before


def test_show_says_a_protected_memory_does_not_fade(kioku: Run) -> None:
    memory_id = kioku(
        *ADD, "--intensity", "60", "--category", "casual", "--protected", "--at", AT
    ).out.strip()
    assert kioku("batch", "--now", "2026-02-11T04:00:00+09:00").code == 0
    shown = kioku("show", memory_id, "--json").json()
    assert shown["retention_score"] == 60
    assert shown["retention"]["note"].startswith("protected: does not fade")
    assert {p["score"] for p in shown["retention"]["projection"]} == {60}
    assert "protected: does not fade" in kioku("show", memory_id).out


def test_a_config_that_still_sets_delete_ratio_loads_with_one_warning(
    kioku: Run, home: Path
) -> None:
    _add(kioku, 50, "work")
    (home / "config.toml").write_text("[compression]\ndelete_ratio = 0.2\n", encoding="utf-8")
    result = kioku("stats", "--json")
    assert result.code == 0, result.err
    [line] = result.err.strip().splitlines()
    assert "compression.delete_ratio" in line
    assert "ignored" in line
    assert result.json()["levels"]["4"]["target"] == 0.2  # the rest of 15 + 30 + 35 %


def test_the_batch_waits_for_the_vector_graph_it_leaves_to_build(kioku: Run, home: Path) -> None:
    # A graph past retrieval.ann_min_vectors (the ann extra) is built in the background; a
    # batch process would stop that on exit, so it waits, and the files are there after it.
    pytest.importorskip("usearch")
    env = clean_env(KIOKU_RETRIEVAL__ANN_MIN_VECTORS="1")
    for n in range(6):
        text = f"lantern harbor {n}"
        result = kioku(
            "add", "--trigger", text, "--content", text, "--intensity", "50",
            "--category", "work", "--at", AT, env=env,
        )  # fmt: skip
        assert result.code == 0, result.err
    before = kioku("doctor", "--json", env=env).json()["checks"]
    assert "not built yet" in next(c["detail"] for c in before if c["name"] == "vectors")
    done = kioku("batch", "--now", "2026-01-11T04:00:00+09:00", "--json", env=env)
    assert done.code == 0, done.err
    assert done.json()["status"] == "done"
    cache = home / "memories.db.vectors"
    assert list(cache.glob("*.ann")), sorted(p.name for p in cache.iterdir())
    assert list(cache.glob("*.annmap"))
    assert not list(cache.glob("*.tmp"))
    assert not list(cache.glob(".*.tmp"))
    after = kioku("doctor", "--json", env=env).json()["checks"]
    assert "MB beside the cache" in next(c["detail"] for c in after if c["name"] == "vectors")
    # Below the threshold (the default, 200,000) doctor says nothing of a graph.
    assert "vectors" not in {c["name"] for c in kioku("doctor", "--json").json()["checks"]}
