"""``kioku import --from mem0``: the memories of mem0, from its history database or an export.

Two sources are read:

* mem0's history database (``history.db``, SQLite; ``~/.mem0/history.db`` by default). Its
  ``history`` table has one row per change of a memory: ``memory_id``, ``old_memory``,
  ``new_memory``, ``event`` (``ADD``, ``UPDATE``, ``DELETE``), ``created_at``,
  ``updated_at`` and ``is_deleted`` (databases of older mem0 versions name the columns
  ``prev_value``, ``new_value`` and ``timestamp``; they are read too). A memory's value is
  its latest ``new_memory`` in the order the rows were written; a memory whose last event
  is a deletion is not imported. Its time is that of its ``ADD`` row (else its first row).
* A JSON export of the memories, as mem0's ``get_all`` returns them: a list, or an object
  whose ``results`` (or ``memories``) is the list, of objects with ``id``, ``memory`` and
  ``created_at`` (``updated_at``, ``user_id``, ``metadata``... are not needed).

Each memory becomes a knowledge item at its created time, under the source id
``mem0:<memory id>:<digest of its text>``: importing again skips it, and a memory whose text
changed in mem0 since comes in as a new item. The file is opened read-only.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

from kioku.service.importers.common import ImportPlan, ImportSourceError, Note, digest, moment

__all__ = ["FORMAT", "read_mem0"]

FORMAT: Final = "mem0"
_SQLITE_MAGIC: Final = b"SQLite format 3\x00"
_NEW: Final = ("new_memory", "new_value")
_OLD_TIME: Final = "timestamp"


def _note(memory_id: str, text: str, at: datetime, origin: str) -> Note:
    title = " ".join(text.split())[:80]
    return Note(
        title=title,
        text=text,
        at=at,
        source_id=f"{FORMAT}:{memory_id}:{digest(text)}",
        origin=origin,
    )


def _history(path: Path, tz: tzinfo, now: datetime) -> ImportPlan:
    shown = str(path)
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise ImportSourceError(shown, "", f"cannot be opened as SQLite ({exc})") from None
    try:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(history)")}
        if not columns:
            raise ImportSourceError(
                shown, "", "has no history table", hint="name mem0's history.db"
            )
        new = next((c for c in _NEW if c in columns), None)
        created = "created_at" if "created_at" in columns else _OLD_TIME
        needed = {"memory_id", "event", created} | ({new} if new else set())
        if new is None or not needed <= columns:
            missing = sorted(needed - columns) or ["new_memory"]
            raise ImportSourceError(shown, "table history", f"has no column {', '.join(missing)}")
        conn.row_factory = sqlite3.Row
        found = conn.execute("SELECT rowid AS kioku_rowid, * FROM history ORDER BY rowid")
        rows = [
            (
                row["kioku_rowid"],
                row["memory_id"],
                row[new],
                row["event"],
                row[created],
                row["is_deleted"] if "is_deleted" in columns else 0,
            )
            for row in found
        ]
    except sqlite3.DatabaseError as exc:
        raise ImportSourceError(shown, "", f"cannot be read as SQLite ({exc})") from None
    finally:
        conn.close()
    latest: dict[str, tuple[str | None, Any, int]] = {}
    for rowid, memory_id, value, event, when, is_deleted in rows:
        if not isinstance(memory_id, str) or not memory_id:
            raise ImportSourceError(shown, f"history row {rowid}", "memory_id is empty")
        kind = str(event or "").upper()
        gone = kind == "DELETE" or bool(is_deleted)
        first = latest.get(memory_id)
        born = when if first is None or kind == "ADD" else first[1]
        text: str | None = None
        if not gone:
            text = value if isinstance(value, str) else (first[0] if first else None)
        latest[memory_id] = (text, born, rowid)
    notes: list[Note] = []
    ignored = 0
    for memory_id, (text, born, rowid) in latest.items():
        if not text or not text.strip():
            ignored += 1
            continue
        where = f"history row {rowid} created_at"
        at = moment(born, tz, now, path=shown, where=where) if born else now
        notes.append(_note(memory_id, text.strip(), at, f"{shown}: memory {memory_id}"))
    return ImportPlan(FORMAT, notes=tuple(notes), ignored=ignored)


def _export(path: Path, data: bytes, tz: tzinfo, now: datetime) -> ImportPlan:
    shown = str(path)
    try:
        loaded = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ImportSourceError(shown, f"byte {exc.start + 1}", "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ImportSourceError(
            shown,
            f"line {exc.lineno} column {exc.colno}",
            f"neither SQLite nor JSON ({exc.msg})",
            hint="name mem0's history.db or a JSON list of its memories",
        ) from None
    items = loaded
    if isinstance(loaded, dict):
        items = loaded.get("results", loaded.get("memories"))
    if not isinstance(items, list):
        raise ImportSourceError(
            shown, "top level", 'expected a list of memories, or {"results": [...]}'
        )
    notes: list[Note] = []
    for number, item in enumerate(items, start=1):
        where = f"memory {number}"
        if not isinstance(item, dict):
            raise ImportSourceError(shown, where, "expected an object")
        memory_id, text = item.get("id"), item.get("memory")
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise ImportSourceError(shown, f"{where}.id", "missing (the mem0 memory id)")
        if not isinstance(text, str) or not text.strip():
            raise ImportSourceError(shown, f"{where}.memory", "missing (the memory's text)")
        raw = item.get("created_at")
        at = moment(raw, tz, now, path=shown, where=f"{where}.created_at") if raw else now
        notes.append(_note(memory_id, text.strip(), at, f"{shown}: {where}"))
    return ImportPlan(FORMAT, notes=tuple(notes))


def read_mem0(path: Path, *, tz: tzinfo, now: datetime) -> ImportPlan:
    """The memories of mem0's history database or JSON export at ``path`` (nothing is
    written)."""
    if path.is_dir():
        path = path / "history.db"
    if not path.is_file():
        raise ImportSourceError(str(path), "", "no such file")
    with path.open("rb") as stream:
        head = stream.read(len(_SQLITE_MAGIC))
    if head == _SQLITE_MAGIC:
        return _history(path, tz, now)
    return _export(path, path.read_bytes(), tz, now)
