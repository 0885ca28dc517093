"""``kioku import --from json``: a document of ``kioku export --format json`` read back.

The document is checked whole first, as an export in the files layout is: its header
(``format`` ``kioku-json``, a ``version`` this kioku reads), every memory (each field, as
:func:`~kioku.service.mirror.parse.memory_from_fields` checks a memory file's) and every
activity line (an object with ``ts`` and ``type``). A problem raises MirrorFileError naming
the file and the item (``memories[3].recall_count``...), and nothing is written. Then the
memories, their kept originals and the activity lines are added to the caller's scope as
:func:`~kioku.service.mirror.import_files.import_mirror` adds those of the files layout:
memories already stored (by id) and activity lines already held are skipped, so the import
can be repeated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

from kioku.core.model import Kind
from kioku.service.mirror.export_json import JSON_FORMAT, JSON_VERSION
from kioku.service.mirror.import_files import Mirror
from kioku.service.mirror.layout import MirrorError, MirrorFileError
from kioku.service.mirror.parse import ActivityLine, memory_from_fields, parse_activity

__all__ = ["read_json_export"]

_MAX_BYTES: Final = 4 * 1024 * 1024 * 1024
_KINDS: Final = {kind.value: kind for kind in Kind}


def _load(path: Path) -> dict[str, Any]:
    shown = str(path)
    if not path.is_file():
        raise MirrorError(
            f"{path} is not a file", hint="name a file of `kioku export --format json`"
        )
    if path.stat().st_size > _MAX_BYTES:
        raise MirrorFileError(shown, "file", "too large", f"at most {_MAX_BYTES} bytes")
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise MirrorFileError(shown, "file", f"byte {exc.start + 1}", "UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise MirrorFileError(
            shown, f"line {exc.lineno} column {exc.colno}", exc.msg, "JSON"
        ) from None
    if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise MirrorFileError(shown, "format", found, f'"{JSON_FORMAT}"')
    if data.get("version") != JSON_VERSION:
        raise MirrorFileError(shown, "version", data.get("version"), str(JSON_VERSION))
    return data


def _items(data: dict[str, Any], key: str, shown: str) -> list[Any]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise MirrorFileError(shown, key, type(value).__name__, "a list")
    return value


def _activity(items: Sequence[Any], shown: str, tz: tzinfo) -> list[ActivityLine]:
    """Each line, checked as a line of the files layout's log of its day."""
    days: dict[str, list[str]] = {}
    for index, item in enumerate(items):
        where = f"activity[{index}]"
        if not isinstance(item, dict):
            raise MirrorFileError(shown, where, item, "an object of the activity log")
        raw = item.get("ts")
        try:
            at = datetime.fromisoformat(raw) if isinstance(raw, str) else None
        except ValueError:
            at = None
        if at is None:
            raise MirrorFileError(shown, f"{where}.ts", raw, "an ISO 8601 time")
        at = at if at.tzinfo is not None else at.replace(tzinfo=tz)
        days.setdefault(at.date().isoformat(), []).append(json.dumps(item, ensure_ascii=False))
    found: list[ActivityLine] = []
    for day, lines in days.items():
        raw_day = "".join(f"{line}\n" for line in lines).encode()
        found += parse_activity(raw_day, f"{shown}: activity of {day}", day, tz)
    return found


def read_json_export(path: Path, *, categories: Sequence[str], tz: tzinfo) -> Mirror:
    """Read and check a whole JSON export (MirrorError or MirrorFileError); nothing is
    written."""
    shown = str(path)
    data = _load(path)
    memories = []
    seen: set[str] = set()
    for index, item in enumerate(_items(data, "memories", shown)):
        where = f"{shown}: memories[{index}]"
        if not isinstance(item, dict):
            raise MirrorFileError(where, "memory", item, "an object")
        kind = _KINDS.get(item.get("kind"))  # type: ignore[arg-type]
        if kind is None:
            raise MirrorFileError(where, "kind", item.get("kind"), ", ".join(_KINDS))
        content = item.get("content")
        if not isinstance(content, str):
            raise MirrorFileError(where, "content", content, "text")
        fields = {k: v for k, v in item.items() if k != "content"}
        parsed = memory_from_fields(
            fields, where, kind, categories, heading=str(item.get("trigger", "")), content=content
        )
        if parsed.memory.id in seen:
            raise MirrorFileError(where, "id", parsed.memory.id, "an id no other memory has")
        seen.add(parsed.memory.id)
        memories.append(parsed)
    activity = _activity(_items(data, "activity", shown), shown, tz)
    return Mirror({"format": JSON_FORMAT}, tuple(memories), tuple(activity))
