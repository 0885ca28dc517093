"""Output helpers: JSON for machines, aligned text for people.

Text for people never carries what a terminal would obey: :func:`excerpt`, :func:`table` and
:func:`plain` pass memory text through :func:`kioku.core.sanitize.for_terminal`. JSON is left
exact (its encoder escapes control characters itself)."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from typing import Any

import click

from kioku.core.sanitize import for_terminal

__all__ = ["echo_json", "excerpt", "plain", "table", "width"]


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False))


def width(text: str) -> int:
    """Display width in a terminal: East Asian wide characters take two columns."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def plain(text: object) -> str:
    """``text`` (any value, as ``str()`` shows it) safe to print: see
    :func:`~kioku.core.sanitize.for_terminal`."""
    return for_terminal(str(text))


def excerpt(text: str, limit: int) -> str:
    """``text`` on one line, safe to print, cut to ``limit`` display columns with an
    ellipsis."""
    flat = " ".join(for_terminal(text).split())
    if width(flat) <= limit:
        return flat
    out: list[str] = []
    used = 0
    for ch in flat:
        w = width(ch)
        if used + w > limit - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A left-aligned text table with a header row; every cell is made safe to print and
    kept on one line (a line break or tab in a cell becomes a space)."""
    headers = [_cell(h) for h in headers]
    rows = [[_cell(c) for c in r] for r in rows]
    cols = [max([width(h)] + [width(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = [c + " " * (cols[i] - width(c)) for i, c in enumerate(cells)]
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers)] + [line(r) for r in rows])


def _cell(text: str) -> str:
    return for_terminal(text).replace("\n", " ").replace("\t", " ")
