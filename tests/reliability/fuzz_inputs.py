"""What the fuzz suite feeds ``kioku``: import files, Claude Code transcripts, hook payloads
and config files, built from the strategies of fuzz_strategies.py.

Most of what is drawn starts valid and is then broken here and there (a field dropped or
given another value or type), so the fuzzing reaches the writes and not only the first check.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from tests.reliability.fuzz_strategies import (
    WORDS,
    Raw,
    encode_line,
    json_values,
    maybe,
    nasty_text,
    timestamps,
    words,
)

__all__ = [
    "command_lines",
    "hook_stdin",
    "import_lines",
    "surely_invalid",
    "transcript_lines",
]

# -- Claude Code transcripts -----------------------------------------------------------------

_UUIDS = ["u1", "u2", "u3", "a1", "a2", "", "\x00", "x" * 1200]
_SESSIONS = ["s-fuzz", "s-fuzz-2", "", " ", "\u200b", "s\x01", "\ud800", "y" * 1200]


_block_text = st.one_of(nasty_text, st.sampled_from(WORDS))
_blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": maybe(_block_text)}),
    st.fixed_dictionaries({"type": st.just("tool_use"), "name": maybe(nasty_text)}),
    st.fixed_dictionaries({"type": st.just("tool_result"), "content": json_values}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": nasty_text}),
    st.fixed_dictionaries({"type": st.just("image")}),
    st.dictionaries(nasty_text, json_values, max_size=3),
    json_values,
)
_content = st.one_of(_block_text, st.lists(_blocks, max_size=4), json_values)
_message = st.fixed_dictionaries(
    {"role": maybe(st.sampled_from(["user", "assistant"]))},
    optional={"content": _content, "model": st.sampled_from(["<synthetic>", "claude"])},
)
_flags = st.fixed_dictionaries(
    {},
    optional={
        "isSidechain": maybe(st.booleans()),
        "isMeta": maybe(st.booleans()),
        "isCompactSummary": maybe(st.booleans()),
        "isApiErrorMessage": st.booleans(),
        "subtype": st.sampled_from(["compact_boundary", "other"]),
        "logicalParentUuid": st.sampled_from(_UUIDS),
    },
)


@st.composite
def _entry(draw: st.DrawFn, number: int, session: str) -> dict[str, Any]:
    """A well-formed entry of a chain now and then broken: a field dropped, given another
    value or another type, a uuid shared with another entry, a flag set."""
    kind = "user" if number % 2 == 0 else "assistant"
    choice = draw(st.integers(0, 4))
    if choice < 3:
        content: Any = draw(words) + draw(st.sampled_from(["", " ", "\n"])) + draw(_block_text)
    elif choice == 3:
        content = [{"type": "text", "text": draw(words)}, *draw(st.lists(_blocks, max_size=3))]
    else:
        content = draw(st.lists(_blocks, max_size=3))
    entry: dict[str, Any] = {
        "type": kind,
        "message": {"role": kind, "content": content},
        "uuid": f"e{number}",
        "parentUuid": f"e{number - 1}" if number else None,
        "sessionId": session,
        "timestamp": draw(timestamps),
    }
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from([*entry, "message.content", "message.model"]))
        value = draw(
            st.one_of(
                json_values,
                st.sampled_from(["user", "assistant", "summary", "system"]),
                st.sampled_from(_UUIDS),
                st.sampled_from(_SESSIONS),
                _message,
            )
        )
        if key.startswith("message."):
            message = entry.get("message")
            if isinstance(message, dict):
                message[key.removeprefix("message.")] = value
        elif draw(st.booleans()):
            entry[key] = value
        else:
            entry.pop(key, None)
    if draw(st.integers(0, 4)) == 0:
        entry.update(draw(_flags))
    return entry


@st.composite
def transcript_lines(draw: st.DrawFn) -> list[bytes]:
    """The lines of a transcript: entries (JSON of either encoding), garbage, blank lines."""
    session = draw(st.uuids().map(str) | st.uuids().map(str) | st.sampled_from(_SESSIONS))
    lines: list[bytes] = []
    for number in range(draw(st.integers(0, 10))):
        kind = draw(st.integers(0, 13))
        if kind < 11:
            lines.append(encode_line(draw(_entry(number, session)), draw(st.booleans())))
        elif kind == 11:
            lines.append(draw(st.binary(max_size=20)).replace(b"\n", b""))
        elif kind == 12:
            lines.append(encode_line(draw(json_values), draw(st.booleans())))
        else:
            lines.append(draw(st.sampled_from([b"", b"  ", b"\r", b"\xef\xbb\xbf", b"[" * 3000])))
    return lines


# -- kioku import ----------------------------------------------------------------------------

_ids = st.one_of(nasty_text, st.sampled_from(["line-1", "line-2", "s1", 7, -1, True, 1.5]))
_turn_text = st.one_of(nasty_text, st.sampled_from(WORDS), st.just("x" * 1_048_577))
_recent = st.timedeltas(min_value=timedelta(days=-400), max_value=timedelta(0)).map(
    lambda d: (datetime.now(UTC) + d).isoformat(timespec="seconds")
)
_MUTATIONS = {
    "user": _turn_text,
    "assistant": _turn_text,
    "at": timestamps,
    "session": _ids,
    "source_id": _ids,
    "extra": json_values,
}


@st.composite
def _turn(draw: st.DrawFn) -> dict[str, Any]:
    """A valid turn object, then 0 to 2 of its fields dropped or given a fuzzed value."""
    record: dict[str, Any] = {"user": draw(words)}
    if draw(st.booleans()):
        record["assistant"] = draw(words)
    if draw(st.booleans()):
        record["at"] = draw(_recent)
    if draw(st.booleans()):
        record["session"] = draw(st.sampled_from(["s1", "s2", "会議"]))
    if draw(st.booleans()):
        record["source_id"] = f"src-{draw(st.integers(0, 40))}"
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(sorted(_MUTATIONS)))
        if draw(st.integers(0, 3)) == 0:
            record.pop(key, None)
        else:
            record[key] = draw(maybe(_MUTATIONS[key]))
    return record


def _id_ok(value: object) -> bool:
    """Whether an id of this type may be valid: a string, an integer, or nothing. A number
    written as raw JSON text is what reading it gives: ``-0`` is the integer 0 (read, it may be
    valid), ``1e999`` a float (never), and digits past Python's limit no number at all."""
    if isinstance(value, Raw):
        try:
            value = json.loads(value.text)
        except ValueError:
            return False
    return value is None or isinstance(value, str) or (type(value) is int)


