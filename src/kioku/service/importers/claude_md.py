"""``kioku import --from claude-md``: Claude Code's memory files as knowledge and procedures.

Claude Code reads instructions from ``CLAUDE.md`` files (``./CLAUDE.md`` or
``./.claude/CLAUDE.md`` in a project, ``~/.claude/CLAUDE.md`` for the user,
``CLAUDE.local.md`` for one person's project notes, and ``.claude/rules/*.md``) and keeps
the notes it writes itself, its auto memory, in ``~/.claude/projects/<project>/memory/``:
an index ``MEMORY.md`` and topic files beside it. All are Markdown: headings, bullet lists,
numbered lists and paragraphs, and ``@path`` lines that pull in another file.

PATH is one such file, or a directory: a project (its ``CLAUDE.md``, ``CLAUDE.local.md``,
``.claude/CLAUDE.md`` and ``.claude/rules/*.md``), ``~/.claude`` or a project's directory
under ``~/.claude/projects`` (then ``memory/``), or a memory directory itself (every
``.md`` file beside its ``MEMORY.md``). Each top-level bullet and each paragraph becomes a
knowledge item titled by its headings; a numbered list becomes a procedure whose steps are
its items (the paragraph just before it, when there is one, is its description). ``@path``
lines are not followed. Every item is dated by its file's modification time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Final

from kioku.service.importers.common import ImportPlan, ImportSourceError, Note, digest, moment
from kioku.service.importers.mdparse import Block, Section, front_matter, sections

__all__ = ["FORMAT", "read_claude_md", "section_notes"]

FORMAT: Final = "claude-md"
_MAX_FILE_BYTES: Final = 16 * 1024 * 1024
_IMPORT_LINE: Final = re.compile(r"^(@\S+\s*)+$")
_PROJECT_FILES: Final = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", "memory/MEMORY.md")


def read_text(path: Path, shown: str) -> str:
    """A Markdown file's text (UTF-8, a byte order mark allowed), never through a link."""
    if path.is_symlink() or not path.is_file():
        raise ImportSourceError(shown, "", "not a regular file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportSourceError(shown, "", f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > _MAX_FILE_BYTES:
        raise ImportSourceError(shown, "", f"larger than {_MAX_FILE_BYTES} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportSourceError(
            shown, f"byte {exc.start + 1}", "not UTF-8 text", hint="save the file as UTF-8"
        ) from None


def file_time(path: Path, tz: tzinfo, now: datetime, shown: str) -> datetime:
    return moment(os.stat(path).st_mtime, tz, now, path=shown, where="modification time")


def _merged(blocks: list[Block]) -> list[Block]:
    """The blocks with each code block joined to the item or paragraph before it."""
    out: list[Block] = []
    for block in blocks:
        if block.type == "code" and out and out[-1].type != "code":
            out[-1].lines.extend(["", *block.lines])
        else:
            out.append(Block(block.type, list(block.lines), block.line))
    return out


def section_notes(section: Section) -> Iterator[tuple[str, tuple[str, ...], int]]:
    """``(text, steps, line)`` for each note of ``section``: one per bullet, paragraph or
    code block, and one per numbered list (with the paragraph before it). ``@path`` import
    lines are left out."""
    blocks = [b for b in _merged(section.blocks) if not _IMPORT_LINE.match(b.text)]
    index = 0
    while index < len(blocks):
        block = blocks[index]
        lead = ""
        if block.type == "para" and index + 1 < len(blocks) and blocks[index + 1].type == "step":
            lead, index = block.text, index + 1
            block = blocks[index]
        if block.type == "step":
            steps: list[str] = []
            while index < len(blocks) and blocks[index].type == "step":
                steps.append(" ".join(blocks[index].text.split()))
                index += 1
            yield lead, tuple(s for s in steps if s), block.line
            continue
        if block.text:
            yield block.text, (), block.line
        index += 1


def file_notes(
    text: str, shown: str, at: datetime, fmt: str, fallback_title: str, *, display: str
) -> tuple[list[Note], int]:
    """The notes of one memory file (``shown``: its path under PATH, in source ids;
    ``display``: its path in errors), and how many ``@path`` lines were left out."""
    try:
        meta, body, skipped = front_matter(text)
    except ValueError as exc:
        raise ImportSourceError(display, "line 1", str(exc)) from None
    name = meta.get("name")
    title_base = name.strip() if isinstance(name, str) and name.strip() else fallback_title
    notes: list[Note] = []
    ignored = 0
    stack: list[tuple[int, str]] = []
    for section in sections(body, skipped + 1):
        if section.level:
            while stack and stack[-1][0] >= section.level:
                stack.pop()
            stack.append((section.level, section.title))
        ignored += sum(1 for b in section.blocks if _IMPORT_LINE.match(b.text))
        title = " › ".join(t for _, t in stack if t) or title_base
        for body_text, steps, line in section_notes(section):
            notes.append(
                Note(
                    title=title,
                    text=body_text or title,
                    at=at,
                    source_id=f"{fmt}:{shown}:{digest(title, body_text, *steps)}",
                    origin=f"{display}:{line}",
                    steps=steps,
                )
            )
    return notes, ignored


def _memory_dir(directory: Path) -> list[Path]:
    index = directory / "MEMORY.md"
    if not index.is_file():
        return []
    others = sorted(
        p
        for p in directory.glob("*.md")
        if p.name != "MEMORY.md" and not p.name.startswith(".") and p.is_file()
    )
    return [index, *others]


def _files(root: Path) -> list[Path]:
    """The memory files PATH names (see the module's text)."""
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise ImportSourceError(str(root), "", "no such file or directory")
    found = _memory_dir(root)
    if found:
        return found
    files = [root / name for name in _PROJECT_FILES if (root / name).is_file()]
    rules = root / ".claude" / "rules"
    if rules.is_dir():
        files += sorted(p for p in rules.glob("*.md") if p.is_file())
    if (root / "memory").is_dir():
        files += [p for p in _memory_dir(root / "memory") if p not in files]
    if not files:
        raise ImportSourceError(
            str(root),
            "",
            "holds no CLAUDE.md, CLAUDE.local.md, .claude/CLAUDE.md, .claude/rules/*.md "
            "or MEMORY.md",
            hint="name a project directory, a memory directory or one memory file",
        )
    return files


def read_claude_md(root: Path, *, tz: tzinfo, now: datetime) -> ImportPlan:
    """Every note of the Claude Code memory files under ``root`` (nothing is written)."""
    notes: list[Note] = []
    ignored = 0
    for path in _files(root):
        shown = path.name if path == root else path.relative_to(root).as_posix()
        text = read_text(path, str(path))
        at = file_time(path, tz, now, str(path))
        found, skipped = file_notes(text, shown, at, FORMAT, path.name, display=str(path))
        notes += found
        ignored += skipped
    return ImportPlan(FORMAT, notes=tuple(notes), ignored=ignored)
