"""``kioku export --layout files``: one scope written as spec 001's tree of readable files.

The layout is described in :mod:`kioku.service.mirror.layout`. Every memory of the scope is
written, archived ones included, with the original text kept from before its compression;
the activity lines are copied as they are stored. Vectors are not written (they are large
and mean nothing to a reader): only their model and dimension, from which the importer
computes them again.

The target is written with care: it must be empty (or ``force`` given), it is never the
store's own home, and no symbolic link inside it is followed. Each file is written to a
temporary name, flushed to disk and only then renamed to its final name, so a crash never
leaves half a file under a real name; ``kioku.json`` is written last, so a target without
it is not a finished export. Directories are created owner-only (0700), files 0600. With
``force``, files a previous export left that this one did not write again (a memory since
forgotten, a day no longer in the log) are removed, and nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from kioku.core.kinds import Details, KnowledgeDetails, ProcedureDetails, ProfileDetails
from kioku.core.kinds_json import details_to_dict
from kioku.core.model import Kind, Memory
from kioku.core.timefmt import format_ts
from kioku.errors import KiokuError
from kioku.ports.store import ActivityQuery, Order, Original
from kioku.records import Record
from kioku.service.mirror.layout import (
    ACTIVITY_DIR,
    FORMAT_NAME,
    FORMAT_VERSION,
    JSONL_SUFFIX,
    KIND_DIRS,
    MANIFEST,
    MD_SUFFIX,
    MirrorError,
    created_field,
    field_names,
    heading_holds,
    is_day,
    is_file_id,
)
from kioku.service.scope import scoped

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["ExportReport", "export_files", "render_memory"]

_DIR_MODE: Final = 0o700
_FILE_MODE: Final = 0o600
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_BINARY: Final = getattr(os, "O_BINARY", 0)
_TEMP_PREFIX: Final = ".kioku-"
_TEMP_SUFFIX: Final = ".tmp"
#: Line breaks other than LF that YAML knows (NEL, LINE and PARAGRAPH SEPARATOR).
_RAW_BREAKS: Final = re.compile("[\x85\u2028\u2029]")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ExportReport(Record):
    """What an export wrote: memories by kind, originals, activity, and stale files removed."""

    target: Path
    exported_at: datetime
    counts: dict[str, int]
    removed: int = 0

    @property
    def memories(self) -> int:
        return sum(self.counts[KIND_DIRS[kind]] for kind in KIND_DIRS)


def _ts(moment: datetime | None) -> str | None:
    return None if moment is None else format_ts(moment)


def _details(memory: Memory) -> Details | None:
    """The memory's details; a kind stored without them is written with its defaults."""
    if memory.details is not None or memory.kind is Kind.EPISODE:
        return memory.details
    if memory.kind is Kind.KNOWLEDGE:
        return KnowledgeDetails()
    if memory.kind is Kind.PROCEDURE:
        return ProcedureDetails(description=memory.trigger)
    return ProfileDetails(person=memory.trigger)


def front_matter(memory: Memory, original: Original | None) -> dict[str, Any]:
    """Every field of ``memory`` under its layout name, in the layout's order."""
    values: dict[str, Any] = dict(details_to_dict(_details(memory)) or {})
    values.update(
        {
            "id": memory.id,
            "kind": memory.kind.value,
            created_field(memory.kind): format_ts(memory.created),
            "updated_at": _ts(memory.updated_at),
            "category": memory.category,
            "emotional_intensity": memory.emotional_intensity,
            "emotional_valence": memory.emotional_valence.value,
            "emotional_arousal": memory.emotional_arousal,
            "emotional_tags": list(memory.emotional_tags),
            "keywords": list(memory.keywords),
            "current_level": memory.current_level,
            "memory_days": float(memory.memory_days),
            "retention_score": float(memory.retention_score),
            "decay_coefficient": float(memory.decay_coefficient),
            "recall_count": memory.recall_count,
            "recalled_since_last_batch": memory.recalled_since_last_batch,
            "protected": memory.protected,
            "archived_at": _ts(memory.archived_at),
            "revival_requested": memory.revival_requested,
            "revival_requested_at": _ts(memory.revival_requested_at),
            "relations": [{"id": r.id, "type": r.type.value} for r in memory.relations],
            "scope": {"user_id": memory.user_id, "agent_id": memory.agent_id},
            "provenance": {
                "session_id": memory.session_id,
                "source_ids": list(memory.source_ids),
                "source_timestamps": [format_ts(t) for t in memory.source_timestamps],
            },
            "embedding_model": memory.embedding.model if memory.embedding else None,
            "embedding_dim": memory.embedding.dim if memory.embedding else None,
        }
    )
    data = {name: values[name] for name in field_names(memory.kind)}
    if not heading_holds(memory.trigger):
        data["trigger"] = memory.trigger
    if original is not None:
        data["original"] = {"trigger": original.trigger, "content": original.content}
    return data


