"""The streaming journal: its flush policy, tool events, recovery, file safety, and SIGKILL.

The flush policy runs on a fake clock with the background thread off, so no test depends
on how fast the machine is. The kill test streams from a real child process and bounds
what it loses only by the child's own clock readings.
"""

from __future__ import annotations

import json
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kioku.errors import KiokuError, ValidationError
from kioku.service.journal import (
    FLUSH_INTERVAL_SEC,
    FLUSH_SIZE_CHARS,
    JournalClosedError,
    JournalCorruptError,
    JournalError,
    JournalInUseError,
    OrphanJournalError,
    StreamingJournal,
    discard,
    has_orphan,
    journal_filename,
    journal_path,
    orphans,
    recover,
)
from tests.cli.conftest import clean_env
from tests.reliability import journal_child


class FakeClock:
    """A monotonic clock that moves only when told; counts how often it was read."""

    def __init__(self) -> None:
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now


def _open(directory: Path, session: str = "s1", **kw: Any) -> StreamingJournal:
    kw.setdefault("background", False)
    kw.setdefault("clock", FakeClock())
    return StreamingJournal.open(directory, session, trigger="chat", sender="alice", **kw)


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _texts(path: Path) -> list[str]:
    return [e["text"] for e in _events(path) if e["event"] == "text"]


def test_text_waits_for_500_characters_and_is_written_whole(tmp_path: Path) -> None:
    assert FLUSH_SIZE_CHARS == 500
    j = _open(tmp_path)
    (first,) = _events(j.path)
    keys = ("event", "trigger", "sender", "session_id")
    assert [first[k] for k in keys] == ["start", "chat", "alice", "s1"]
    for _ in range(49):
        j.write_text("0123456789")
    j.write_text("abcdefghi")  # 499 characters wait
    assert _texts(j.path) == []
    j.write_text("予")  # the 500th is a Japanese character: characters count, not bytes
    assert _texts(j.path) == ["0123456789" * 49 + "abcdefghi予"]
    j.write_text("x" * 1234)  # one fragment larger than the threshold is never split
    assert _texts(j.path)[1] == "x" * 1234
    j.write_text("あ" * 499)
    assert len(_texts(j.path)) == 2
    j.close()


def test_text_is_written_once_a_second_has_passed(tmp_path: Path) -> None:
    assert FLUSH_INTERVAL_SEC == 1.0
    clock = FakeClock()
    j = _open(tmp_path, clock=clock)
    j.write_text("ab")
    clock.now = 0.999
    j.write_text("c")
    assert _texts(j.path) == []
    clock.now = 1.0
    j.write_text("d")
    assert _texts(j.path) == ["abcd"]
    clock.now = 1.5
    j.write_text("e")
    clock.now = 1.9
    j.write_text("")  # an empty fragment changes nothing, even when the buffer is due
    j.write_text("")
    assert _texts(j.path) == ["abcd"]
    clock.now = 2.0
    j.write_text("f")
    assert _texts(j.path) == ["abcd", "ef"]
    clock.now = 50.0
    for _ in range(5):
        j.write_text("")
    assert _texts(j.path) == ["abcd", "ef"]
    j.close()


def test_any_text_comes_back_exactly(tmp_path: Path) -> None:
    fragments = '予算の|会議|は明日。\n|🌸|a"b\\c|e\u0301|\t|\ud83d||終'.split("|")
    j = _open(tmp_path)
    for fragment in fragments:
        j.write_text(fragment)
    j.close()
    got = recover(tmp_path, "s1")
    assert got.text == "".join(fragments)
    assert got.skipped_lines == 0


