"""A small reader of Markdown as notes are written: front matter, headings, lists, paragraphs.

It is not a full CommonMark parser: it knows what memory files and notes are made of. A
document becomes :class:`Section` s (one per heading, and one before the first heading),
each a list of :class:`Block` s: a top-level bullet item (with its nested lines), a numbered
step, a paragraph, or a fenced code block (kept as written, never read for structure).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Final, Literal

__all__ = ["Block", "Section", "front_matter", "sections"]

_HEADING: Final = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_BULLET: Final = re.compile(r"^([ \t]*)[-*+][ \t]+(.*)$")
_NUMBERED: Final = re.compile(r"^([ \t]*)\d{1,9}[.)][ \t]+(.*)$")
_FENCE: Final = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")

BlockType = Literal["bullet", "step", "para", "code"]


@dataclass(slots=True)
class Block:
    """One item of a section; ``line`` is where it starts (1-based, in the whole file)."""

    type: BlockType
    lines: list[str]
    line: int

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip()


@dataclass(slots=True)
class Section:
    """A heading (``level`` 0 and no title for the text before the first one) and its
    blocks; ``body`` is the section's text as written, without the heading line."""

    level: int
    title: str
    line: int
    blocks: list[Block] = field(default_factory=list)
    body: list[str] = field(default_factory=list)


def front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """The YAML front matter of ``text`` (between ``---`` lines at its very start), the
    text after it, and how many lines it took. ValueError when it is not YAML mapping."""
    if not text.startswith("---"):
        return {}, text, 0
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        return {}, text, 0
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            import yaml

            try:
                data = yaml.safe_load("\n".join(lines[1:end]))
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" at line {mark.line + 2}" if mark is not None else ""
                raise ValueError(f"front matter is not valid YAML{where}") from None
            if data is None:
                data = {}
            if not isinstance(data, dict):
                raise ValueError("front matter is not a mapping of keys to values")
            return data, "\n".join(lines[end + 1 :]), end + 1
    return {}, text, 0


def _continues(block: Block | None, raw: str, blank_before: bool) -> bool:
    """Whether ``raw`` (not a new item) belongs to the list item ``block``."""
    if block is None or block.type not in ("bullet", "step"):
        return False
    indented = raw[:1] in (" ", "\t")
    return indented or not blank_before


def sections(text: str, first_line: int = 1) -> list[Section]:
    """The sections of ``text`` (whose first line is line ``first_line`` of its file)."""
    found = [Section(0, "", first_line)]
    current: Block | None = None
    fence: str | None = None
    blank_before = False
    for offset, raw in enumerate(text.split("\n")):
        number = first_line + offset
        raw = raw.rstrip("\r")
        section = found[-1]
        if fence is not None:
            assert current is not None
            current.lines.append(raw)
            if raw.strip().startswith(fence):
                fence = None
                if current.type == "code":
                    current = None
            section.body.append(raw)
            continue
        opening = _FENCE.match(raw)
        if opening:
            fence = opening.group(1)[0] * 3
            if current is not None and current.type in ("bullet", "step") and not blank_before:
                current.lines.append(raw)  # a code block inside a list item
            else:
                current = Block("code", [raw], number)
                section.blocks.append(current)
            section.body.append(raw)
            continue
        heading = _HEADING.match(raw)
        if heading:
            found.append(Section(len(heading.group(1)), heading.group(2).strip(), number))
            current, blank_before = None, False
            continue
        section.body.append(raw)
        if not raw.strip():
            blank_before = True
            if current is not None and current.type == "para":
                current = None
            continue
        bullet = _BULLET.match(raw)
        step = _NUMBERED.match(raw)
        item = bullet or step
        if item and len(item.group(1).expandtabs(4)) < 2:
            current = Block("bullet" if bullet else "step", [item.group(2)], number)
            section.blocks.append(current)
        elif _continues(current, raw, blank_before):
            assert current is not None
            current.lines.append(raw.strip())
        elif current is not None and current.type == "para":
            current.lines.append(raw.strip())
        else:
            current = Block("para", [raw.strip()], number)
            section.blocks.append(current)
        blank_before = False
    return found