def render_memory(memory: Memory, original: Original | None = None) -> bytes:
    """The file of ``memory``: YAML front matter, then ``# <trigger>`` and the content."""
    import yaml

    data = front_matter(memory, original)
    front = yaml.safe_dump(data, allow_unicode=True, sort_keys=False, default_flow_style=False)
    if _RAW_BREAKS.search(front):
        # PyYAML writes these line breaks raw in a quoted text and reads one back as a space:
        # such a file is written with every character outside ASCII escaped instead.
        front = yaml.safe_dump(data, sort_keys=False, default_flow_style=False)
    heading = memory.trigger if heading_holds(memory.trigger) else " ".join(memory.trigger.split())
    return f"---\n{front}---\n# {heading}\n\n{memory.content}\n".encode()


def memory_path(memory: Memory) -> tuple[str, ...]:
    """Where ``memory`` goes under DIR, as path parts; MirrorError for an id that cannot be a
    file name (nothing has been written then)."""
    if not is_file_id(memory.id):
        raise MirrorError(
            f"memory id {memory.id!r} cannot be a file name",
            hint="ids are letters, digits and _.:- starting with a letter or digit",
        )
    name = memory.id + MD_SUFFIX
    top = KIND_DIRS[memory.kind]
    if memory.kind is Kind.EPISODE:
        return (top, memory.created.date().isoformat(), name)
    return (top, name)


