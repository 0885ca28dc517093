"""Reading one file of an export in the files layout, strictly (see :mod:`.layout`).

:func:`parse_memory` reads a memory file and :func:`parse_activity` a day of the activity log.
Every field must be there, of its type, and the memory valid as kioku stores it; the first
problem raises :class:`~kioku.service.mirror.layout.MirrorFileError`, which names the file
(its path under the export's directory) and the field, so the file can be fixed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Final

from kioku.core.kinds_json import details_from_dict
from kioku.core.model import Kind, Memory, Relation, RelationType, Valence
from kioku.core.validate import validate_memory
from kioku.errors import ValidationError
from kioku.ports.store import Original
from kioku.records import Record
from kioku.service.mirror.layout import (
    KIND_DIRS,
    MD_SUFFIX,
    OPTIONAL_FIELDS,
    MirrorFileError,
    created_field,
    detail_fields,
    field_names,
    is_file_id,
)

__all__ = [
    "ActivityLine",
    "ParsedMemory",
    "memory_from_fields",
    "parse_activity",
    "parse_memory",
]

_ID_NAMES: Final = "a memory id (letters, digits and _.:-, starting with a letter or digit)"
_TIME: Final = "an ISO 8601 time with its UTC offset, such as 2025-01-15T14:30:52+09:00"
#: Where validate_memory's field names sit in a file, when not at the top.
_NESTED: Final = {f: f"provenance.{f}" for f in ("session_id", "source_ids", "source_timestamps")}


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ParsedMemory(Record):
    """One memory file, read and checked: the memory (without its vector), its original,
    the model and dimension of the vector it had, and where it came from."""

    path: str
    memory: Memory
    original: Original | None
    embedding_model: str | None
    embedding_dim: int | None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ActivityLine(Record):
    """One activity line as it will be appended, with where it came from."""

    path: str
    number: int
    day: str
    at: datetime
    type: str
    line: str
    session_id: str | None
    memory_ids: tuple[str, ...]


def _plain(value: object) -> object:
    """YAML's own timestamps (a hand-written time left unquoted) as the text exports hold."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _moment(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


class _Front:
    """Typed access to one mapping of a file, with errors that name the file and field."""

    def __init__(self, data: Mapping[Any, Any], path: str, prefix: str = "") -> None:
        self.data = data
        self.path = path
        self.prefix = prefix

    def bad(self, key: str, value: object, allowed: str) -> MirrorFileError:
        return MirrorFileError(self.path, self.prefix + key, value, allowed)

    def get(self, key: str, allowed: str) -> Any:
        if key not in self.data:
            raise MirrorFileError(self.path, self.prefix + key, None, allowed, missing=True)
        return self.data[key]

    def text(self, key: str) -> str:
        value = self.get(key, "text")
        if not isinstance(value, str):
            raise self.bad(key, value, "text")
        return value

    def opt_text(self, key: str) -> str | None:
        value = self.get(key, "text or null")
        if value is not None and not isinstance(value, str):
            raise self.bad(key, value, "text or null")
        return value

    def integer(self, key: str, *, null: bool = False) -> int:
        allowed = "a whole number" + (" or null" if null else "")
        value = self.get(key, allowed)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.bad(key, value, allowed)
        return value

    def number(self, key: str) -> float:
        value = self.get(key, "a number")
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise self.bad(key, value, "a finite number")
        return float(value)

    def flag(self, key: str) -> bool:
        value = self.get(key, "true or false")
        if not isinstance(value, bool):
            raise self.bad(key, value, "true or false")
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.get(key, "a list of texts")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.bad(key, value, "a list of texts")
        return tuple(value)

    def moment(self, key: str) -> datetime:
        value = self.get(key, _TIME)
        found = _moment(value)
        if found is None:
            raise self.bad(key, value, _TIME)
        return found

    def opt_moment(self, key: str) -> datetime | None:
        value = self.get(key, _TIME + " or null")
        return None if value is None else self.moment(key)

    def moments(self, key: str) -> tuple[datetime, ...]:
        value = self.get(key, f"a list of times ({_TIME})")
        found = [_moment(v) for v in value] if isinstance(value, list) else [None]
        if any(m is None for m in found):
            raise self.bad(key, value, f"a list of times ({_TIME})")
        return tuple(m for m in found if m is not None)

    def section(self, key: str, keys: Sequence[str], where: str | None = None) -> _Front:
        """The mapping under ``key`` (or, with ``where``, the item named so), with no other
        fields than ``keys``; the caller reads each of them (a missing one is named then)."""
        allowed = "a mapping of " + ", ".join(keys)
        value = self.get(key, allowed) if where is None else self.data[key]
        name = key if where is None else where
        if not isinstance(value, dict):
            raise self.bad(name, value, allowed)
        inner = _Front(value, self.path, f"{self.prefix}{name}.")
        for extra in value:
            if extra not in keys:
                raise MirrorFileError(
                    self.path, f"{inner.prefix}{extra}", None, f"{name} ({allowed})", unknown=True
                )
        return inner


