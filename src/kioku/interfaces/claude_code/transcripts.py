"""Claude Code session transcripts (JSONL) read into conversation turns, which
:mod:`.ingest` stores as memories, one per turn.

A transcript line is one JSON object with a ``type`` ("user", "assistant", "summary",
"system", ...), a ``message`` of ``{role, content}`` (content a string or a list of
``text``/``tool_use``/``tool_result``/``thinking``/``image`` blocks), ``uuid``,
``parentUuid``, ``timestamp``, ``sessionId`` and the flags ``isSidechain``, ``isMeta`` and
``isCompactSummary``. The parser is tolerant: a line that is not such an object is skipped
and counted, never fatal, and what a turn takes from the file is made storable: a user input
that shows nothing counts as empty, a timestamp outside the storable range (1970 to a day
after now) as missing, text past MAX_TEXT_CHARS is cut, and an id kioku cannot store (blank,
too long, with control characters) is replaced by one derived from where the turn is.

A turn is one user input plus the assistant's reply to it (the spec's 生成単位). Slash
commands and the replies to them are not turns (the spec's 除外ルール), nor are sub-agent
(sidechain) and meta entries, tool results, compact summaries or thinking. When prompts
were edited the transcript branches; the branch that leads to the last entry is used.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

from kioku.core.timefmt import parse_ts
from kioku.core.validate import (
    EARLIEST,
    FUTURE_TOLERANCE,
    LATEST,
    MAX_TEXT_CHARS,
    check_provenance_id,
    is_blank,
)
from kioku.errors import ValidationError
from kioku.interfaces.claude_code.transcript_lines import Entry, main_branch, read_entries

__all__ = [
    "ParsedTranscript",
    "TranscriptTurn",
    "default_claude_projects",
    "find_claude_transcripts",
    "is_command",
    "parse_transcript",
]

#: Tags Claude Code wraps around slash commands, their output and ``!`` shell commands.
_COMMAND_TAGS = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_INTERRUPTED = re.compile(r"^\[Request interrupted by user[^\]]*\]$")


def is_command(text: str) -> bool:
    """Whether a user input is a slash command (or Claude Code's record of one)."""
    stripped = text.strip()
    return stripped.startswith("/") or stripped.startswith(_COMMAND_TAGS)


@dataclass(frozen=True, slots=True)
class TranscriptTurn:
    """One user input and the assistant's reply to it."""

    #: The user entry's uuid, or ``line N`` when it has none (or one kioku cannot store);
    #: stable across re-reads.
    turn_id: str
    user: str
    assistant: str
    #: When the user spoke (the user entry's timestamp); None when missing, unreadable or
    #: outside the storable range.
    at: datetime | None
    #: Line number (1-based) of the user entry.
    line: int


@dataclass(frozen=True, slots=True)
class ParsedTranscript:
    """What a transcript holds: its turns in order, and how many lines were unreadable."""

    path: Path
    #: The ``sessionId`` of the entries (the first one seen), else the file name's stem.
    session_id: str
    turns: tuple[TranscriptTurn, ...]
    #: Lines that are not a JSON object of the expected shape.
    skipped_lines: int
    #: User inputs left out as slash commands.
    commands: int = 0


# -- parsing -----------------------------------------------------------------------------


def _usable_id(value: object) -> bool:
    """Whether kioku can store ``value`` as a session or source id."""
    try:
        check_provenance_id("id", value)
    except ValidationError:
        return False
    return True


def _timestamp(entry: Entry, tz: tzinfo | None, now: datetime | None) -> datetime | None:
    """The entry's time; None when it is missing, unreadable, or not one a memory can have
    (before 1970, past 8999, more than a day after ``now``)."""
    value = entry.data.get("timestamp")
    if not isinstance(value, str):
        return None
    try:
        moment = parse_ts(value, tz or datetime.now().astimezone().tzinfo or UTC)
        latest = LATEST if now is None else min(LATEST, now + FUTURE_TOLERANCE)
        if not EARLIEST <= moment <= latest:
            return None
        return moment.astimezone(tz) if tz is not None else moment
    except (ValueError, OverflowError):  # OverflowError: year 1 or 9999 moved by its offset
        return None


def _storable(text: str) -> str:
    """``text`` cut to the most a side of a turn may hold."""
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 1] + "…"


def _user_text(blocks: Sequence[Mapping[str, Any]]) -> str | None:
    """The user's words; None when the entry is only tool results (the assistant's work)."""
    parts: list[str] = []
    has_other = False
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
            has_other = True
        elif kind == "image":
            parts.append("[image]")
            has_other = True
        elif kind != "tool_result":
            has_other = True
    if not has_other:
        return None
    text = _REMINDER.sub("", "\n\n".join(parts)).strip()
    return "" if _INTERRUPTED.match(text) else text