class _Tree:
    """Writes files under one directory, never through a symbolic link inside it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._checked: set[tuple[str, ...]] = {()}

    def _where(self, parts: Iterable[str]) -> Path:
        return self.root.joinpath(*parts)

    def directory(self, parts: tuple[str, ...]) -> Path:
        """The directory ``parts`` under the root, made (0700) if missing, never a link."""
        for depth in range(1, len(parts) + 1):
            here = parts[:depth]
            if here in self._checked:
                continue
            path = self._where(here)
            with contextlib.suppress(FileExistsError):
                os.mkdir(path, _DIR_MODE)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                raise MirrorError(
                    f"refusing to write through {path}: it is a symbolic link",
                    hint="remove the link, or export to another directory",
                )
            if not stat.S_ISDIR(info.st_mode):
                raise MirrorError(f"{path} is in the way: it is not a directory")
            os.chmod(path, _DIR_MODE)
            self._checked.add(here)
        return self._where(parts)

    def write(self, parts: tuple[str, ...], data: bytes) -> None:
        """Write ``data`` to ``parts`` (a path under the root) by temporary file and rename."""
        folder = self.directory(parts[:-1])
        final = folder / parts[-1]
        temp = folder / f"{_TEMP_PREFIX}{secrets.token_hex(6)}{_TEMP_SUFFIX}"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _BINARY, _FILE_MODE)
        try:
            try:
                os.chmod(temp, _FILE_MODE)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            if final.is_dir() and not final.is_symlink():
                raise MirrorError(f"{final} is in the way: it is a directory")
            os.replace(temp, final)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise


def _prepare_target(target: Path, home: Path | None, force: bool) -> None:
    """Create ``target`` or check it may be written: a directory, empty unless ``force``."""
    if home is not None and target.resolve() == home.resolve():
        raise MirrorError(
            f"refusing to export into the store's own home {target}",
            hint="export to a directory of its own, e.g. ~/kioku-mirror",
        )
    if not target.exists():
        if target.is_symlink():
            raise MirrorError(f"{target} is a symbolic link to nothing")
        target.mkdir(mode=_DIR_MODE, parents=True)
    elif not target.is_dir():
        raise MirrorError(f"{target} exists and is not a directory", hint="name a directory")
    elif any(target.iterdir()) and not force:
        raise MirrorError(
            f"{target} is not empty",
            hint="export to an empty or new directory, or pass --force to refresh an export",
        )
    os.chmod(target, _DIR_MODE)


def _is_ours(parts: tuple[str, ...]) -> bool:
    """Whether a file at ``parts`` (under DIR) has a name this layout writes."""
    name = parts[-1]
    if name.startswith(_TEMP_PREFIX) and name.endswith(_TEMP_SUFFIX):
        return True
    if parts[0] == ACTIVITY_DIR:
        return (
            len(parts) == 2
            and name.endswith(JSONL_SUFFIX)
            and is_day(name.removesuffix(JSONL_SUFFIX))
        )
    if not name.endswith(MD_SUFFIX) or not is_file_id(name.removesuffix(MD_SUFFIX)):
        return False
    if parts[0] == KIND_DIRS[Kind.EPISODE]:
        return len(parts) == 3 and is_day(parts[1])
    return len(parts) == 2


def _remove_stale(root: Path, written: set[tuple[str, ...]]) -> int:
    """Remove files of a previous export this one did not write (only names of the layout,
    only real files, never through a link); then the day directories left empty."""
    removed = 0
    for top in (*KIND_DIRS.values(), ACTIVITY_DIR):
        stack: list[tuple[str, ...]] = [(top,)]
        while stack:
            parts = stack.pop()
            path = root.joinpath(*parts)
            if not path.is_dir() or path.is_symlink():
                continue
            with os.scandir(path) as found:
                entries = list(found)
            for entry in entries:
                child = (*parts, entry.name)
                if entry.is_dir(follow_symlinks=False):
                    if len(child) == 2 and top == KIND_DIRS[Kind.EPISODE] and is_day(entry.name):
                        stack.append(child)
                elif (
                    entry.is_file(follow_symlinks=False)
                    and child not in written
                    and _is_ours(child)
                ):
                    os.unlink(entry.path)
                    removed += 1
            if len(parts) == 2:
                with contextlib.suppress(OSError):  # not empty: it still holds files
                    os.rmdir(path)
    return removed


def export_files(engine: Engine, target: Path, *, force: bool = False) -> ExportReport:
    """Write every memory of ``engine``'s scope (archived ones too), its kept originals and
    its activity lines under ``target`` in the files layout. Vectors are not written; see
    :mod:`kioku.service.mirror.import_files` for how they come back."""
    store = engine.store
    # Read without the write lock, so hooks and other writers are never held up: a memory
    # written meanwhile is in this export or the next, and its original only with it.
    memories = list(store.iter(scoped(engine, archived=None, order=Order.CREATED_ASC)))
    originals = store.originals([m.id for m in memories])
    activity = store.read_activity(ActivityQuery(user_id=engine.user_id, agent_id=engine.agent_id))
    exported_at = engine.clock.now()
    files: dict[tuple[str, ...], bytes] = {}
    seen: dict[tuple[str, ...], str] = {}
    for memory in memories:
        parts = memory_path(memory)
        folded = tuple(p.casefold() for p in parts)
        if folded in seen:
            raise MirrorError(
                f"memories {seen[folded]!r} and {memory.id!r} would share one file name",
                hint="their ids differ only in upper and lower case",
            )
        seen[folded] = memory.id
        files[parts] = render_memory(memory, originals.get(memory.id))
    days: dict[str, list[str]] = {}
    for row in activity:
        if not is_day(row.day):
            raise MirrorError(f"activity event {row.seq} has no valid day ({row.day!r})")
        days.setdefault(row.day, []).append(row.line)
    for day, lines in days.items():
        files[(ACTIVITY_DIR, day + JSONL_SUFFIX)] = "".join(f"{x}\n" for x in lines).encode()
    kinds = Counter(m.kind for m in memories)
    counts = {KIND_DIRS[kind]: kinds.get(kind, 0) for kind in KIND_DIRS}
    counts.update(
        archived=sum(1 for m in memories if m.archived),
        originals=len(originals),
        activity_lines=len(activity),
        activity_days=len(days),
    )
    manifest = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": format_ts(exported_at),
        "scope": {"user_id": engine.user_id, "agent_id": engine.agent_id},
        "counts": counts,
        "vectors": "not exported: an import computes them again with its embedder",
    }
    text = json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"
    try:
        removed = _write_all(target, files, text.encode(), home=engine.home, force=force)
    except OSError as exc:
        raise KiokuError(
            f"the export to {target} failed: {exc.strerror or exc}",
            hint="check the directory's permissions and free space, then export again",
        ) from exc
    return ExportReport(target=target, exported_at=exported_at, counts=counts, removed=removed)


def _write_all(
    target: Path,
    files: dict[tuple[str, ...], bytes],
    manifest: bytes,
    *,
    home: Path | None,
    force: bool,
) -> int:
    """Write ``files`` under ``target``, the manifest last; how many stale files went."""
    _prepare_target(target, home, force)
    manifest_path = target / MANIFEST
    if manifest_path.is_symlink() or manifest_path.is_file():
        manifest_path.unlink()  # until the end, this is no finished export
    tree = _Tree(target)
    for parts in sorted(files):
        tree.write(parts, files[parts])
    removed = _remove_stale(target, set(files)) if force else 0
    tree.write((MANIFEST,), manifest)
    return removed