def surely_invalid(record: dict[str, Any]) -> bool:
    """Whether a turn object breaks a type rule of ``kioku import`` (other rules, such as the
    range of ``at``, are left to kioku)."""
    return (
        not isinstance(record.get("user"), str)
        or not isinstance(record.get("assistant", ""), str | None)
        or not isinstance(record.get("at"), str | None)
        or not _id_ok(record.get("session"))
        or not _id_ok(record.get("source_id"))
    )


@st.composite
def import_lines(draw: st.DrawFn) -> tuple[list[bytes], set[int]]:
    """The lines of an import file and the (1-based) numbers of those surely invalid."""
    lines: list[bytes] = []
    invalid: set[int] = set()
    for number in range(1, draw(st.integers(0, 10)) + 1):
        kind = draw(st.integers(0, 11))
        if kind < 7:
            record = draw(_turn())
            line = encode_line(record, draw(st.booleans()))
            bad = surely_invalid(record)
        elif kind == 7:
            line, bad = encode_line(draw(json_values), draw(st.booleans())), False
            if not line.lstrip().startswith(b"{") and line.strip():
                bad = True  # not an object (or not JSON at all)
        elif kind == 8:
            line = b"\xff" + draw(st.binary(max_size=10)).replace(b"\n", b"")
            bad = True  # not UTF-8
        elif kind == 9:
            line, bad = b"{" + draw(st.binary(max_size=10)).replace(b"\n", b""), True
        elif kind == 10:
            line, bad = draw(st.sampled_from([b"", b"   ", b"\t", b"\r"])), False
        else:
            line, bad = draw(st.sampled_from([b"\xef\xbb\xbf{}", b"[" * 3000, b"null"])), True
        lines.append(line)
        if bad:
            invalid.add(number)
    return lines, invalid


# -- hook payloads ---------------------------------------------------------------------------

_EVENT_NAMES = ["UserPromptSubmit", "SessionStart", "SessionEnd", "PreCompact", "", "Stop"]
_FIXED_STDIN = [
    b"",
    b" \n",
    b"{",
    b'{"prompt": "budget"',
    b'{"prompt": "budget \xff\xfe"}',
    b"\xef\xbb\xbf{}",
    b"[" * 5000,
    b"null",
    b'{"prompt": "budget"}{"prompt": "deploy"}',
    b'{"prompt": "' + "予算".encode("utf-16") + b'"}',
]


