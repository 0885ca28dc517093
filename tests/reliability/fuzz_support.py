"""The machinery of the fuzz suite (tests/reliability/test_fuzz.py): ``kioku`` run in process,
the environment it runs in, the checks every run must pass and how many cases to try.

A real ``kioku`` process costs 0.3-0.5 s, too slow for hypothesis; :func:`run_cli` calls the
click entry point :func:`kioku.interfaces.cli.main.main` instead, with its own stdin, stdout and
stderr, and turns what escapes it into an :class:`Outcome` (an exception that escapes becomes
a "Traceback" in ``err``, so the checks see it like the real process would print it).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sqlite3
import sys
import tempfile
import time
import traceback
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

from kioku.core.sanitize import FORBIDDEN
from kioku.interfaces.cli.main import main
from tests.reliability.support import scale

__all__ = [
    "UNEXPECTED",
    "Counter",
    "Outcome",
    "assert_block",
    "assert_sound",
    "examples",
    "fuzz_env",
    "fuzz_settings",
    "memory_count",
    "run_cli",
]

_CRASH = re.compile(r"internal error|Traceback \(most recent call last\)")
#: A Python exception a hook or the drain reports as ``Name: message``: a failure kioku did
#: not foresee, not a refusal with its own message (KiokuError) nor a file it cannot read.
UNEXPECTED = re.compile(
    r"\b(?:TypeError|AttributeError|KeyError|IndexError|ValueError|OverflowError|RecursionError"
    r"|Unicode\w*Error|AssertionError|ZeroDivisionError|NameError|UnboundLocalError"
    r"|sqlite3\.\w+):"
)


#: Read once, at import: :func:`fuzz_env` takes every KIOKU_* variable away while a target runs.
_EXAMPLES = os.environ.get("KIOKU_FUZZ_EXAMPLES", "").strip()
_SCALE = scale()


def examples(default: int) -> int:
    """How many cases a target tries: ``KIOKU_FUZZ_EXAMPLES`` when set (a longer run), else
    ``default`` times ``KIOKU_RELIABILITY_SCALE``."""
    if _EXAMPLES.isdigit() and int(_EXAMPLES) > 0:
        return int(_EXAMPLES)
    return default * _SCALE


def fuzz_settings(default: int) -> settings:
    """Hypothesis settings for one target: no deadline (a store on disk), no example database
    (each run starts fresh), the health checks of slow examples off."""
    return settings(
        max_examples=examples(default),
        deadline=None,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
        ],
    )


@contextlib.contextmanager
def fuzz_env() -> Iterator[None]:
    """The environment of tests/cli/conftest.py ``clean_env`` for the current process (no
    KIOKU_* settings, Tokyo time, no background batch, no daemon), restored afterwards."""
    saved = dict(os.environ)
    for key in [k for k in os.environ if k.startswith("KIOKU_")]:
        del os.environ[key]
    os.environ.update(TZ="Asia/Tokyo", KIOKU_NO_AUTO_BATCH="1", KIOKU_NO_DAEMON="1")
    time.tzset()
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)
        time.tzset()


@dataclass
class Outcome:
    """One in-process ``kioku`` run: its exit code and what it printed."""

    argv: list[str]
    code: int
    out: str
    err: str

    def __str__(self) -> str:
        return (
            f"kioku {self.argv!r} -> exit {self.code}\nstdout: {self.out!r}\nstderr: {self.err!r}"
        )


def run_cli(argv: list[str], stdin: bytes = b"") -> Outcome:
    """``kioku ARGV`` in this process with ``stdin`` as its standard input (a real file, so the
    hooks can read it through its descriptor and ``import -`` through ``sys.stdin.buffer``)."""
    out, err = io.StringIO(), io.StringIO()
    code: int
    with tempfile.TemporaryFile() as raw:
        raw.write(stdin)
        raw.flush()
        raw.seek(0)
        handle = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
        saved = sys.stdin
        sys.stdin = handle
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    main(argv)
                    code = 0
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                except BaseException:
                    err.write(traceback.format_exc())
                    code = -1
        finally:
            sys.stdin = saved
            handle.detach()
    return Outcome(argv, code, out.getvalue(), err.getvalue())


def assert_sound(outcome: Outcome, codes: frozenset[int] | set[int]) -> None:
    """The exit code is one of ``codes``, and neither an internal error nor a traceback."""
    assert not _CRASH.search(outcome.err), str(outcome)
    assert "Traceback (most recent call last)" not in outcome.out, str(outcome)
    assert outcome.code in codes, str(outcome)
    if outcome.code not in (0, -1):
        assert outcome.err.strip(), f"a failure without a message\n{outcome}"


def assert_block(outcome: Outcome) -> None:
    """Hook output is nothing or the primed block (kioku.service.priming): the recalled
    episodes' ``<memories>`` block first when there are any, then ``<kioku-priming>`` sections,
    every block closed once, at most 10,000 characters in all, with no control character but
    its line feeds (kioku.core.inject), printable as UTF-8."""
    text = outcome.out
    if not text:
        return
    assert text.startswith(("<memories>\n", "<kioku-priming ")), str(outcome)
    assert text.endswith(("</memories>\n", "</kioku-priming>\n")), str(outcome)
    assert text.count("<memories>") == text.count("</memories>") <= 1, str(outcome)
    assert text.count("<kioku-priming ") == text.count("</kioku-priming>"), str(outcome)
    depth = 0
    for line in text.splitlines():
        if line in ("<memories>",) or line.startswith("<kioku-priming "):
            assert depth == 0, str(outcome)
            depth += 1
        elif line in ("</memories>", "</kioku-priming>"):
            assert depth == 1, str(outcome)
            depth -= 1
        else:
            assert depth == 1, f"a line outside every block\n{outcome}"
    assert len(text) <= 10_001, str(outcome)
    assert not [c for c in text if unicodedata.category(c) == "Cc" and c != "\n"], str(outcome)
    assert not FORBIDDEN.search(text.replace("\n", "")), str(outcome)
    text.encode("utf-8")  # no lone surrogate


def memory_count(home: Path) -> int:
    """Memories stored in ``home`` (active or archived); 0 without a database."""
    db = home / "memories.db"
    if not db.exists():
        return 0
    conn = sqlite3.connect(db, timeout=30)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    finally:
        conn.close()


@dataclass
class Counter:
    """What a target did, for ``record_property("reliability", ...)``."""

    target: str
    cases: int = 0
    #: Memories the cases stored (the fuzzing reached the writes, not only the checks).
    stored: int = 0
    exits: dict[int, int] = field(default_factory=dict)
    #: Other counts worth showing (blocks printed, transcripts drained...).
    notes: dict[str, int] = field(default_factory=dict)

    def saw(self, outcome: Outcome) -> None:
        self.exits[outcome.code] = self.exits.get(outcome.code, 0) + 1

    def note(self, name: str, count: int = 1) -> None:
        self.notes[name] = self.notes.get(name, 0) + count

    def figures(self, **extra: Any) -> dict[str, Any]:
        exits = ", ".join(f"{code}: {n}" for code, n in sorted(self.exits.items()))
        return {
            "target": self.target,
            "cases": self.cases,
            "internal_errors": 0,
            "tracebacks": 0,
            "exit codes": "{" + exits + "}",
            "memories stored": self.stored,
            **self.notes,
            **extra,
        }
