"""Token usage of paid providers, recorded per call for ``kioku stats --cost``. Pure data."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

__all__ = ["Purpose", "Usage", "UsageTotal"]

#: What a call was for; the rows of the spec's cost table (年間コスト見積もり), and ``profile``:
#: reading what a speaker says about themselves into their profile (spec 003 §6), and
#: ``consolidate``: the LLM steps of consolidation (spec 001 記憶の固定化).
Purpose = Literal["analyze", "summarize", "keywords", "embed", "profile", "consolidate"]


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one provider call used."""

    provider: str
    model: str
    purpose: Purpose
    input_tokens: int
    output_tokens: int
    at: datetime


@dataclass(frozen=True, slots=True)
class UsageTotal:
    """Tokens and calls summed over a period."""

    provider: str
    model: str
    purpose: Purpose
    calls: int
    input_tokens: int
    output_tokens: int
    first_at: datetime
    last_at: datetime
