"""``kioku import --layout files``: an export in the files layout read back into a scope.

Everything is read and checked before anything is written (:func:`read_mirror`): the
manifest, the names of every file and directory (memory ids, days), every memory file (each
field present, of its type, valid as a memory; see :mod:`.parse`) and every activity line.
The first problem raises :class:`~kioku.service.mirror.layout.MirrorFileError` naming the
file and the field, and nothing is written. Then one transaction adds the memories to the
caller's scope (whatever scope they were exported from) with their kept originals and the
activity lines: all of it, or on any failure none of it.

Vectors are not part of an export. A memory exported with a vector gets one again, made by
the configured embedder from its trigger and content, when that embedder is the model (and
dimension) the file names: a deterministic embedder, such as the offline default, then gives
back the very vector it had. A memory exported with another model's vector is stored without
one, and found by its words only until ``kioku reembed``.

A memory whose id is already stored is skipped, and so is one carrying the source id of an
erased memory (erased turns are never stored again), with the relations to it and the
activity lines that mention it; an activity line the scope already holds on its day is not
added twice. So an import can be repeated. Symbolic links and hidden files (names starting
with a dot) in the export are not read.
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kioku.core.model import Embedding, Kind, Memory
from kioku.ports.store import ActivityQuery, ActivityRow
from kioku.records import Record
from kioku.service.engine import warn
from kioku.service.mirror.layout import (
    ACTIVITY_DIR,
    FORMAT_NAME,
    FORMAT_VERSION,
    JSONL_SUFFIX,
    KIND_DIRS,
    MANIFEST,
    MAX_MEMORY_FILE_BYTES,
    MD_SUFFIX,
    MirrorError,
    MirrorFileError,
    created_field,
    is_day,
    is_file_id,
)
from kioku.service.mirror.parse import ActivityLine, ParsedMemory, parse_activity, parse_memory
from kioku.service.scope import scoped
from kioku.service.vectors import note_vector_model

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["ImportReport", "Mirror", "import_files", "import_mirror", "read_mirror"]

_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)
_MAX_MANIFEST_BYTES: Final = 1024 * 1024
_MAX_ACTIVITY_FILE_BYTES: Final = 1024 * 1024 * 1024
_EMBED_BATCH: Final = 256
_MD_NAMES: Final = "<id>.md, the id made of letters, digits and _.:- (first a letter or digit)"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Mirror(Record):
    """An export read whole and checked: its manifest, memories and activity lines."""

    manifest: dict[str, Any]
    memories: tuple[ParsedMemory, ...]
    activity: tuple[ActivityLine, ...]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ImportReport(Record):
    """What an import did: memories added by kind (``episodes``, ``knowledge``...), those
    skipped, originals and activity lines restored, and vectors made again or not."""

    imported: dict[str, int]
    skipped_existing: int
    skipped_erased: int
    originals: int
    activity_lines: int
    activity_skipped: int
    embedded: int
    without_vector: int

    @property
    def memories(self) -> int:
        return sum(self.imported.values())


def _read_file(path: Path, rel: str, limit: int) -> bytes:
    """The bytes of a regular file of the export, never through a symbolic link."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _BINARY)
    except OSError as exc:
        if path.is_symlink():
            raise MirrorFileError(rel, "file", "a symbolic link", "a regular file") from None
        raise MirrorError(f"cannot read {path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
            raise MirrorFileError(rel, "file", "not a regular file", "a regular file")
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise MirrorFileError(rel, "file", f"more than {limit} bytes", f"at most {limit} bytes")
    return data


def _is_dir(root: Path, parts: tuple[str, ...]) -> bool:
    """Whether the export has the directory ``parts`` (False when absent); a link or a file
    in its place is an error."""
    rel = "/".join(parts)
    try:
        mode = os.lstat(root.joinpath(*parts)).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(mode):
        raise MirrorFileError(rel, "directory", "a symbolic link", "a directory")
    if not stat.S_ISDIR(mode):
        raise MirrorFileError(rel, "directory", "a file", "a directory")
    return True


def _listing(root: Path, parts: tuple[str, ...]) -> list[tuple[str, bool]]:
    """``(name, is a directory)`` of the visible entries of a directory of the export."""
    found: list[tuple[str, bool]] = []
    with os.scandir(root.joinpath(*parts)) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = "/".join((*parts, entry.name))
            if entry.is_symlink():
                raise MirrorFileError(rel, "file", "a symbolic link", "a file or a directory")
            is_dir = entry.is_dir(follow_symlinks=False)
            if not is_dir and not entry.is_file(follow_symlinks=False):
                raise MirrorFileError(rel, "file", "a special file", "a file or a directory")
            found.append((entry.name, is_dir))
    return sorted(found)


def _memory_file(parts: tuple[str, ...], is_dir: bool) -> tuple[str, ...]:
    name = parts[-1]
    if is_dir or not name.endswith(MD_SUFFIX) or not is_file_id(name.removesuffix(MD_SUFFIX)):
        raise MirrorFileError("/".join(parts), "file name", name, _MD_NAMES)
    return parts


def _memory_files(root: Path, kind: Kind) -> list[tuple[str, ...]]:
    top = KIND_DIRS[kind]
    if not _is_dir(root, (top,)):
        return []
    if kind is not Kind.EPISODE:
        return [_memory_file((top, name), is_dir) for name, is_dir in _listing(root, (top,))]
    files: list[tuple[str, ...]] = []
    for day, is_dir in _listing(root, (top,)):
        if not is_dir or not is_day(day):
            raise MirrorFileError(f"{top}/{day}", "directory name", day, "a day, YYYY-MM-DD")
        files += [_memory_file((top, day, n), d) for n, d in _listing(root, (top, day))]
    return files


def _manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    if not path.exists() and not path.is_symlink():
        raise MirrorError(
            f"{root} holds no {MANIFEST}: it is not a finished export",
            hint="name the directory `kioku export --layout files DIR` wrote",
        )
    raw = _read_file(path, MANIFEST, _MAX_MANIFEST_BYTES)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise MirrorFileError(MANIFEST, "file", raw[:40], "a JSON object") from None
    if not isinstance(data, dict):
        raise MirrorFileError(MANIFEST, "file", data, "a JSON object")
    if data.get("format") != FORMAT_NAME:
        raise MirrorFileError(MANIFEST, "format", data.get("format"), repr(FORMAT_NAME))
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise MirrorFileError(MANIFEST, "version", version, "a format version (a whole number)")
    if version > FORMAT_VERSION:
        raise MirrorFileError(
            MANIFEST,
            "version",
            version,
            f"format version {FORMAT_VERSION} or older",
            hint="a newer kioku wrote this export; upgrade kioku to import it",
        )
    return data


def read_mirror(root: Path, *, categories: Sequence[str], tz: tzinfo) -> Mirror:
    """Read and check a whole export (MirrorError or MirrorFileError); nothing is written.
    ``categories`` are those a memory may have, ``tz`` the zone of activity times written
    without an offset."""
    if not root.is_dir():
        raise MirrorError(f"{root} is not a directory", hint="name the directory of an export")
    try:
        return _read(root, categories, tz)
    except OSError as exc:
        raise MirrorError(f"cannot read the export in {root}: {exc.strerror or exc}") from exc


def _read(root: Path, categories: Sequence[str], tz: tzinfo) -> Mirror:
    manifest = _manifest(root)
    memories: list[ParsedMemory] = []
    seen: dict[str, str] = {}
    for kind in KIND_DIRS:
        for parts in _memory_files(root, kind):
            rel = "/".join(parts)
            raw = _read_file(root.joinpath(*parts), rel, MAX_MEMORY_FILE_BYTES)
            parsed = parse_memory(raw, rel, kind, categories)
            created = parsed.memory.created
            if kind is Kind.EPISODE and created.date().isoformat() != parts[1]:
                raise MirrorFileError(
                    rel,
                    created_field(kind),
                    created.isoformat(),
                    f"a time on {parts[1]}, the day of its directory",
                )
            if parsed.memory.id in seen:
                raise MirrorFileError(
                    rel,
                    "id",
                    parsed.memory.id,
                    "an id no other file has",
                    hint=seen[parsed.memory.id] + " has it too",
                )
            seen[parsed.memory.id] = rel
            memories.append(parsed)
    activity: list[ActivityLine] = []
    if _is_dir(root, (ACTIVITY_DIR,)):
        for name, is_dir in _listing(root, (ACTIVITY_DIR,)):
            rel = f"{ACTIVITY_DIR}/{name}"
            day = name.removesuffix(JSONL_SUFFIX)
            if is_dir or not name.endswith(JSONL_SUFFIX) or not is_day(day):
                raise MirrorFileError(rel, "file name", name, "a day's file, YYYY-MM-DD.jsonl")
            raw = _read_file(root / ACTIVITY_DIR / name, rel, _MAX_ACTIVITY_FILE_BYTES)
            activity += parse_activity(raw, rel, day, tz)
    return Mirror(manifest, tuple(memories), tuple(activity))


def _compare_counts(engine: Engine, mirror: Mirror) -> None:
    """Warn when the files are not those the manifest counted (a copy left some behind)."""
    counts = mirror.manifest.get("counts")
    if not isinstance(counts, dict):
        return
    kinds = Counter(p.memory.kind for p in mirror.memories)
    found = {KIND_DIRS[kind]: kinds.get(kind, 0) for kind in KIND_DIRS}
    found["activity_lines"] = len(mirror.activity)
    for key, number in found.items():
        listed = counts.get(key)
        if isinstance(listed, int) and listed != number:
            warn(
                engine,
                f"{MANIFEST} counts {listed} {key}, the files hold {number}: "
                "the export may be incomplete or edited",
            )


def _with_vectors(engine: Engine, parsed: Sequence[ParsedMemory]) -> tuple[list[Memory], int]:
    """The memories in ``engine``'s scope, with vectors made again where the model matches;
    and how many had a vector that could not be made again (another model)."""
    owned = [replace(p.memory, user_id=engine.user_id, agent_id=engine.agent_id) for p in parsed]
    wanted = [i for i, p in enumerate(parsed) if p.embedding_model is not None]
    if not wanted:
        return owned, 0
    embedder = engine.embedder
    model = embedder.model_id
    same = [
        i
        for i in wanted
        if (parsed[i].embedding_model, parsed[i].embedding_dim) == (model, embedder.dim)
    ]
    for start in range(0, len(same), _EMBED_BATCH):
        chunk = same[start : start + _EMBED_BATCH]
        rows = embedder.embed([f"{owned[i].trigger}\n{owned[i].content}" for i in chunk])
        for i, row in zip(chunk, rows, strict=True):
            owned[i] = replace(owned[i], embedding=Embedding(model, tuple(row.tolist())))
    return owned, len(wanted) - len(same)


def _check_protection(engine: Engine, memories: Sequence[Memory]) -> None:
    adding = sum(1 for m in memories if m.protected)
    if not adding:
        return
    limit = engine.config.protection.max_protected_memories
    have = engine.store.count(scoped(engine, protected=True))
    if have + adding > limit:
        raise MirrorError(
            f"the export holds {adding} protected memories and {have} are protected already: "
            f"more than protection.max_protected_memories ({limit})",
            hint="raise protection.max_protected_memories in the config, then import again",
        )


def _new_rows(engine: Engine, lines: Sequence[ActivityLine], erased: set[str]) -> list[ActivityRow]:
    """The activity rows to append: lines not held yet (as many times as the export has
    them more often than the scope), none that mentions a memory left out as erased."""
    held = Counter(
        (a.day, a.line)
        for a in engine.store.read_activity(
            ActivityQuery(user_id=engine.user_id, agent_id=engine.agent_id)
        )
    )
    rows: list[ActivityRow] = []
    for item in lines:
        if erased.intersection(item.memory_ids):
            continue
        if held[(item.day, item.line)] > 0:
            held[(item.day, item.line)] -= 1
            continue
        rows.append(
            ActivityRow(
                at=item.at,
                type=item.type,
                user_id=engine.user_id,
                agent_id=engine.agent_id,
                line=item.line,
                session_id=item.session_id,
                memory_ids=item.memory_ids,
            )
        )
    return rows


def import_files(engine: Engine, root: Path) -> ImportReport:
    """Import the export in ``root`` into ``engine``'s scope, in one transaction; nothing is
    written when any file is invalid (MirrorFileError, MirrorError)."""
    mirror = read_mirror(root, categories=engine.config.categories, tz=engine.clock.tz)
    return import_mirror(engine, mirror)


def import_mirror(engine: Engine, mirror: Mirror) -> ImportReport:
    """Import ``mirror`` (an export read whole and checked) into ``engine``'s scope, in one
    transaction."""
    _compare_counts(engine, mirror)
    store = engine.store
    ids = {p.memory.id for p in mirror.memories}
    existing = {m.id for m in store.get_many(sorted(ids))}
    tombstones = store.tombstones()
    erased = {
        p.memory.id
        for p in mirror.memories
        if p.memory.id not in existing and any(s in tombstones for s in p.memory.source_ids)
    }
    fresh = [p for p in mirror.memories if p.memory.id not in existing | erased]
    outside = {r.id for p in fresh for r in p.memory.relations} - ids
    stored = {m.id for m in store.get_many(sorted(outside))}
    kept: list[ParsedMemory] = []
    for p in fresh:
        for index, relation in enumerate(p.memory.relations):
            if relation.id not in ids and relation.id not in stored:
                raise MirrorFileError(
                    p.path,
                    f"relations[{index}].id",
                    relation.id,
                    "the id of a memory in the export or already stored",
                )
        links = tuple(r for r in p.memory.relations if r.id not in erased)
        kept.append(
            ParsedMemory(
                p.path,
                replace(p.memory, relations=links),
                p.original,
                p.embedding_model,
                p.embedding_dim,
            )
        )
    memories, without_vector = _with_vectors(engine, kept)
    originals = [p.original for p in kept if p.original is not None]
    with store.atomic():
        _check_protection(engine, memories)
        rows = _new_rows(engine, mirror.activity, erased)
        store.add_many(memories)
        for memory in memories:
            if memory.embedding is not None:
                note_vector_model(engine, memory)
                break
        restored = store.put_originals(originals, engine.clock.now()) if originals else 0
        if rows:
            store.append_activity(rows)
    kinds = Counter(m.kind for m in memories)
    return ImportReport(
        imported={KIND_DIRS[kind]: kinds.get(kind, 0) for kind in KIND_DIRS},
        skipped_existing=len(existing),
        skipped_erased=len(erased),
        originals=restored,
        activity_lines=len(rows),
        activity_skipped=len(mirror.activity) - len(rows),
        embedded=sum(1 for m in memories if m.embedding is not None),
        without_vector=without_vector,
    )
