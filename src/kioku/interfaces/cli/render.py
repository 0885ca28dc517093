"""Output helpers: JSON for machines, aligned text for people."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from typing import Any

import click

__all__ = ["echo_json", "excerpt", "table", "width"]


def echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False))


def width(text: str) -> int:
    """Display width in a terminal: East Asian wide characters take two columns."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def excerpt(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` display columns with an ellipsis."""
    flat = " ".join(text.split())
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
    """A left-aligned text table with a header row."""
    cols = [max([width(h)] + [width(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = [c + " " * (cols[i] - width(c)) for i, c in enumerate(cells)]
        return "  ".join(padded).rstrip()

    return "\n".join([line(headers)] + [line(r) for r in rows])
