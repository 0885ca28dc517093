"""``kioku export --format json``: one owner's memories as one JSON document, for data
portability.

The document holds everything the files layout holds, for the scope's memories only:

* ``format`` (``kioku-json``), ``version``, ``exported_at`` and ``scope`` (user and agent);
* ``counts``: memories by kind, archived ones, kept originals, relations, activity lines;
* ``memories``: every memory, archived ones too, oldest first, each with every field under
  the files layout's names (see :mod:`.layout`) plus ``trigger`` and ``content``, and under
  ``original`` the text an episode had before compression, when kept;
* ``relations``: each relation between two exported memories (``from``, ``to``, ``type``);
* ``activity``: the scope's activity log lines, each the JSON object as stored.

Vectors are not written (only their model and dimension). A file target is written to a
temporary name, flushed and renamed, owner-only (0600); an existing file is replaced only
with ``force``.
"""

from __future__ import annotations

import json
import os
import secrets
from collections import Counter
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from kioku.core.timefmt import format_ts
from kioku.errors import KiokuError
from kioku.ports.store import ActivityQuery, Order
from kioku.service.mirror.export_files import front_matter
from kioku.service.mirror.layout import KIND_DIRS, MirrorError
from kioku.service.scope import scoped

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["JSON_FORMAT", "JSON_VERSION", "export_document", "write_document"]

JSON_FORMAT: Final = "kioku-json"
JSON_VERSION: Final = 1
_FILE_MODE: Final = 0o600


def _activity(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return line  # kept as stored: the document must not lose a line


def export_document(engine: Engine) -> dict[str, Any]:
    """The JSON document of ``engine``'s scope (read without the write lock)."""
    store = engine.store
    memories = list(store.iter(scoped(engine, archived=None, order=Order.CREATED_ASC)))
    originals = store.originals([m.id for m in memories])
    activity = store.read_activity(ActivityQuery(user_id=engine.user_id, agent_id=engine.agent_id))
    ids = {m.id for m in memories}
    items: list[dict[str, Any]] = []
    relations: list[dict[str, str]] = []
    for memory in memories:
        item = front_matter(memory, originals.get(memory.id))
        item["trigger"] = memory.trigger
        item["content"] = memory.content
        items.append(item)
        relations += [
            {"from": memory.id, "to": r.id, "type": r.type.value}
            for r in memory.relations
            if r.id in ids
        ]
    kinds = Counter(m.kind for m in memories)
    counts = {KIND_DIRS[kind]: kinds.get(kind, 0) for kind in KIND_DIRS}
    counts.update(
        archived=sum(1 for m in memories if m.archived),
        originals=len(originals),
        relations=len(relations),
        activity_lines=len(activity),
    )
    return {
        "format": JSON_FORMAT,
        "version": JSON_VERSION,
        "exported_at": format_ts(engine.clock.now()),
        "scope": {"user_id": engine.user_id, "agent_id": engine.agent_id},
        "counts": counts,
        "vectors": "not exported: an import computes them again with its embedder",
        "memories": items,
        "relations": relations,
        "activity": [_activity(row.line) for row in activity],
    }


def _encoded(document: dict[str, Any]) -> bytes:
    return (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode()


def write_document(
    document: dict[str, Any], target: Path | None, *, stream: IO[bytes], force: bool = False
) -> None:
    """Write ``document`` to ``target``, or to ``stream`` when ``target`` is None."""
    data = _encoded(document)
    if target is None:
        stream.write(data)
        stream.flush()
        return
    if target.is_dir():
        raise MirrorError(f"{target} is a directory", hint="name a file, or - for stdout")
    if (target.exists() or target.is_symlink()) and not force:
        raise MirrorError(f"{target} exists", hint="name a new file, or pass --force to replace it")
    temp = target.with_name(f".kioku-{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _FILE_MODE)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise KiokuError(
            f"the export to {target} failed: {exc.strerror or exc}",
            hint="check the directory's permissions and free space, then export again",
        ) from exc