@st.composite
def hook_stdin(draw: st.DrawFn, paths: list[str]) -> bytes:
    """What a hook may find on stdin: Claude Code's object (the transcript path the first of
    ``paths`` or another) with 0 to 3 fields dropped or fuzzed, other JSON, bytes, nothing."""
    kind = draw(st.integers(0, 11))
    if kind < 8:
        payload: dict[str, Any] = {
            "session_id": draw(st.uuids().map(str)),
            "transcript_path": paths[0],
            "cwd": "/home/someone/project",
            "hook_event_name": draw(st.sampled_from(_EVENT_NAMES)),
            "prompt": draw(words) + draw(st.sampled_from(["", " ", "?", "\n"])) + draw(nasty_text),
        }
        fuzzed = {
            "session_id": st.sampled_from(_SESSIONS),
            "transcript_path": st.sampled_from(paths) | nasty_text,
            "cwd": nasty_text,
            "hook_event_name": nasty_text,
            "prompt": nasty_text,
            "source": st.sampled_from(["startup", "resume", "clear", "compact"]),
            "reason": nasty_text,
            "trigger": st.sampled_from(["manual", "auto"]),
        }
        for _ in range(draw(st.integers(0, 3))):
            key = draw(st.sampled_from(sorted(fuzzed)))
            if draw(st.integers(0, 3)) == 0:
                payload.pop(key, None)
            else:
                payload[key] = draw(maybe(fuzzed[key]))
        return encode_line(payload, draw(st.booleans()))
    if kind == 8:
        return encode_line(draw(json_values), draw(st.booleans()))
    if kind == 9:
        return draw(st.binary(max_size=40))
    return draw(st.sampled_from(_FIXED_STDIN))


# -- option values ---------------------------------------------------------------------------

_NUMBERS = st.sampled_from(
    ["0", "-1", "1", "5", "100", "101", "1e3", "0x10", "9" * 30, "", " 3", "NaN", "inf", "1_0", "٣"]
)
_values = st.one_of(nasty_text, _NUMBERS, timestamps, st.sampled_from(WORDS))


@st.composite
def _options(draw: st.DrawFn, spec: dict[str, st.SearchStrategy[Any]]) -> list[str]:
    argv: list[str] = []
    for name, values in spec.items():
        if draw(st.integers(0, 2)):
            argv += [name] if values is _FLAG else [name, draw(values)]
    return argv


_FLAG: st.SearchStrategy[Any] = st.just("")
_COMMANDS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "list": {"--limit": _NUMBERS, "--offset": _NUMBERS, "--level": _NUMBERS},
    "remember": {"--assistant": _values, "--at": timestamps, "--session": _values},
    "add": {
        "--valence": st.sampled_from(["positive", "negative", "neutral"]) | _values,
        "--arousal": _NUMBERS,
        "--tags": st.sampled_from(["joy", "anger, fear", "JOY,,", "、"]) | _values,
        "--keywords": _values,
        "--at": timestamps,
        "--session": _values,
        "--protected": _FLAG,
    },
    "recall": {"--top-k": _NUMBERS, "--session": _values, "--explain": _FLAG, "--no-mark": _FLAG},
    "batch": {"--now": timestamps, "--dry-run": _FLAG},
    "simulate": {
        "--per-day": st.sampled_from(["0", "1", "3", "-5", "100001", "x"]),
        "--seed": _NUMBERS | st.integers().map(str),
        "--every": _NUMBERS,
        "--from-store": _FLAG,
    },
    "stats": {"--cost": _FLAG, "--since": timestamps},
    "log": {"--since": timestamps, "--limit": _NUMBERS, "--id": _values},
}


@st.composite
def command_lines(draw: st.DrawFn, ids: list[str]) -> tuple[list[str], str | None]:
    """A ``kioku`` command line with fuzzed values (``ids`` are memories that exist), and the
    id it names for show, forget or protect."""
    argv: list[str] = []
    for option in ("--user", "--agent"):
        if draw(st.integers(0, 4)) == 0:
            argv += [option, draw(st.sampled_from(["default", "someone"]) | _values)]
    name = draw(st.sampled_from([*sorted(_COMMANDS), "show", "forget", "protect"]))
    argv.append(name)
    named: str | None = None
    if name in ("show", "forget", "protect"):
        named = draw(st.sampled_from(ids) | _values | st.just("mem_20250101_000000_deadbeef"))
        argv.append(named)
        if name == "forget" and draw(st.booleans()):
            argv.append("--force")
    elif name == "remember":
        argv += ["--user", draw(words | _values)]
    elif name == "add":
        argv += ["--trigger", draw(words | _values), "--content", draw(words | _values)]
        argv += ["--intensity", draw(_NUMBERS), "--category", draw(_values | st.just("work"))]
    elif name == "recall":
        argv.append(draw(words | _values))
    elif name == "simulate":  # the default is 365 days: never left out
        argv += ["--days", draw(st.sampled_from(["1", "2", "0", "-1", "x", "3651", ""]))]
    elif name == "batch" and draw(st.booleans()):
        argv += ["--force", "--dry-run"]  # --force alone could run thousands of days
    elif name == "list" and draw(st.booleans()):
        argv += ["--category", draw(_values | st.just("work"))]
    argv += draw(_options(_COMMANDS.get(name, {})))
    if name not in ("simulate", "show", "forget", "protect") and draw(st.booleans()):
        argv.append("--json")
    return argv, named
