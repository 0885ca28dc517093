"""The cost table of spec 000 (年間コスト見積もり), computed from recorded usage."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kioku.core.cost import Prices, cost_report
from kioku.core.usage import UsageTotal

START = datetime(2026, 1, 1, tzinfo=UTC)
HAIKU = Prices(llm_input=1.0, llm_output=5.0, embedding=0.02)


def _total(purpose: str, inp: int, out: int, calls: int = 1) -> UsageTotal:
    return UsageTotal("anthropic", "claude-haiku-4-5", purpose, calls, inp, out, START, START)  # type: ignore[arg-type]


def test_spec_cost_table_rows_at_haiku_prices() -> None:
    # The spec's yearly estimate: analysis 120.5M in / 3.7M out = $139.00,
    # L1→L2 102.4M / 13.0M = $167.40, L2→L3 8.4M / 1.5M = $15.90, embeddings 143.2M = $2.86.
    totals = [
        _total("analyze", 120_500_000, 3_700_000),
        _total("summarize", 102_400_000, 13_000_000),
        _total("keywords", 8_400_000, 1_500_000),
        _total("embed", 143_200_000, 0),
    ]
    report = cost_report(totals, HAIKU, START + timedelta(days=365))
    usd = {line.purpose: round(line.usd, 2) for line in report.lines}
    # The spec's four rows, and kioku's profile extraction (no calls in the spec's table).
    assert usd == {
        "analyze": 139.0,
        "summarize": 167.4,
        "keywords": 15.9,
        "embed": 2.86,
        "profile": 0.0,
    }
    assert report.total_usd == pytest.approx(325.16, abs=0.01)
    assert report.per_month_usd == pytest.approx(325.16 / 12, abs=0.01)


def test_no_usage_costs_nothing_and_projects_nothing() -> None:
    report = cost_report([], HAIKU, START)
    assert report.total_usd == 0
    assert report.per_month_usd is None
    assert [line.calls for line in report.lines] == [0, 0, 0, 0, 0]


def test_models_of_one_purpose_are_added_together() -> None:
    totals = [_total("analyze", 1_000_000, 0, calls=2), _total("analyze", 1_000_000, 0, calls=3)]
    line = cost_report(totals, HAIKU, START).lines[0]
    assert (line.calls, line.input_tokens, line.usd) == (5, 2_000_000, 2.0)
