"""The text side of the memory tool: numbered views, edits of a file's text, and how the
text of a procedure or a profile file is read into kioku's fields.

Plain functions on strings; each refusal is a :class:`MemoryToolError` that says what to
send instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from kioku.core.profiles import FACT_KEYS, normalise_topic
from kioku.integrations.anthropic_paths import MemoryToolError

__all__ = [
    "MAX_STEPS",
    "ProfileText",
    "inserted",
    "numbered",
    "parse_profile",
    "procedure_parts",
    "replaced",
    "size",
]

MAX_STEPS: Final = 100
_STEP: Final = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*+])\s+(\S.*?)\s*$")
_HEADING: Final = re.compile(r"^\s*#+\s*")
_WIDTH: Final = 6


def size(count: int) -> str:
    """A size in bytes as a listing shows it: 812B, 4.1K, 2.0M."""
    if count < 1024:
        return f"{count}B"
    if count < 1024 * 1024:
        return f"{count / 1024:.1f}K"
    return f"{count / (1024 * 1024):.1f}M"


def _line(number: int, text: str) -> str:
    return f"{number:>{_WIDTH}}\t{text}"


def numbered(text: str, view_range: object = None) -> list[str]:
    """The lines of ``text`` (split at line feeds, so a final line feed shows as an empty
    last line), numbered from 1; ``view_range`` ``[first, last]`` shows only those, ``-1``
    as ``last`` meaning the end."""
    lines = text.split("\n")
    first, last = 1, len(lines)
    if view_range is not None:
        if (
            not isinstance(view_range, list | tuple)
            or len(view_range) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
        ):
            raise MemoryToolError(
                f"view_range must be two line numbers [first, last], got {view_range!r}"
            )
        first, last = view_range
        if last == -1:
            last = len(lines)
        if not 1 <= first <= len(lines) or not first <= last <= len(lines):
            raise MemoryToolError(
                f"view_range {list(view_range)!r} is outside the file, which has {len(lines)} "
                f"lines: give [first, last] with 1 <= first <= last <= {len(lines)} "
                "(last -1: to the end)"
            )
    return [_line(n, lines[n - 1]) for n in range(first, last + 1)]


def replaced(text: str, old: object, new: object, where: str) -> tuple[str, list[str]]:
    """``text`` with its one occurrence of ``old`` replaced by ``new``, and the numbered
    lines around the change; refused when ``old`` is absent or occurs more than once."""
    if not isinstance(old, str) or not isinstance(new, str):
        raise MemoryToolError("old_str and new_str must both be text")
    if not old:
        raise MemoryToolError("old_str is empty: give the exact text to replace")
    count = text.count(old)
    if count == 0:
        raise MemoryToolError(
            f"nothing was replaced: old_str does not occur in {where} exactly as given "
            "(view the file and copy the text, spaces and line breaks included)"
        )
    if count > 1:
        rows: list[int] = []
        start = 0
        while (pos := text.find(old, start)) != -1:
            rows.append(text.count("\n", 0, pos) + 1)
            start = pos + 1
        raise MemoryToolError(
            f"nothing was replaced: old_str occurs {count} times in {where} (lines "
            f"{', '.join(map(str, rows))}); include more of the text around it so that it "
            "occurs once"
        )
    pos = text.find(old)
    changed = text[:pos] + new + text[pos + len(old) :]
    row = text.count("\n", 0, pos)
    lines = changed.split("\n")
    low, high = max(0, row - 2), min(len(lines), row + new.count("\n") + 3)
    return changed, [_line(n + 1, lines[n]) for n in range(low, high)]


def inserted(text: str, line: object, new: object) -> str:
    """``text`` with ``new`` inserted after line ``line`` (0: at the top)."""
    if not isinstance(new, str):
        raise MemoryToolError("insert_text must be text")
    lines = text.split("\n")
    ends_open = text.endswith("\n")
    if ends_open:
        lines.pop()
    if isinstance(line, bool) or not isinstance(line, int) or not 0 <= line <= len(lines):
        raise MemoryToolError(
            f"insert_line {line!r} is outside the file: give a number from 0 (the top) to "
            f"{len(lines)} (after the last line)"
        )
    body = new[:-1] if new.endswith("\n") else new
    lines[line:line] = body.split("\n")
    return "\n".join(lines) + ("\n" if ends_open else "")


def procedure_parts(text: str, name: str) -> tuple[str, list[str]]:
    """What a procedure file says it is for (its first line that is not a step, without a
    heading's ``#``; else its name) and its steps (numbered or bulleted lines, in order)."""
    steps: list[str] = []
    description = ""
    for line in text.split("\n"):
        step = _STEP.match(line)
        if step:
            steps.append(" ".join(step.group(1).split()))
        elif not description and line.strip():
            description = " ".join(_HEADING.sub("", line).split())
    if len(steps) > MAX_STEPS:
        raise MemoryToolError(
            f"a procedure has at most {MAX_STEPS} steps (numbered or bulleted lines), this one "
            f"{len(steps)}; split it into several procedures"
        )
    return description or name, steps


@dataclass(frozen=True, slots=True)
class ProfileText:
    """What a profile file says: personal facts, and what the person likes and dislikes."""

    facts: dict[str, str]
    likes: list[str]
    dislikes: list[str]


_PROFILE_FORMAT: Final = (
    "a file under /memories/users holds one line per fact or preference: `key: value` "
    f"with key one of {', '.join(sorted(FACT_KEYS))}, or `likes: a, b` / `dislikes: c`"
)


def parse_profile(text: str, where: str) -> ProfileText:
    """The facts and preferences of a profile file; refused, with the format, when a line
    is not one of them or says something twice."""
    facts: dict[str, str] = {}
    likes: list[str] = []
    dislikes: list[str] = []
    topics: set[str] = set()
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        key, colon, value = line.partition(":")
        key = key.strip().lower()
        if (
            not colon
            or not value.strip()
            or (key not in FACT_KEYS and key not in ("likes", "dislikes"))
        ):
            raise MemoryToolError(
                f"line {number} of {where} is not a profile line: {_PROFILE_FORMAT}"
            )
        if key in FACT_KEYS:
            if key in facts:
                raise MemoryToolError(f"line {number} of {where} gives {key} a second time")
            facts[key] = value.strip()
            continue
        for item in value.split(","):
            topic = normalise_topic(item)
            if not topic:
                raise MemoryToolError(
                    f"line {number} of {where} has an empty item: {_PROFILE_FORMAT}"
                )
            if topic in topics:
                raise MemoryToolError(
                    f"line {number} of {where} names {item.strip()!r} a second time"
                )
            topics.add(topic)
            (likes if key == "likes" else dislikes).append(item.strip())
    return ProfileText(facts, likes, dislikes)