def _relations(front: _Front) -> tuple[Relation, ...]:
    value = front.get("relations", "a list of {id, type}")
    if not isinstance(value, list):
        raise front.bad("relations", value, "a list of {id, type}")
    found: list[Relation] = []
    types = ", ".join(t.value for t in RelationType)
    for index, _ in enumerate(value):
        item = _Front({"item": value[index]}, front.path, "").section(
            "item", ("id", "type"), where=f"relations[{index}]"
        )
        target = item.text("id")
        if not is_file_id(target):
            raise item.bad("id", target, _ID_NAMES)
        kind = item.text("type")
        if kind not in {t.value for t in RelationType}:
            raise item.bad("type", kind, f"one of {types}")
        found.append(Relation(target, RelationType(kind)))
    return tuple(found)


def _split(text: str, path: str) -> tuple[str, str, str]:
    """``(front matter, heading, content)`` of a memory file's text."""
    if not text.startswith("---\n"):
        raise MirrorFileError(path, "front matter", text[:20], "a first line '---' (LF line ends)")
    end = text.find("\n---\n", 3)
    if end < 0:
        raise MirrorFileError(path, "front matter", text[:20], "a '---' line that closes it")
    front, body = text[4 : end + 1], text[end + 5 :]
    if not body.startswith("# ") or "\n" not in body:
        raise MirrorFileError(path, "body", body[:40], "'# <trigger>' as its first line")
    heading, _, rest = body[2:].partition("\n")
    if not rest.startswith("\n") or not rest.endswith("\n") or len(rest) < 2:
        raise MirrorFileError(
            path, "body", rest[:40], "an empty line after the heading, then the content and a LF"
        )
    return front, heading, rest[1:-1]


