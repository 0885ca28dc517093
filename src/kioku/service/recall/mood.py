"""The mood a session carries between turns: the emotion and category of the last memory
remembered or recalled in it, kept in one state row (現在の感情状態)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from kioku.core.model import Memory, Valence
from kioku.core.recall import EmotionState
from kioku.records import Record

__all__ = ["SessionMood", "session_key"]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class SessionMood(Record):
    """What a session carries between turns: the last memory's emotion and category."""

    emotion: EmotionState
    category: str

    def to_json(self) -> str:
        return json.dumps(
            {
                "valence": self.emotion.valence.value,
                "arousal": self.emotion.arousal,
                "tags": list(self.emotion.tags),
                "category": self.category,
            },
            ensure_ascii=False,
        )

    @staticmethod
    def from_json(text: str | None) -> SessionMood | None:
        if not text:
            return None
        try:
            data = json.loads(text)
            emotion = EmotionState(
                Valence(data["valence"]), int(data["arousal"]), tuple(data["tags"])
            )
            return SessionMood(emotion, str(data["category"]))
        except (ValueError, KeyError, TypeError):
            return None

    @staticmethod
    def of(memory: Memory) -> SessionMood:
        return SessionMood(
            EmotionState(memory.emotional_valence, memory.emotional_arousal, memory.emotional_tags),
            memory.category,
        )


def session_key(session_id: str) -> str:
    return f"session:{session_id}:mood"