def test_tool_events_follow_the_text_before_them(tmp_path: Path) -> None:
    moment = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    j = _open(tmp_path, clock=FakeClock(), now=lambda: moment)
    j.write_text("let me look ")
    first = j.write_tool_start("search", "query=budget")
    second = j.write_tool_start("read")
    assert first != second
    j.write_tool_end(first, ok=True, result_summary="3 hits")
    with pytest.raises(JournalError, match="already ended"):
        j.write_tool_end(first, ok=False)
    with pytest.raises(JournalError, match="unknown"):
        j.write_tool_end("nope", ok=True)
    j.write_text("found it")
    kinds = [(e["event"], e.get("text")) for e in _events(j.path)]
    assert kinds == [("start", None), ("text", "let me look "), *[("tool_start", None)] * 2,
                     ("tool_end", None)]  # fmt: skip
    j.close()
    got = recover(tmp_path, "s1")
    assert got.started_at == moment.isoformat()
    assert got.text == "let me look found it"
    done, pending = got.tool_calls
    assert (done.call_id, done.tool, done.args_summary, done.finished, done.ok) == (
        first, "search", "query=budget", True, True)  # fmt: skip
    assert (done.result_summary, done.finished_at) == ("3 hits", moment.isoformat())
    assert (pending.tool, pending.finished, pending.ok) == ("read", False, None)


def test_finalize_returns_the_stream_and_deletes_the_owner_only_file(tmp_path: Path) -> None:
    short = tmp_path / "home" / "short"
    j = _open(short)
    assert stat.S_IMODE(short.stat().st_mode) == 0o700
    assert stat.S_IMODE(j.path.stat().st_mode) == 0o600
    j.write_text("hello ")
    j.write_tool_end(j.write_tool_start("clock"), ok=False)
    j.write_text("world")
    got = j.finalize()
    assert (got.text, got.completed, got.trigger) == ("hello world", True, "chat")
    assert [c.ok for c in got.tool_calls] == [False]
    assert list((short).iterdir()) == []
    with pytest.raises(JournalClosedError):
        j.write_text("more")
    j.close()  # harmless once finalized
    kept = _open(short)
    kept.write_text("kept")
    record = kept.finalize(delete=False)
    assert recover(short, "s1").completed
    assert discard(record)
    assert not journal_path(short, "s1").exists()


def _stream_that_fails(directory: Path) -> None:
    with _open(directory, "s2") as j:
        j.write_text("half a sen")
        raise RuntimeError("the model connection dropped")


def test_a_stream_that_raises_leaves_an_orphan(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError):
        _stream_that_fails(tmp_path)
    assert issubclass(OrphanJournalError, KiokuError)
    got = recover(tmp_path, "s2")
    assert (got.text, got.completed) == ("half a sen", False)


def test_background_thread_writes_a_stalled_buffer(tmp_path: Path) -> None:
    clock = FakeClock()
    j = _open(tmp_path, "s3", clock=clock, background=True)
    j.write_text("stalled mid-")
    seen = clock.reads
    deadline = time.monotonic() + 30
    while clock.reads < seen + 2 and time.monotonic() < deadline:  # the thread looked twice
        time.sleep(0.01)
    assert clock.reads >= seen + 2
    assert _texts(j.path) == []  # ... and found the buffer not yet due
    clock.now = 1.0
    while not _texts(j.path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _texts(j.path) == ["stalled mid-"]
    j.finalize()
    assert not any(t.name.startswith("kioku-journal-s3") for t in threading.enumerate())


def test_concurrent_writers_keep_every_fragment_whole(tmp_path: Path) -> None:
    j = _open(tmp_path)

    def feed(worker: int) -> None:
        for n in range(300):
            j.write_text(f"<{worker}:{n}>")
            if n % 100 == 0:
                j.write_tool_end(j.write_tool_start(f"t{worker}"), ok=True)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(feed, range(4)))
    got = j.finalize()
    for worker in range(4):
        positions = [got.text.index(f"<{worker}:{n}>") for n in range(300)]
        assert positions == sorted(positions)
    assert len(got.text) == sum(len(f"<{w}:{n}>") for w in range(4) for n in range(300))
    assert len({c.call_id for c in got.tool_calls}) == 12


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def test_recover_skips_and_counts_garbage_and_a_torn_last_line(tmp_path: Path) -> None:
    j = _open(tmp_path)
    j.write_text("a" * 500)
    path = j.path
    _append(path, b'not json\n[1, 2]\n{"event": "text", "text": 5}\n\n\xff\xfe\n')
    _append(path, b'{"event":"tool_end","call_id":"call-9","ok":true,"at":"x"}\n{"a":1}\n')
    j.write_text("b" * 500)
    j.close()
    text = "a" * 500 + "b" * 500
    assert recover(tmp_path, "s1").skipped_lines == 6
    _append(path, '{"event":"text","text":"予算'.encode()[:-2])  # torn inside a character
    got = recover(tmp_path, "s1")
    assert (got.text, got.skipped_lines, got.completed) == (text, 7, False)
    assert path.exists()  # kept until discarded
    assert recover(tmp_path, "s1", delete=True).text == got.text
    assert not path.exists()


