"""``kioku import``: conversation turns from a JSON Lines file, checked whole before any write.

One line is one turn: ``{"user": ..., "assistant": ..., "at": ISO, "session": ID,
"source_id": ID}``; only ``user`` is required, ``null`` counts as absent and other keys are
ignored. :func:`read_import` reads every line and says what is wrong with each bad one
(its number and the field); :func:`import_turns` stores the good ones. A line whose
``source_id`` is already stored is skipped, so an import can be repeated or resumed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any, Final

from kioku.core.timefmt import parse_ts
from kioku.core.validate import (
    check_created,
    check_provenance_id,
    check_turn,
    check_turn_text,
)
from kioku.errors import ValidationError
from kioku.service.remember.batch import store_turns
from kioku.service.remember.known import known_source_ids
from kioku.service.remember.worker_process import prepare_imported
from kioku.service.remember.workers import (
    TurnPreparer,
    Workers,
    from_configuration,
    preparing_processes,
)

if TYPE_CHECKING:
    from kioku.service.engine import Engine
    from kioku.service.remember.storing import PreparedTurn

__all__ = [
    "ImportPlan",
    "ImportResult",
    "ImportTurn",
    "InvalidLine",
    "import_turns",
    "parse_line",
    "read_import",
]

_BOM: Final = b"\xef\xbb\xbf"
#: Turns stored per transaction with the offline analyzer (as ``kioku ingest`` does).
OFFLINE_BATCH: Final = 50


@dataclass(frozen=True, slots=True)
class ImportTurn:
    """One valid line: a turn ready to be remembered."""

    line: int
    user: str
    assistant: str
    at: datetime | None
    session_id: str | None
    source_id: str | None


@dataclass(frozen=True, slots=True)
class InvalidLine:
    """A line that cannot be imported, and why (one line of text naming the field)."""

    line: int
    error: str


@dataclass(frozen=True, slots=True)
class ImportPlan:
    """Every line of a file, read and checked: the turns and the invalid lines, in order."""

    turns: tuple[ImportTurn, ...]
    invalid: tuple[InvalidLine, ...]


@dataclass(slots=True)
class ImportResult:
    """What :func:`import_turns` did."""

    imported: int = 0
    #: Lines whose source id was already stored (or came earlier in the file).
    skipped: int = 0
    #: Turns already stored as they are (exact duplicates, see kioku.service.remember.turns).
    duplicates: int = 0
    memory_ids: list[str] = field(default_factory=list)


def _shorten(message: str, limit: int = 300) -> str:
    """One readable line even when the offending value is a megabyte of text."""
    flat = message.replace("\n", "\\n")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _optional_id(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    return check_provenance_id(key, value)


def _check_line(number: int, record: object, tz: tzinfo, now: datetime) -> ImportTurn:
    if not isinstance(record, dict):
        raise ValidationError(
            "line", type(record).__name__, 'a JSON object such as {"user": "...", ...}'
        )
    if "user" not in record:
        raise ValidationError("user", None, "the user's message as a string (it is missing)")
    user = check_turn_text("user", record["user"])
    assistant = record.get("assistant")
    assistant = "" if assistant is None else check_turn_text("assistant", assistant)
    check_turn(user, assistant)
    raw_at = record.get("at")
    at: datetime | None = None
    if raw_at is not None:
        if not isinstance(raw_at, str):
            raise ValidationError(
                "at", raw_at, "an ISO 8601 timestamp string such as 2025-01-15T14:30:52+09:00"
            )
        try:
            at = parse_ts(raw_at, tz)
        except ValueError:
            raise ValidationError(
                "at", raw_at, "an ISO 8601 timestamp such as 2025-01-15T14:30:52+09:00"
            ) from None
        check_created("at", at, now)
    return ImportTurn(
        line=number,
        user=user,
        assistant=assistant,
        at=at,
        session_id=_optional_id(record, "session"),
        source_id=_optional_id(record, "source_id"),
    )


def parse_line(number: int, raw: bytes, tz: tzinfo, now: datetime) -> ImportTurn | InvalidLine:
    """One line (without its newline) as a turn, or what is wrong with it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return InvalidLine(
            number, f"line {number} is not UTF-8 text (byte {exc.start + 1}); save it as UTF-8"
        )
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        return InvalidLine(number, f"line {number} is not JSON ({exc.msg}, column {exc.colno})")
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return InvalidLine(number, f"line {number} is not usable JSON ({reason})")
    try:
        return _check_line(number, record, tz, now)
    except ValidationError as exc:
        return InvalidLine(number, _shorten(f"line {number}: {exc}"))


