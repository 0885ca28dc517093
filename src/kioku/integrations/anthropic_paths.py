"""Paths of the memory tool's ``/memories`` tree, checked before anything is looked up.

A path names memories in kioku's store, never a file on disk, so no link or mount can lead
out of the tree; what could still trick a name is refused here with a sentence the model
can act on: a path outside ``/memories``, ``.`` and ``..``, empty names (``//``), hidden
names, control characters (NUL, line breaks), backslashes and characters that look like a
slash, percent-encoded characters, ``~``, and names with spaces at either end or runs of
whitespace (a file's name becomes a memory's title, which keeps single spaces only).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from kioku.core.model import Kind
from kioku.errors import KiokuError

__all__ = [
    "KIND_DIRS",
    "MAX_PATH",
    "ROOT",
    "SUFFIX",
    "MemoryPath",
    "MemoryToolError",
    "name_problem",
    "parse",
]

ROOT: Final = "/memories"
SUFFIX: Final = ".md"
#: The directories that hold one kind of memory each, one file per memory.
KIND_DIRS: Final[dict[str, Kind]] = {
    "knowledge": Kind.KNOWLEDGE,
    "procedures": Kind.PROCEDURE,
    "users": Kind.PROFILE,
}
#: A memory's title holds at most 200 characters: a name, or a whole path elsewhere.
MAX_NAME: Final = 200
MAX_PATH: Final = 200
MAX_DEPTH: Final = 8
_SLASH_LOOKALIKES: Final = frozenset("\u2044\u2215\u29f8\uff0f\u2571")
_PERCENT: Final = re.compile(r"%[0-9A-Fa-f]{2}")


class MemoryToolError(KiokuError):
    """A memory-tool command that cannot be done; the text names the problem and the fix."""

    exit_code = 2


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be one name of a path, or None if it can."""
    if name in (".", ".."):
        return "'.' and '..' are not allowed (no path may step out of /memories)"
    if not name:
        return "a name is empty (two slashes in a row)"
    if name.startswith("."):
        return f"{name!r} is hidden (starts with a dot); hidden names are not kept"
    if name.startswith("~"):
        return f"{name!r} starts with '~'; nothing is expanded, write the name itself"
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in name):
        return "a name holds a control character (NUL, a line break, a tab...)"
    if "/" in name:
        return "a name holds a slash"
    if "\\" in name or any(c in _SLASH_LOOKALIKES for c in name):
        return "a name holds a backslash or a character that looks like a slash; use / only"
    if _PERCENT.search(name):
        return "percent-encoded characters (%2e, %2f...) are not decoded; write them as they are"
    if " ".join(name.split()) != name:
        return f"{name!r} has spaces at an end or several in a row; use single spaces inside"
    if len(name) > MAX_NAME:
        return f"a name is longer than {MAX_NAME} characters"
    return None


@dataclass(frozen=True, slots=True)
class MemoryPath:
    """A checked path: its names under ``/memories`` (none for ``/memories`` itself)."""

    parts: tuple[str, ...]

    @property
    def text(self) -> str:
        return "/".join((ROOT, *self.parts))

    @property
    def is_root(self) -> bool:
        return not self.parts

    @property
    def kind_dir(self) -> str | None:
        """``knowledge``, ``procedures`` or ``users`` when the path is in (or is) one."""
        return self.parts[0] if self.parts and self.parts[0] in KIND_DIRS else None

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else ROOT

    def child(self, name: str) -> MemoryPath:
        return MemoryPath((*self.parts, name))

    def is_under(self, other: MemoryPath) -> bool:
        """Whether this path is inside ``other`` (not ``other`` itself)."""
        return len(self.parts) > len(other.parts) and self.parts[: len(other.parts)] == other.parts

    def __str__(self) -> str:
        return self.text


def parse(path: object, what: str = "path") -> MemoryPath:
    """``path`` as a :class:`MemoryPath`; MemoryToolError naming what is wrong otherwise."""
    if not isinstance(path, str):
        raise MemoryToolError(f"{what} must be text such as /memories/notes.md, got {path!r}")
    shown = path if len(path) <= 80 else path[:79] + "…"
    if path != ROOT and not path.startswith(ROOT + "/"):
        raise MemoryToolError(
            f"{what} {shown!r} is outside the memory directory: every path starts with {ROOT}/"
        )
    if len(path) > MAX_PATH + 1:
        raise MemoryToolError(f"{what} {shown!r} is longer than {MAX_PATH} characters")
    rest = path[len(ROOT) + 1 :]
    if rest.endswith("/"):
        rest = rest[:-1]
    parts = tuple(rest.split("/")) if rest else ()
    if len(parts) > MAX_DEPTH:
        raise MemoryToolError(f"{what} {shown!r} is more than {MAX_DEPTH} directories deep")
    for part in parts:
        wrong = name_problem(part)
        if wrong is not None:
            raise MemoryToolError(f"{what} {shown!r} is refused: {wrong}")
    return MemoryPath(parts)