def test_a_file_that_is_not_a_journal_is_reported_and_kept(tmp_path: Path) -> None:
    (tmp_path / "s1.jsonl").write_text("hello, this is not a journal\n")
    assert orphans(tmp_path) == ["s1"]
    with pytest.raises(JournalCorruptError, match="not a kioku streaming journal"):
        recover(tmp_path, "s1", delete=True)
    assert (tmp_path / "s1.jsonl").exists()
    _open(tmp_path, "s2").close()
    (tmp_path / "s1.jsonl").write_bytes(journal_path(tmp_path, "s2").read_bytes())
    with pytest.raises(JournalCorruptError, match="belongs to session 's2'"):
        recover(tmp_path, "s1")


UNSAFE = ["a/b", "../etc/passwd", "..", ".", ".hidden", "a\\b", "C:x", "Ab", "ab", "con", "会議",
          "x" * 200, "y" * 199 + "/", "con.txt", "a b", "~1"]  # fmt: skip


def test_session_names_map_to_distinct_safe_files(tmp_path: Path) -> None:
    names = [journal_filename(s) for s in UNSAFE]
    assert len({n.casefold() for n in names}) == len(UNSAFE)
    for session, name in zip(UNSAFE, names, strict=True):
        assert not {"/", "\\", "\0", ":"} & set(name)
        assert name[0] != "."
        assert name.endswith(".jsonl")
        assert len(name.encode()) <= 255
        assert journal_path(tmp_path, session).parent == tmp_path
    assert journal_filename("ab") == "ab.jsonl"
    for session in UNSAFE[:5]:
        _open(tmp_path, session).close()
    assert orphans(tmp_path) == sorted(UNSAFE[:5])
    assert sorted(p.parent for p in tmp_path.rglob("*")) == [tmp_path] * 5


@pytest.mark.parametrize("session", ["", "   ", "a\0b", "a\nb", "z" * 201, "\ud800"])
def test_bad_session_names_are_refused(tmp_path: Path, session: str) -> None:
    with pytest.raises(ValidationError):
        _open(tmp_path / "j", session)
    assert not (tmp_path / "j").exists()


def test_orphans_are_the_journals_nobody_writes(tmp_path: Path) -> None:
    assert (orphans(tmp_path / "missing"), has_orphan(tmp_path / "missing", "a")) == ([], False)
    _open(tmp_path, "crashed").close()
    _open(tmp_path, "finished").finalize()
    live = _open(tmp_path, "live")
    assert orphans(tmp_path) == ["crashed"]
    states = [has_orphan(tmp_path, s) for s in ("crashed", "finished", "live")]
    assert states == [True, False, False]
    with pytest.raises(JournalInUseError):
        recover(tmp_path, "live")
    with pytest.raises(JournalInUseError):
        _open(tmp_path, "live")
    live.close()
    assert orphans(tmp_path) == ["crashed", "live"]


