"""The geometry of the UI's charts, as numbers and SVG path data the templates draw.

Pure functions: no I/O, no clock. A chart's words (its title, description and the numbers it
shows) are given to the templates beside its geometry, so every chart has a text alternative.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Final

__all__ = [
    "Bar",
    "BarChart",
    "Curve",
    "Mark",
    "Stack",
    "StackedChart",
    "bar_chart",
    "retention_curve",
    "stacked_chart",
]

#: The size of the retention curve's drawing and its margins, in SVG units.
WIDTH: Final = 720
HEIGHT: Final = 300
LEFT: Final = 44
RIGHT: Final = 16
TOP: Final = 16
BOTTOM: Final = 36
#: How far the forecast looks ahead.
FORECAST_DAYS: Final = 365

Point = tuple[datetime, float]


@dataclass(frozen=True, slots=True)
class Mark:
    """A labelled position on a chart (an axis tick, a threshold line, a recall)."""

    x: float
    y: float
    label: str


@dataclass(frozen=True, slots=True)
class Curve:
    """A memory's retention over time: the past as it was, the forecast if never recalled."""

    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    past: str  # SVG path data
    forecast: str
    today: float  # x of today
    thresholds: tuple[Mark, ...]
    recalls: tuple[Mark, ...]
    x_ticks: tuple[Mark, ...]
    y_ticks: tuple[Mark, ...]


class _Frame:
    """Maps (time, score) to SVG coordinates."""

    def __init__(self, start: datetime, end: datetime, top_score: float) -> None:
        self.start = start
        self.span = max((end - start).total_seconds(), 1.0)
        self.top_score = top_score
        self.plot_w = WIDTH - LEFT - RIGHT
        self.plot_h = HEIGHT - TOP - BOTTOM

    def x(self, moment: datetime) -> float:
        share = (moment - self.start).total_seconds() / self.span
        return round(LEFT + min(1.0, max(0.0, share)) * self.plot_w, 1)

    def y(self, score: float) -> float:
        share = min(1.0, max(0.0, score / self.top_score))
        return round(TOP + (1.0 - share) * self.plot_h, 1)


def _sorted(points: Sequence[Point]) -> list[Point]:
    return sorted(points, key=lambda p: p[0])


def _path(frame: _Frame, points: Sequence[Point]) -> str:
    """Path data through ``points``: a fall between two points is drawn as the exponential
    decay it is (each step multiplies the score by the same factor), a rise as a line."""
    if not points:
        return ""
    first = points[0]
    parts = [f"M{frame.x(first[0])} {frame.y(first[1])}"]
    for (t0, s0), (t1, s1) in pairwise(points):
        days = (t1 - t0).total_seconds() / 86_400.0
        if s1 < s0 and s1 > 0 and days > 2:
            steps = min(60, max(2, int(days / 3)))
            ratio = s1 / s0
            for n in range(1, steps):
                f = n / steps
                moment = t0 + (t1 - t0) * f
                parts.append(f"L{frame.x(moment)} {frame.y(s0 * ratio**f)}")
        parts.append(f"L{frame.x(t1)} {frame.y(s1)}")
    return " ".join(parts)


