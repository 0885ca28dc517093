"""What the analyzer makes of a turn or a text, without storing anything."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kioku.core.model import Level

if TYPE_CHECKING:
    from kioku.ports.analyzer import Analysis, Compressed
    from kioku.service.engine import Engine

__all__ = ["analyze", "compress"]


def analyze(engine: Engine, user: str, assistant: str = "") -> Analysis:
    """What the analyzer understands of a turn (emotion, category, keywords, protection)."""
    from kioku.ports.analyzer import Turn

    return engine.analyzer.analyze(Turn(user=user, assistant=assistant))


def compress(engine: Engine, trigger: str, content: str, level: int) -> Compressed:
    """The text a memory would have at ``level`` (2: summary, 3: keywords)."""
    if level == Level.SUMMARY:
        return engine.analyzer.summarize(trigger, content)
    if level == Level.TRACE:
        return engine.analyzer.extract_keywords(trigger, content)
    raise ValueError(f"compression goes to level 2 or 3, not {level}")
