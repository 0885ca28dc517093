"""Claude Code session transcripts (JSONL) turned into memories, one per conversation turn.

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
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kioku.core.timefmt import parse_ts
from kioku.core.validate import (
    EARLIEST,
    FUTURE_TOLERANCE,
    LATEST,
    MAX_ID_CHARS,
    MAX_TEXT_CHARS,
    check_provenance_id,
    is_blank,
)
from kioku.errors import ValidationError

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = [
    "IngestResult",
    "ParsedTranscript",
    "TranscriptTurn",
    "default_claude_projects",
    "find_claude_transcripts",
    "ingest_transcript",
    "is_command",
    "parse_transcript",
    "source_id",
]

#: Turns stored per transaction when the analyzer is the offline one (fast, no network).
OFFLINE_BATCH = 50

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


@dataclass(frozen=True, slots=True)
class IngestResult:
    """The outcome of :func:`ingest_transcript` for one transcript."""

    path: Path
    session_id: str
    #: Turns in the transcript (after exclusions).
    turns: int
    #: Turns stored now.
    added: int
    #: Turns stored by an earlier ingestion (matched by source id).
    already: int
    skipped_lines: int
    #: Ids of the memories stored now.
    memory_ids: tuple[str, ...] = field(default=())


# -- parsing -----------------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    """One usable line of a transcript."""

    line: int
    kind: str
    data: Mapping[str, Any]

    @property
    def uuid(self) -> str | None:
        value = self.data.get("uuid")
        return value if isinstance(value, str) and value else None

    def parent(self) -> str | None:
        for key in ("parentUuid", "logicalParentUuid"):
            value = self.data.get(key)
            if isinstance(value, str) and value:
                return value
        return None

    def flag(self, name: str) -> bool:
        return self.data.get(name) is True

    @property
    def content(self) -> list[Mapping[str, Any]]:
        """The message content as blocks (a string becomes one text block)."""
        message = self.data.get("message")
        raw = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(raw, str):
            return [{"type": "text", "text": raw}]
        if isinstance(raw, list):
            return [b for b in raw if isinstance(b, Mapping)]
        return []


def _shape_ok(record: Any) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        return False
    if record["type"] not in ("user", "assistant"):
        return True
    message = record.get("message")
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    return isinstance(content, str) or (
        isinstance(content, list) and all(isinstance(b, dict) for b in content)
    )


def _json_int(text: str) -> int | float:
    """A JSON integer as Python reads it; one too long to read as an int (past 4,300 digits)
    as a float, so a number in a field kioku never looks at cannot spoil the whole object."""
    try:
        return int(text)
    except ValueError:
        return float(text)


def _read_entries(path: Path) -> tuple[list[_Entry], int]:
    entries: list[_Entry] = []
    skipped = 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line, parse_int=_json_int)
            except (ValueError, RecursionError):  # RecursionError: nested too deeply
                skipped += 1
                continue
            if not _shape_ok(record):
                skipped += 1
                continue
            entries.append(_Entry(number, record["type"], record))
    return entries, skipped


def _main_branch(entries: Sequence[_Entry]) -> list[_Entry]:
    """The entries without those on branches abandoned when a prompt was edited.

    The main chain runs from the last entry with a uuid back through ``parentUuid`` (or
    ``logicalParentUuid`` across a compaction). An entry whose ancestors meet that chain
    off it is on an abandoned branch; entries without uuids, or whose chain never meets the
    main one, are kept.
    """
    by_uuid: dict[str, _Entry] = {}
    for entry in entries:
        uuid = entry.uuid
        if uuid is not None and uuid not in by_uuid:
            by_uuid[uuid] = entry
    if not by_uuid:
        return list(entries)
    leaf = next(e for e in reversed(entries) if e.uuid is not None)
    main: set[str] = set()
    node: _Entry | None = leaf
    while node is not None and node.uuid is not None and node.uuid not in main:
        main.add(node.uuid)
        parent = node.parent()
        node = by_uuid.get(parent) if parent else None

    abandoned: dict[str, bool] = dict.fromkeys(main, False)
    for uuid in by_uuid:
        path: list[str] = []
        current: str | None = uuid
        verdict = False
        while current is not None:
            if current in abandoned:
                verdict = abandoned[current] or current in main
                break
            if current in path or current not in by_uuid:
                break  # a cycle or a missing parent: a separate chain, kept
            path.append(current)
            current = by_uuid[current].parent()
        for step in path:
            abandoned[step] = verdict
    return [e for e in entries if e.uuid is None or not abandoned.get(e.uuid, False)]


def _usable_id(value: object) -> bool:
    """Whether kioku can store ``value`` as a session or source id."""
    try:
        check_provenance_id("id", value)
    except ValidationError:
        return False
    return True


def _timestamp(entry: _Entry, tz: tzinfo | None, now: datetime | None) -> datetime | None:
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

    entry: _Entry
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
    entries, skipped = _read_entries(path)
    session_id = next(
        (e.data["sessionId"] for e in entries if _usable_id(e.data.get("sessionId"))),
        None,
    ) or _file_session(path)
    turns: list[TranscriptTurn] = []
    commands = 0
    current: _Open | None = None
    in_command = False
    seen: set[str] = set()
    for entry in _main_branch([e for e in entries if not e.flag("isSidechain")]):
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


# -- ingestion ---------------------------------------------------------------------------


def source_id(session_id: str, turn: TranscriptTurn) -> str:
    """The provenance id a turn is stored under: ``{session id}:{turn id}``, or, when that is
    longer than an id may be, the session id cut short and a digest of the turn id."""
    whole = f"{session_id}:{turn.turn_id}"
    if len(whole) <= MAX_ID_CHARS:
        return whole
    digest = hashlib.sha256(turn.turn_id.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{session_id[: MAX_ID_CHARS - len(digest) - 1]}:{digest}"


def ingest_transcript(
    kioku: Kioku,
    path: Path | str,
    *,
    session_id: str | None = None,
    batch_size: int | None = None,
    known: set[str] | None = None,
) -> IngestResult:
    """Remember each turn of a transcript not stored yet, as one memory per turn.

    A turn's memory is created at the user's timestamp and carries the source id
    ``{session id}:{turn id}``, so ingesting the same transcript again, or after it grew,
    stores only the new turns.

    With the offline analyzer turns are stored ``batch_size`` (default 50) per transaction,
    which also covers the check for stored turns, so two processes ingesting the same
    transcript never store a turn twice. With an LLM analyzer the default is one turn at a
    time, each its own transaction, so the store is not locked while a provider answers.
    Either way a crash loses at most the batch in progress and never half-writes a turn.

    ``known`` is a snapshot of stored source ids (:meth:`Kioku.known_source_ids`) to share
    across many transcripts: turns in it are not looked at again, and the ids stored now are
    added to it. Raises OSError when the file cannot be read, ValidationError when
    ``session_id`` is not an id kioku can store.
    """
    parsed = parse_transcript(path, tz=kioku.clock.tz, now=kioku.clock.now())
    session = check_provenance_id("session_id", session_id) if session_id else parsed.session_id
    offline = kioku.config.llm.provider == "offline"
    if batch_size is None:
        batch_size = OFFLINE_BATCH if offline else 1
    batch_size = max(1, batch_size)
    hold = offline or batch_size > 1
    turns = parsed.turns
    snapshot = kioku.known_source_ids() if known is None else known
    pending = [t for t in turns if source_id(session, t) not in snapshot]
    added: list[str] = []
    already = len(turns) - len(pending)
    for start in range(0, len(pending), batch_size):
        # Inside the transaction another process ingesting the same transcript waits for
        # the write lock and then sees these turns as stored.
        lock: AbstractContextManager[None] = kioku.store.atomic() if hold else nullcontext()
        with lock:
            stored = kioku.known_source_ids()
            for turn in pending[start : start + batch_size]:
                sid = source_id(session, turn)
                if sid in stored:
                    already += 1
                    continue
                remembered = kioku.remember_turn(
                    turn.user,
                    turn.assistant,
                    at=turn.at,
                    session_id=session,
                    source_ids=[sid],
                    source_timestamps=[turn.at] if turn.at is not None else [],
                )
                stored.add(sid)
                if remembered.known:  # stored meanwhile, or erased meanwhile: not added
                    already += 1
                    continue
                added.append(remembered.memory.id)
        snapshot.update(stored)
    return IngestResult(
        path=parsed.path,
        session_id=session,
        turns=len(turns),
        added=len(added),
        already=already,
        skipped_lines=parsed.skipped_lines,
        memory_ids=tuple(added),
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
