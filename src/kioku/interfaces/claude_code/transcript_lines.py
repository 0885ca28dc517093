"""The lines of a Claude Code transcript file, read tolerantly: a line that is not a JSON
object of the expected shape is counted and skipped, never fatal; and the branch the session
ended on, when editing a prompt left others behind (see :mod:`.transcripts`)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Entry", "main_branch", "read_entries"]


@dataclass(slots=True)
class Entry:
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


def read_entries(path: Path) -> tuple[list[Entry], int]:
    entries: list[Entry] = []
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
            entries.append(Entry(number, record["type"], record))
    return entries, skipped


def main_branch(entries: Sequence[Entry]) -> list[Entry]:
    """The entries without those on branches abandoned when a prompt was edited.

    The main chain runs from the last entry with a uuid back through ``parentUuid`` (or
    ``logicalParentUuid`` across a compaction). An entry whose ancestors meet that chain
    off it is on an abandoned branch; entries without uuids, or whose chain never meets the
    main one, are kept.
    """
    by_uuid: dict[str, Entry] = {}
    for entry in entries:
        uuid = entry.uuid
        if uuid is not None and uuid not in by_uuid:
            by_uuid[uuid] = entry
    if not by_uuid:
        return list(entries)
    leaf = next(e for e in reversed(entries) if e.uuid is not None)
    main: set[str] = set()
    node: Entry | None = leaf
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
