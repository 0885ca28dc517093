"""Reading what users give the CLI: timestamps and JSON Lines files."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, tzinfo
from typing import IO, Any

import click

from kioku.core.timefmt import parse_ts
from kioku.core.validate import EARLIEST, LATEST
from kioku.errors import KiokuError

__all__ = ["answer_jsonl", "parse_time_option", "read_jsonl"]


def parse_time_option(value: str | None, tz: tzinfo, param_hint: str) -> datetime | None:
    """An ISO 8601 option value (no offset = local time) from 1970 to 8999; a clear usage
    error otherwise."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise click.BadParameter(
            f"{value!r} is not a timestamp string; use e.g. 2025-01-15T14:30:52+09:00",
            param_hint=param_hint,
        )
    try:
        moment = parse_ts(value, tz)
    except ValueError as exc:
        raise click.BadParameter(
            f"{exc}; use e.g. 2025-01-15T14:30:52+09:00", param_hint=param_hint
        ) from None
    if not EARLIEST <= moment < LATEST:
        raise click.BadParameter(
            f"{value!r} is out of range: give a time from 1970-01-01T00:00:00Z to 8999-12-31",
            param_hint=param_hint,
        )
    return moment


def read_jsonl(
    handle: IO[str], required: str, optional: tuple[str, ...] = ()
) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """``(line number, record)`` for each non-blank line, or ``(line number, error message)``
    when the line is not a JSON object whose ``required`` key (and ``optional`` keys, when
    present) hold strings."""
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield number, f"line {number} is not JSON ({exc.msg})"
            continue
        if not isinstance(record, dict) or not isinstance(record.get(required), str):
            yield number, f'line {number} must be an object with a "{required}" string'
            continue
        bad = [k for k in optional if k in record and not isinstance(record[k], str)]
        if bad:
            yield number, f'line {number}: "{bad[0]}" must be a string'
            continue
        yield number, record


def answer_jsonl(
    handle: IO[str],
    required: str,
    optional: tuple[str, ...],
    answer: Callable[[int, dict[str, Any]], dict[str, Any]],
    verb: str = "answered",
) -> None:
    """One JSON line on stdout per line of ``handle`` (see :func:`read_jsonl`): ``answer``'s
    result, or the line's error; an ``id`` of the line is echoed. Exit 1 after the last line
    when any line could not be ``verb``."""
    failures = 0
    for number, record in read_jsonl(handle, required, optional):
        if isinstance(record, str):
            failures += 1
            out: dict[str, Any] = {"line": number, "error": record}
        else:
            try:
                out = {"line": number, **answer(number, record)}
            except (KiokuError, click.BadParameter) as exc:
                failures += 1
                out = {"line": number, "error": str(exc)}
            if "id" in record:
                out["id"] = record["id"]
        sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
    if failures:
        click.echo(f"kioku: {failures} line(s) could not be {verb}", err=True)
        raise click.exceptions.Exit(1)
