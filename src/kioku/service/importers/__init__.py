"""Importers: other tools' memories and conversations read into kioku (``kioku import``).

Each format has a reader that checks its whole source and returns an
:class:`~kioku.service.importers.common.ImportPlan` without writing anything;
:func:`~kioku.service.importers.common.apply_plan` stores what the scope does not hold yet,
or with a dry run only reports it. Formats: ``chatgpt`` (a ChatGPT data export's
``conversations.json``), ``mem0`` (mem0's history database or a JSON export of its
memories), ``claude-md`` (Claude Code's ``CLAUDE.md`` files and auto memory) and
``markdown`` (a directory of notes). The ``jsonl`` and ``files`` formats are read by
:mod:`kioku.service.remember.imports` and :mod:`kioku.service.mirror`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Final

from kioku.service.importers.common import (
    ImportPlan,
    ImportSourceError,
    Note,
    PlanReport,
    apply_plan,
)

__all__ = [
    "READERS",
    "ImportPlan",
    "ImportSourceError",
    "Note",
    "PlanReport",
    "apply_plan",
    "read_source",
]

Reader = Callable[..., ImportPlan]


def _chatgpt() -> Reader:
    from kioku.service.importers.chatgpt import read_chatgpt

    return read_chatgpt


def _mem0() -> Reader:
    from kioku.service.importers.mem0 import read_mem0

    return read_mem0


def _claude_md() -> Reader:
    from kioku.service.importers.claude_md import read_claude_md

    return read_claude_md


def _markdown() -> Reader:
    from kioku.service.importers.notes import read_notes

    return read_notes


#: Each format this package reads, and how to get its reader.
READERS: Final[dict[str, Callable[[], Reader]]] = {
    "chatgpt": _chatgpt,
    "mem0": _mem0,
    "claude-md": _claude_md,
    "markdown": _markdown,
}


def read_source(fmt: str, path: Path, *, tz: tzinfo, now: datetime) -> ImportPlan:
    """The plan of what ``path`` (in format ``fmt``) holds; nothing is written."""
    reader = READERS[fmt]()
    try:
        return reader(path, tz=tz, now=now)
    except OSError as exc:
        raise ImportSourceError(
            str(exc.filename or path), "", f"cannot be read ({exc.strerror or exc})"
        ) from None