def read_import(data: bytes, *, tz: tzinfo, now: datetime) -> ImportPlan:
    """Every line of a JSONL file's bytes, checked. Blank lines are skipped; a UTF-8 byte
    order mark at the start and CRLF line ends are accepted."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    turns: list[ImportTurn] = []
    invalid: list[InvalidLine] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        line = raw.removesuffix(b"\r")
        if not line.strip():
            continue
        parsed = parse_line(number, line, tz, now)
        if isinstance(parsed, ImportTurn):
            turns.append(parsed)
        else:
            invalid.append(parsed)
    return ImportPlan(tuple(turns), tuple(invalid))


def import_turns(
    engine: Engine,
    turns: Sequence[ImportTurn],
    *,
    batch_size: int | None = None,
    workers: Workers | None = None,
) -> ImportResult:
    """Remember each turn whose source id is not stored yet.

    Turns are stored ``batch_size`` per transaction (default 50 with the offline analyzer,
    one with an LLM analyzer). Each batch is analysed and embedded before its transaction,
    so the write lock is held only for the writes, never while an analyzer or a provider
    works. A failure stops the import with the transaction in progress undone; the turns
    stored before it carry their source ids, so running the import again resumes it.

    ``workers`` (default ``ingest.workers``): with the offline analyzer and embedder, the
    turns are prepared by that many processes, this one and worker processes, while this
    one stores the batches before, with the same result (see
    :mod:`~kioku.service.remember.workers`); ``"auto"`` decides by the CPUs and the size of
    the import, 0 or 1 prepares them here alone.
    """
    offline = engine.config.llm.provider == "offline"
    size = max(1, batch_size or (OFFLINE_BATCH if offline else 1))
    result = ImportResult()
    known = known_source_ids(engine) if any(t.source_id for t in turns) else set()
    batches: list[list[ImportTurn]] = []
    for start in range(0, len(turns), size):
        chunk: list[ImportTurn] = []
        for turn in turns[start : start + size]:
            if turn.source_id is not None and turn.source_id in known:
                result.skipped += 1
                continue
            chunk.append(turn)
            if turn.source_id is not None:
                known.add(turn.source_id)
        batches.append(chunk)
    setting = engine.config.ingest.workers if workers is None else workers
    processes = preparing_processes(setting, sum(len(b) for b in batches))
    if processes >= 2 and not from_configuration(engine):
        processes = 1
    with TurnPreparer(engine, processes) as preparer:
        prepared = (
            preparer.batches(batches)
            if processes >= 2
            else (_prepared_here(engine, batch) for batch in batches)
        )
        for ready in prepared:
            _store(engine, ready, result)
    return result


def _prepared_here(engine: Engine, batch: Sequence[ImportTurn]) -> list[PreparedTurn]:
    """The turns of a batch prepared in this process, one after the other."""
    return [prepare_imported(engine, turn) for turn in batch]


def _store(engine: Engine, prepared: list[PreparedTurn], result: ImportResult) -> None:
    for remembered in store_turns(engine, prepared):
        if remembered.known:
            result.duplicates += 1
        else:
            result.imported += 1
            result.memory_ids.append(remembered.memory.id)
