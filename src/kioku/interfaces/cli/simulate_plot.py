"""The picture of a simulation (``kioku simulate --plot``); matplotlib is an optional extra."""

from __future__ import annotations

import importlib
from datetime import date
from pathlib import Path

from kioku.service.lifecycle.simulate_checks import Simulation

__all__ = ["draw"]

_COLOURS = ("#2b6cb0", "#38a169", "#d69e2e", "#a0aec0")
_NAMES = ("L1 full", "L2 summary", "L3 keywords", "L4 archive")


def draw(result: Simulation, path: Path) -> None:
    """Counts per level stacked over time, and each share against its target."""
    matplotlib = importlib.import_module("matplotlib")
    matplotlib.use("Agg")
    plt = importlib.import_module("matplotlib.pyplot")

    days = [date.fromisoformat(d.day) for d in result.days]
    counts = [[d.counts.free[level] for d in result.days] for level in range(4)]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    try:
        top.stackplot(days, counts, labels=_NAMES, colors=_COLOURS)
        top.set_ylabel("non-protected memories")
        top.set_title(f"kioku simulate: {len(days)} daily batches ({result.mode})")
        top.legend(loc="upper left")
        for level in range(4):
            shares = [d.counts.share(level + 1) * 100 for d in result.days]
            bottom.plot(days, shares, color=_COLOURS[level], label=_NAMES[level])
            if level < 3:
                bottom.axhline(
                    result.targets[level + 1] * 100,
                    color=_COLOURS[level],
                    linestyle="--",
                    linewidth=0.8,
                )
        bottom.set_ylabel("share % (dashed: target)")
        bottom.set_ylim(0, 100)
        bottom.legend(loc="upper left")
        fig.autofmt_xdate()
        fig.tight_layout()
        fig.savefig(path, dpi=100)
    finally:
        plt.close(fig)