def parse_memory(raw: bytes, path: str, kind: Kind, categories: Sequence[str]) -> ParsedMemory:
    """One memory file of the directory of ``kind``, checked whole (MirrorFileError)."""
    import yaml

    front_text, heading, content = _split(_decode(raw, path), path)
    try:
        loaded = yaml.safe_load(front_text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f"line {where.line + 2}: " if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise MirrorFileError(path, "front matter", f"{line}{problem}", "valid YAML") from None
    if not isinstance(loaded, dict):
        raise MirrorFileError(path, "front matter", loaded, "a YAML mapping of fields")
    fields = _plain(loaded)
    assert isinstance(fields, dict)
    stem = Path(path).name.removesuffix(MD_SUFFIX)
    if _Front(fields, path).text("id") != stem:
        raise MirrorFileError(path, "id", fields["id"], f"{stem!r}, the name of its file")
    return memory_from_fields(fields, path, kind, categories, heading=heading, content=content)


def memory_from_fields(
    fields: dict[str, Any],
    path: str,
    kind: Kind,
    categories: Sequence[str],
    *,
    heading: str,
    content: str,
) -> ParsedMemory:
    """A memory from the fields of its front matter (or of a JSON export), its heading and
    its content, checked whole (MirrorFileError naming ``path`` and the field)."""
    f = _Front(fields, path)
    memory_id = f.text("id")
    kinds = ", ".join(k.value for k in KIND_DIRS)
    found_kind = f.get("kind", f"one of {kinds}")
    if found_kind not in {k.value for k in KIND_DIRS}:
        raise f.bad("kind", found_kind, f"one of {kinds}")
    if found_kind != kind.value:
        raise f.bad("kind", found_kind, f"{kind.value!r}, the kind of {KIND_DIRS[kind]}/")
    names = field_names(kind)
    for key in f.data:
        if key not in names and key not in OPTIONAL_FIELDS:
            raise MirrorFileError(path, str(key), None, f"a {kind.value} file", unknown=True)
    details = {key: f.get(key, "a value") for key in detail_fields(kind)}
    try:
        parsed_details = details_from_dict(kind, details if details else None)
    except ValidationError as exc:
        raise f.bad(exc.field.removeprefix("details."), exc.value, exc.allowed) from None
    valence = f.text("emotional_valence")
    if valence not in {v.value for v in Valence}:
        raise f.bad("emotional_valence", valence, "positive, negative or neutral")
    scope = f.section("scope", ("user_id", "agent_id"))  # checked; the importer's is used
    scope.text("user_id")
    scope.text("agent_id")
    origin = f.section("provenance", ("session_id", "source_ids", "source_timestamps"))
    model = f.opt_text("embedding_model")
    dim = (
        None
        if f.get("embedding_dim", "a whole number or null") is None
        else f.integer("embedding_dim", null=True)
    )
    if (model is None) != (dim is None) or (dim is not None and dim < 1):
        raise f.bad("embedding_dim", dim, "a dimension of 1 or more with a model, else null")
    memory = Memory(
        id=memory_id,
        created=f.moment(created_field(kind)),
        trigger=f.text("trigger") if "trigger" in f.data else heading,
        content=content,
        emotional_intensity=f.integer("emotional_intensity"),
        emotional_valence=Valence(valence),
        emotional_arousal=f.integer("emotional_arousal"),
        category=f.text("category"),
        decay_coefficient=f.number("decay_coefficient"),
        memory_days=f.number("memory_days"),
        retention_score=f.number("retention_score"),
        current_level=f.integer("current_level"),
        emotional_tags=f.texts("emotional_tags"),
        keywords=f.texts("keywords"),
        recalled_since_last_batch=f.flag("recalled_since_last_batch"),
        recall_count=f.integer("recall_count"),
        relations=_relations(f),
        archived_at=f.opt_moment("archived_at"),
        protected=f.flag("protected"),
        revival_requested=f.flag("revival_requested"),
        revival_requested_at=f.opt_moment("revival_requested_at"),
        kind=kind,
        session_id=origin.opt_text("session_id"),
        source_ids=origin.texts("source_ids"),
        source_timestamps=origin.moments("source_timestamps"),
        updated_at=f.opt_moment("updated_at"),
        details=parsed_details,
    )
    try:
        validate_memory(memory, categories)
    except ValidationError as exc:
        field = created_field(kind) if exc.field == "created" else _NESTED.get(exc.field, exc.field)
        raise MirrorFileError(path, field, exc.value, exc.allowed, hint=exc.hint) from None
    original = None
    if "original" in f.data:
        kept = f.section("original", ("trigger", "content"))
        original = Original(memory_id, kept.text("trigger"), kept.text("content"))
    return ParsedMemory(path, memory, original, model, dim)


def _decode(raw: bytes, path: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MirrorFileError(path, "file", f"byte {exc.start + 1}", "UTF-8 text") from None


def _event_time(value: object, tz: tzinfo) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=tz)


def parse_activity(raw: bytes, path: str, day: str, tz: tzinfo) -> list[ActivityLine]:
    """The lines of the activity log's file of ``day``, each kept exactly as it is. A line
    must be one JSON object with ``ts`` (a time on ``day``; read in ``tz`` when it has no
    offset) and ``type``; ``session`` and ``memory_ids``, when given, are what the store files
    the line under. Blank lines are left out."""
    found: list[ActivityLine] = []
    for number, text in enumerate(_decode(raw, path).split("\n"), start=1):
        line = text.removesuffix("\r")
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            raise MirrorFileError(path, where, line[:60], "one JSON object") from None
        if not isinstance(record, dict):
            raise MirrorFileError(path, where, line[:60], "one JSON object")
        kind = record.get("type")
        if not isinstance(kind, str) or not kind.strip():
            raise MirrorFileError(path, f"{where}: type", kind, "the type of the event")
        at = _event_time(record.get("ts"), tz)
        if at is None:
            raise MirrorFileError(path, f"{where}: ts", record.get("ts"), _TIME)
        if at.date().isoformat() != day:
            raise MirrorFileError(
                path, f"{where}: ts", record["ts"], f"a time on {day}, the day of its file"
            )
        session = record.get("session")
        if session is not None and not isinstance(session, str):
            raise MirrorFileError(path, f"{where}: session", session, "text")
        ids = record.get("memory_ids") or []
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise MirrorFileError(path, f"{where}: memory_ids", ids, "a list of memory ids")
        found.append(ActivityLine(path, number, day, at, kind, line, session, tuple(ids)))
    return found
