"""Suite-wide hooks: slow tests start first, and the reliability figures are printed at the end.

Slow tests (``@pytest.mark.slow``, and everything in tests/reliability/) are moved to the front
of the run so that, with ``-n 2``, the long ones overlap with the many short ones instead of
running alone at the end. ``-m "not slow"`` leaves them out for a quick loop.

Reliability tests record what they did with ``record_property("reliability", {...})``; the
figures travel with the test reports (also from xdist workers) and are printed in a
"reliability figures" section. With ``KIOKU_RELIABILITY_FIGURES=FILE`` they are also written
to FILE as JSON (``benchmarks/reliability.py`` uses this).

Property tests carry no time limit: Hypothesis's per-example deadline and its "too slow" health
check are wall-clock judgements, which a busy machine fails for no fault of the code.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("kioku", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kioku")

_RELIABILITY = Path(__file__).resolve().parent / "reliability"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _RELIABILITY in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.slow)
    # A stable sort: the slow ones first, each group in its collected order.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def _figures(reporter: Any) -> list[tuple[str, dict[str, Any]]]:
    found: list[tuple[str, dict[str, Any]]] = []
    for report in reporter.stats.get("passed", []) + reporter.stats.get("failed", []):
        if getattr(report, "when", None) != "call":
            continue
        for name, value in getattr(report, "user_properties", ()):
            if name == "reliability" and isinstance(value, dict):
                found.append((report.nodeid, value))
    return sorted(found, key=lambda pair: pair[0])


def pytest_terminal_summary(terminalreporter: Any) -> None:
    figures = _figures(terminalreporter)
    if not figures:
        return
    terminalreporter.section("reliability figures")
    for nodeid, values in figures:
        shown = ", ".join(f"{key} {value}" for key, value in values.items())
        terminalreporter.write_line(f"{nodeid.rsplit('::', 1)[-1]}: {shown}")
    target = os.environ.get("KIOKU_RELIABILITY_FIGURES")
    if target:
        data = [{"test": nodeid, **values} for nodeid, values in figures]
        Path(target).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
