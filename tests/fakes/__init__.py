"""Fakes of things outside kioku (provider servers), and small stand-ins for ports in tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from kioku.core.model import Valence
from kioku.core.usage import Usage
from kioku.ports.analyzer import Analysis, Compressed, Turn

from .llm_server import CLOSE, STALL, FakeLlmServer, Reply, Request, default_answer

__all__ = [
    "CLOSE",
    "STALL",
    "FakeLlmServer",
    "RecordingSink",
    "Reply",
    "Request",
    "StubAnalyzer",
    "default_answer",
]


@dataclass
class RecordingSink:
    """A UsageSink that keeps every record."""

    records: list[Usage] = field(default_factory=list)

    def record_usage(self, usage: Usage) -> None:
        self.records.append(usage)


@dataclass
class StubAnalyzer:
    """A fallback analyzer with fixed answers that counts its calls."""

    stub_name: str = "stub"
    calls: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.stub_name

    def analyze(self, turn: Turn) -> Analysis:
        self.calls.append("analyze")
        return Analysis(
            intensity=20,
            valence=Valence.NEUTRAL,
            arousal=30,
            tags=(),
            category="casual",
            keywords=("stub",),
            trigger=turn.user or "(empty)",
            content=turn.assistant or "(empty)",
            protected=False,
            language="en",
            analyzer=self.stub_name,
        )

    def summarize(self, trigger: str, content: str) -> Compressed:
        self.calls.append("summarize")
        return Compressed(trigger=trigger[:20], content=content[:20])

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        self.calls.append("keywords")
        return Compressed(trigger="stub, trigger", content="stub, content")
