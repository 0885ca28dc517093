"""ISO 8601 timestamps with the local offset (タイムゾーンの扱い). Pure functions."""

from __future__ import annotations

from datetime import datetime, tzinfo

__all__ = ["format_ts", "parse_ts"]


def format_ts(moment: datetime) -> str:
    """``2025-01-15T14:30:52+09:00``: seconds precision, explicit offset."""
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return moment.isoformat(timespec="seconds")


def parse_ts(text: str, local: tzinfo) -> datetime:
    """Parse ISO 8601 (``Z`` allowed). A time without an offset is read as local time.

    Raises ``ValueError`` with the offending text when it is not ISO 8601.
    """
    raw = text.strip()
    if not raw:
        raise ValueError("empty timestamp")
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError(f"not an ISO 8601 timestamp: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=local)
    return moment
