"""The cost of paid providers from recorded token usage (spec 000, 年間コスト見積もり). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from kioku.core.usage import Purpose, UsageTotal

__all__ = ["PURPOSE_LABELS", "CostLine", "CostReport", "Prices", "cost_report"]

PURPOSE_LABELS: dict[Purpose, str] = {
    "analyze": "memory generation (turn analysis)",
    "summarize": "Level 1→2 compression (summaries)",
    "keywords": "Level 2→3 compression (keywords)",
    "embed": "embeddings",
    "profile": "profile extraction",
}

_MTOK = 1_000_000
_DAYS_PER_MONTH = 365 / 12


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per million tokens."""

    llm_input: float
    llm_output: float
    embedding: float


@dataclass(frozen=True, slots=True)
class CostLine:
    """Calls, tokens and dollars of one purpose (analysis, summaries, embeddings) over a period."""

    purpose: Purpose
    label: str
    calls: int
    input_tokens: int
    output_tokens: int
    usd: float


@dataclass(frozen=True, slots=True)
class CostReport:
    """Costs of every purpose over a period, and the monthly rate they add up to."""

    prices: Prices
    lines: tuple[CostLine, ...]
    total_usd: float
    first_at: datetime | None
    days: float
    per_month_usd: float | None


def _usd(purpose: Purpose, input_tokens: int, output_tokens: int, prices: Prices) -> float:
    if purpose == "embed":
        return input_tokens * prices.embedding / _MTOK
    return (input_tokens * prices.llm_input + output_tokens * prices.llm_output) / _MTOK


def cost_report(totals: Sequence[UsageTotal], prices: Prices, now: datetime) -> CostReport:
    """One line per purpose (all providers and models together), the total, and the rate
    per month over the span since the first recorded call (when that span is a day or more)."""
    by_purpose: dict[Purpose, list[UsageTotal]] = {}
    for total in totals:
        by_purpose.setdefault(total.purpose, []).append(total)
    lines = []
    for purpose, label in PURPOSE_LABELS.items():
        group = by_purpose.get(purpose, [])
        inp = sum(t.input_tokens for t in group)
        out = sum(t.output_tokens for t in group)
        lines.append(
            CostLine(
                purpose,
                label,
                sum(t.calls for t in group),
                inp,
                out,
                _usd(purpose, inp, out, prices),
            )
        )
    total_usd = sum(line.usd for line in lines)
    first = min((t.first_at for t in totals), default=None)
    days = max(0.0, (now - first).total_seconds() / 86_400) if first else 0.0
    per_month = total_usd / days * _DAYS_PER_MONTH if days >= 1 else None
    return CostReport(prices, tuple(lines), total_usd, first, days, per_month)