def _assistant_parts(blocks: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, str]]:
    """``("text", words)`` and ``("tool", marker)`` pieces of an assistant entry."""
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            text = block["text"].strip()
            if text:
                yield "text", text
        elif kind == "tool_use":
            name = block.get("name")
            yield "tool", f"[tool: {name if isinstance(name, str) and name else '?'}]"


@dataclass(slots=True)
class _Open:
    """A turn being assembled from transcript entries."""

    entry: Entry
    user: str
    pieces: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)

    def add(self, kind: str, text: str) -> None:
        if kind == "tool":
            self.tools.append(text)
            return
        self._flush_tools()
        self.pieces.append(text)

    def _flush_tools(self) -> None:
        if self.tools:
            self.pieces.append(" ".join(self.tools))
            self.tools = []

    def close(self, tz: tzinfo | None, now: datetime | None) -> TranscriptTurn:
        self._flush_tools()
        uuid = self.entry.uuid
        return TranscriptTurn(
            turn_id=uuid if uuid is not None and _usable_id(uuid) else f"line {self.entry.line}",
            user=_storable(self.user),
            assistant=_storable("\n\n".join(self.pieces)),
            at=_timestamp(self.entry, tz, now),
            line=self.entry.line,
        )


def _file_session(path: Path) -> str:
    """The session id of a transcript without a usable ``sessionId``: its file name's stem,
    or (a stem kioku cannot store) one derived from the whole path."""
    if _usable_id(path.stem):
        return path.stem
    digest = hashlib.sha256(str(path).encode("utf-8", "surrogatepass")).hexdigest()
    return f"transcript-{digest[:16]}"


def parse_transcript(
    path: Path | str, *, tz: tzinfo | None = None, now: datetime | None = None
) -> ParsedTranscript:
    """Read a Claude Code session transcript into its conversation turns.

    ``tz`` converts the timestamps (default: kept as written, a time without offset read
    as local time); with ``now`` a timestamp more than a day after it counts as missing.
    Raises OSError when the file cannot be read; bad lines are skipped and counted in
    ``skipped_lines``.
    """
    path = Path(path)
    entries, skipped = read_entries(path)
    session_id = next(
        (e.data["sessionId"] for e in entries if _usable_id(e.data.get("sessionId"))),
        None,
    ) or _file_session(path)
    turns: list[TranscriptTurn] = []
    commands = 0
    current: _Open | None = None
    in_command = False
    seen: set[str] = set()
    for entry in main_branch([e for e in entries if not e.flag("isSidechain")]):
        uuid = entry.uuid
        if uuid is not None:
            if uuid in seen:
                continue  # the same entry written twice
            seen.add(uuid)
        if entry.flag("isCompactSummary") or (
            entry.kind == "system" and entry.data.get("subtype") == "compact_boundary"
        ):
            if current is not None:
                turns.append(current.close(tz, now))
            current, in_command = None, False
            continue
        if entry.flag("isMeta") or entry.kind not in ("user", "assistant"):
            continue
        if entry.kind == "user":
            text = _user_text(entry.content)
            if not text or is_blank(text):
                continue  # tool results, an interruption notice or nothing to show
            if current is not None:
                turns.append(current.close(tz, now))
                current = None
            if is_command(text):
                # A command's output and the replies to it are not conversation either.
                if not text.lstrip().startswith(("<local-command", "<bash-std")):
                    commands += 1
                in_command = True
                continue
            in_command = False
            current = _Open(entry, text)
            continue
        if current is None or in_command or entry.flag("isApiErrorMessage"):
            continue
        message = entry.data.get("message")
        if isinstance(message, Mapping) and message.get("model") == "<synthetic>":
            continue
        for kind, text in _assistant_parts(entry.content):
            current.add(kind, text)
    if current is not None:
        turns.append(current.close(tz, now))
    return ParsedTranscript(
        path=path,
        session_id=session_id,
        turns=tuple(turns),
        skipped_lines=skipped,
        commands=commands,
    )


# -- finding transcripts -----------------------------------------------------------------


def default_claude_projects() -> Path:
    """Where Claude Code keeps its transcripts: ``~/.claude/projects``."""
    return Path.home() / ".claude" / "projects"


def find_claude_transcripts(root: Path | None = None) -> list[Path]:
    """The session transcripts ``ROOT/*/*.jsonl`` (one folder per project), sorted.

    ``root`` defaults to ``~/.claude/projects``; a missing folder has none.
    """
    base = default_claude_projects() if root is None else Path(root).expanduser()
    if not base.is_dir():
        return []
    return sorted(p for p in base.glob("*/*.jsonl") if p.is_file())
