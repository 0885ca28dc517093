"""System clock in the local zone, and a fixed clock for tests and replays."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["FixedClock", "SystemClock", "local_timezone"]


def local_timezone() -> tzinfo:
    """The local zone with its daylight-saving rules when they can be found.

    ``TZ`` (an IANA name) wins, then the ``/etc/localtime`` link; otherwise the current
    fixed offset, which is right except across a daylight-saving change.
    """
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        target = Path("/etc/localtime").resolve(strict=True)
        parts = target.parts
        if "zoneinfo" in parts:
            return ZoneInfo("/".join(parts[parts.index("zoneinfo") + 1 :]))
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    tz = datetime.now().astimezone().tzinfo
    assert tz is not None
    return tz


class SystemClock:
    def __init__(self, tz: tzinfo | None = None) -> None:
        self._tz = tz or local_timezone()

    @property
    def tz(self) -> tzinfo:
        return self._tz

    def now(self) -> datetime:
        return datetime.now(self._tz)


class FixedClock:
    """A clock that says what it is told; ``advance`` moves it on."""

    def __init__(self, moment: datetime) -> None:
        if moment.tzinfo is None:
            raise ValueError("FixedClock needs a timezone-aware datetime")
        self._now = moment
        tz = moment.tzinfo
        self._tz: tzinfo = tz

    @property
    def tz(self) -> tzinfo:
        return self._tz

    def now(self) -> datetime:
        return self._now

    def advance(self, delta: timedelta) -> None:
        self._now = self._now + delta