def _month_ticks(frame: _Frame, start: datetime, end: datetime, most: int = 8) -> list[Mark]:
    months: list[datetime] = []
    year, month = start.year, start.month
    while True:
        month += 1
        if month > 12:
            year, month = year + 1, 1
        moment = start.replace(year=year, month=month, day=1, hour=0, minute=0, second=0)
        if moment > end:
            break
        months.append(moment)
    step = max(1, -(-len(months) // most))
    return [Mark(frame.x(m), HEIGHT - BOTTOM + 16, m.strftime("%Y-%m")) for m in months[::step]]


def retention_curve(
    *,
    created: datetime,
    now: datetime,
    past: Sequence[Point],
    forecast: Sequence[Point],
    thresholds: Sequence[tuple[int, float]],
    recalls: Sequence[Point],
    top_score: float = 100.0,
) -> Curve:
    """The curve from ``created`` to a year after ``now``.

    ``past`` holds the scores known (at creation, before and after each logged change, now);
    ``forecast`` the scores expected if never recalled (now, each level change, month ends);
    ``thresholds`` the (level, score) lines a memory leaves a level below; ``recalls`` the
    reinforcements (time, score after)."""
    end = now + timedelta(days=FORECAST_DAYS)
    frame = _Frame(min(created, now), end, max(top_score, 1.0))
    horizon = [p for p in _sorted(forecast) if p[0] <= end]
    if horizon and horizon[-1][0] < end:
        last = horizon[-1]
        if len(horizon) >= 2 and horizon[-2][1] > last[1] > 0:
            # Carry the last month's decay on to the end of the year.
            (t0, s0), (t1, s1) = horizon[-2], last
            rate = (s1 / s0) ** (1.0 / max((t1 - t0).total_seconds(), 1.0))
            horizon.append((end, s1 * rate ** (end - t1).total_seconds()))
        else:
            horizon.append((end, last[1]))
    lines = tuple(
        Mark(LEFT, frame.y(score), f"L{level} → L{level + 1} at {score:g}")
        for level, score in thresholds
    )
    y_ticks = tuple(
        Mark(LEFT - 6, frame.y(v), f"{v:g}")
        for v in (0.0, top_score / 4, top_score / 2, 3 * top_score / 4, top_score)
    )
    return Curve(
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        right=WIDTH - RIGHT,
        top=TOP,
        bottom=HEIGHT - BOTTOM,
        past=_path(frame, _sorted(past)),
        forecast=_path(frame, horizon),
        today=frame.x(now),
        thresholds=lines,
        recalls=tuple(Mark(frame.x(t), frame.y(s), t.strftime("%Y-%m-%d")) for t, s in recalls),
        x_ticks=tuple(_month_ticks(frame, min(created, now), end)),
        y_ticks=y_ticks,
    )


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: int
    width: float
    y: float


@dataclass(frozen=True, slots=True)
class BarChart:
    width: int
    height: int
    label_width: int
    bars: tuple[Bar, ...]
    total: int


def bar_chart(items: Sequence[tuple[str, int]], *, width: int = 380, row: int = 28) -> BarChart:
    """Horizontal bars, one per (label, count), scaled to the largest count."""
    label_width = 110
    room = width - label_width - 50
    top = max((v for _, v in items), default=0) or 1
    bars = tuple(
        Bar(label, value, round(room * value / top, 1), n * row)
        for n, (label, value) in enumerate(items)
    )
    return BarChart(width, max(row, row * len(items)), label_width, bars, sum(v for _, v in items))


@dataclass(frozen=True, slots=True)
class Stack:
    """One band of a stacked chart: its name, its path and its style class."""

    label: str
    path: str
    css: str


@dataclass(frozen=True, slots=True)
class StackedChart:
    width: int
    height: int
    left: int
    right: int
    top: int
    bottom: int
    stacks: tuple[Stack, ...]
    x_ticks: tuple[Mark, ...] = ()
    y_ticks: tuple[Mark, ...] = field(default_factory=tuple)


def stacked_chart(
    labels: Sequence[str], series: Sequence[Sequence[int]], names: Sequence[str]
) -> StackedChart:
    """Stacked areas: ``series[k][n]`` is band ``k``'s count on day ``n`` (``labels[n]``),
    drawn bottom up in the order given."""
    days = len(labels)
    totals = [sum(s[n] for s in series) for n in range(days)]
    top = max(totals, default=0) or 1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(n: int) -> float:
        return round(LEFT + (n / max(days - 1, 1)) * plot_w, 1)

    def y(v: float) -> float:
        return round(TOP + (1.0 - v / top) * plot_h, 1)

    below = [0] * days
    stacks: list[Stack] = []
    for k, band in enumerate(series):
        above = [below[n] + band[n] for n in range(days)]
        if days:
            upper = " ".join(f"L{x(n)} {y(above[n])}" for n in range(days))
            lower = " ".join(f"L{x(n)} {y(below[n])}" for n in reversed(range(days)))
            path = "M" + upper[1:] + " " + lower + " Z"
        else:
            path = ""
        stacks.append(Stack(names[k], path, f"band{k + 1}"))
        below = above
    step = max(1, days // 6)
    x_ticks = tuple(Mark(x(n), HEIGHT - BOTTOM + 16, labels[n]) for n in range(0, days, step))
    y_ticks = tuple(Mark(LEFT - 6, y(v), str(round(v))) for v in (0, top / 2, top))
    return StackedChart(
        WIDTH, HEIGHT, LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM, tuple(stacks), x_ticks, y_ticks
    )