def test_opening_over_an_orphan_is_refused_until_it_is_recovered(tmp_path: Path) -> None:
    first = _open(tmp_path)
    first.write_text("the earlier answer")
    first.close()
    with pytest.raises(OrphanJournalError, match="unrecovered"):
        _open(tmp_path)
    record = recover(tmp_path, "s1")
    assert has_orphan(tmp_path, "s1")  # nothing is deleted before the caller stored it
    assert discard(record)
    assert not discard(record)
    again = _open(tmp_path)
    again.write_text("a newer, longer answer")
    again.close()
    assert not discard(record)  # never another journal at the same name
    assert recover(tmp_path, "s1").text == "a newer, longer answer"


CHILD = Path(journal_child.__file__)
MIN_CHARS, MIN_SECONDS = 3000, 2.5
SLACK = 0.25  # seconds, of the child's clock, for the flush thread to wake and write
STALL_SLACK = 1.0  # a looser bound that must still show the stalled buffer written out


def _kill_when(directory: Path, session: str, phase: str, after: int) -> list[list[str]]:
    """Run a child; SIGKILL it once it streamed enough and is ``after`` fragments into
    ``phase`` (for a stall: ``after`` tenths of a second into it, by its clock)."""
    proc = subprocess.Popen([sys.executable, str(CHILD), str(directory), session],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=clean_env())  # fmt: skip
    assert proc.stdout is not None
    t0, lines, run, last_text = -1.0, [], 0, 0.0
    for raw in proc.stdout:
        fields = raw.split()
        if fields[0] == "start":
            t0 = float(fields[1])
            continue
        lines.append(fields)
        now = float(fields[3])
        run = run + 1 if len(lines) > 1 and lines[-2][1] == fields[1] else 1
        last_text = now if fields[1] != "stall" else last_text
        into = (now - last_text) * 10 if phase == "stall" else run
        enough = int(fields[2]) >= MIN_CHARS and now - t0 >= MIN_SECONDS
        if enough and fields[1] == phase and into >= after:
            proc.send_signal(signal.SIGKILL)
            break
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err
    if not rest.endswith("\n"):
        rest = rest.rpartition("\n")[0]
    return lines + [line.split() for line in rest.splitlines()]


def _handed_after(lines: list[list[str]], moment: float) -> int:
    return sum(len(journal_child.fragment(int(f[0]))) for f in lines if float(f[3]) > moment)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_sigkill_loses_at_most_about_a_second_of_text(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    points = {"trickle": 10, "stall": 23, "burst": 30}
    with ThreadPoolExecutor(len(points)) as pool:
        runs = {p: pool.submit(_kill_when, tmp_path, f"kill-{p}", p, n) for p, n in points.items()}
    lost_by_point = {}
    for point, run in runs.items():
        lines = run.result()
        last_index, last_phase, last_chars, last_time = lines[-1]
        handed = "".join(journal_child.fragment(k) for k in range(int(last_index) + 1))
        assert int(last_chars) == len(handed)
        streamed = handed + journal_child.fragment(int(last_index) + 1)
        assert has_orphan(tmp_path, f"kill-{point}")
        got = recover(tmp_path, f"kill-{point}")
        assert (got.trigger, got.sender, got.completed) == ("chat", "child", False)
        assert got.skipped_lines <= 1
        assert streamed.startswith(got.text), point  # an exact prefix: nothing altered
        lost = max(0, int(last_chars) - len(got.text))
        moment = float(last_time) - FLUSH_INTERVAL_SEC
        assert lost <= _handed_after(lines, moment - SLACK) + FLUSH_SIZE_CHARS, point
        assert lost <= _handed_after(lines, moment - STALL_SLACK), point
        if last_phase == "stall" and point == "stall":
            assert lost == 0  # the background thread wrote out what the trickle left
        with pytest.raises(OrphanJournalError):
            StreamingJournal.open(tmp_path, f"kill-{point}", trigger="chat")
        assert discard(got)
        lost_by_point[point] = lost
    assert orphans(tmp_path) == []
    record_property("reliability", {"kills": len(points), "characters lost": lost_by_point})
