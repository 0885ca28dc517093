"""``kioku import --from markdown``: a directory of Markdown notes as knowledge and procedures.

PATH is a ``.md`` file or a directory, read recursively (hidden files and directories, and
symbolic links, are left out). A note may start with YAML front matter: ``title``, ``date``
(the note's time; otherwise the file's modification time) and ``tags`` (kept as keywords).

A note becomes one memory, unless it has several top-level sections (two or more headings
of its highest level): then each section becomes one memory titled by its heading, and the
text before the first heading, if any, one more. A note or section that is a numbered list
(after at most one paragraph, its description) becomes a procedure with those steps; any
other becomes a knowledge item whose text is the Markdown as written.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, time, tzinfo
from pathlib import Path
from typing import Any, Final

from kioku.service.importers.claude_md import file_time, read_text
from kioku.service.importers.common import ImportPlan, ImportSourceError, Note, digest, moment
from kioku.service.importers.mdparse import Section, front_matter, sections

__all__ = ["FORMAT", "read_notes"]

FORMAT: Final = "markdown"
_SUFFIXES: Final = (".md", ".markdown")


def _walk(root: Path) -> Iterator[Path]:
    for child in sorted(root.iterdir()):
        if child.name.startswith(".") or child.is_symlink():
            continue
        if child.is_dir():
            yield from _walk(child)
        elif child.is_file() and child.suffix.lower() in _SUFFIXES:
            yield child


def _steps(section: Section) -> tuple[str, tuple[str, ...]] | None:
    """``(description, steps)`` when ``section`` is a numbered list after at most one
    paragraph; None otherwise."""
    blocks = section.blocks
    lead = ""
    if blocks and blocks[0].type == "para":
        lead, blocks = blocks[0].text, blocks[1:]
    if not blocks or any(b.type != "step" for b in blocks):
        return None
    return lead, tuple(" ".join(b.text.split()) for b in blocks)


def _tags(meta: dict[str, Any], display: str) -> tuple[str, ...]:
    tags = meta.get("tags", ())
    if isinstance(tags, str):
        tags = [t for t in tags.replace(",", " ").split() if t]
    if not isinstance(tags, list | tuple) or not all(isinstance(t, str) for t in tags):
        raise ImportSourceError(display, "front matter tags", "expected a list of words")
    return tuple(tags)


def _note_time(
    meta: dict[str, Any], path: Path, display: str, tz: tzinfo, now: datetime
) -> datetime:
    raw = meta.get("date")
    if raw is None:
        return file_time(path, tz, now, display)
    if isinstance(raw, date) and not isinstance(raw, datetime):
        raw = datetime.combine(raw, time(0), tz)
    return moment(raw, tz, now, path=display, where="front matter date")


def _note(
    rel: str,
    display: str,
    title: str,
    section: Section,
    at: datetime,
    keywords: tuple[str, ...],
) -> Note | None:
    section_text = "\n".join(section.body).strip()
    if not section_text:
        return None
    steps = _steps(section)
    text, listed = (steps[0], steps[1]) if steps else (section_text, ())
    return Note(
        title=title,
        text=text or title,
        at=at,
        source_id=f"{FORMAT}:{rel}:{digest(title, section_text)}",
        origin=f"{display}:{section.line}",
        steps=listed,
        keywords=keywords,
    )


def _merge(parts: list[Section], *, own_heading: bool) -> Section:
    """One section holding ``parts`` (a section and its subsections); the first part's
    heading line is left out unless ``own_heading``."""
    whole = Section(parts[0].level, parts[0].title, parts[0].line)
    for index, part in enumerate(parts):
        if part.level and (index or own_heading):
            whole.body.append("#" * part.level + " " + part.title)
        whole.blocks += part.blocks
        whole.body += part.body
    return whole


def note_memories(text: str, path: Path, rel: str, tz: tzinfo, now: datetime) -> list[Note]:
    """The memories of one note (see the module's text)."""
    display = str(path)
    try:
        meta, body, skipped = front_matter(text)
    except ValueError as exc:
        raise ImportSourceError(display, "line 1", str(exc)) from None
    at = _note_time(meta, path, display, tz, now)
    keywords = _tags(meta, display)
    given = meta.get("title")
    titled = isinstance(given, str) and bool(given.strip())
    name = given.strip() if isinstance(given, str) and titled else path.stem
    found = sections(body, skipped + 1)
    top = min((s.level for s in found if s.level), default=0)
    tops = [s for s in found if s.level and s.level == top]
    groups: list[tuple[str, Section]] = []
    if len(tops) >= 2:
        groups.append((name, found[0]))
        current: list[Section] = []
        for section in found[1:]:
            if section.level == top and current:
                groups.append((current[0].title, _merge(current, own_heading=False)))
                current = []
            current.append(section)
        groups.append((current[0].title, _merge(current, own_heading=False)))
    elif tops:
        # One top heading: the note's title (unless the front matter gives one).
        merged = _merge(found[found.index(tops[0]) :], own_heading=False)
        merged.body = [*found[0].body, *merged.body]
        merged.blocks = [*found[0].blocks, *merged.blocks]
        groups.append((name if titled else tops[0].title, merged))
    else:
        groups.append((name, found[0]))
    notes = [_note(rel, display, title, section, at, keywords) for title, section in groups]
    return [n for n in notes if n is not None]


def read_notes(root: Path, *, tz: tzinfo, now: datetime) -> ImportPlan:
    """Every memory of the notes under ``root`` (nothing is written)."""
    if root.is_file():
        files = [root]
    elif root.is_dir():
        files = list(_walk(root))
        if not files:
            raise ImportSourceError(str(root), "", "holds no .md files")
    else:
        raise ImportSourceError(str(root), "", "no such file or directory")
    notes: list[Note] = []
    for path in files:
        rel = path.name if path == root else path.relative_to(root).as_posix()
        notes += note_memories(read_text(path, str(path)), path, rel, tz, now)
    return ImportPlan(FORMAT, notes=tuple(notes))
