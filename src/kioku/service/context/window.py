"""The pieces of a working-memory window: its turns and entries, where it stands, a token
counter that remembers its counts, and the window kept in the store as JSON (see
:mod:`.working_memory`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from kioku.core.context import Message, Stage, TokenCounter

__all__ = [
    "SYSTEM",
    "TOOL_RESULT_CHARS",
    "USER",
    "CachedCounter",
    "Entry",
    "Turn",
    "WorkingMemoryStats",
    "read_window",
    "window_json",
]

#: Characters of one tool result kept in the long-term memory of its turn.
TOOL_RESULT_CHARS: Final = 2000
SYSTEM: Final = "system"
USER: Final = "user"


@dataclass(slots=True)
class Turn:
    """A user message and what followed it until the next user message."""

    number: int
    thread: int
    at: datetime
    parts: list[tuple[str, str]] = field(default_factory=list)  # (role, content)
    left: bool = False
    stored: bool = False
    memory_id: str | None = None

    @property
    def user(self) -> str:
        return "\n\n".join(c for r, c in self.parts if r == USER)

    @property
    def replies(self) -> str:
        out = []
        for role, content in self.parts:
            if role == USER:
                continue
            if role == "assistant":
                out.append(content)
            else:
                text = content
                if len(text) > TOOL_RESULT_CHARS:
                    text = text[:TOOL_RESULT_CHARS] + f" …[{len(content) - TOOL_RESULT_CHARS} more]"
                out.append(f"[{role}] {text}")
        return "\n\n".join(out)


@dataclass(slots=True)
class Entry:
    """One message of the window with its turn and time."""

    message: Message
    turn: Turn | None  # None: a system message, a summary or a notice


@dataclass(frozen=True, slots=True)
class WorkingMemoryStats:
    """Where the window stands."""

    messages: int
    tokens: int
    max_tokens: int
    usage: float
    stage: Stage
    turns_seen: int
    turns_in_window: int
    turns_stored: int
    turns_pending: int
    threads: int
    prunes: int
    last_thread_end: str | None

    def as_dict(self) -> dict[str, object]:
        return {
            "messages": self.messages,
            "tokens": self.tokens,
            "max_tokens": self.max_tokens,
            "usage": round(self.usage, 4),
            "stage": self.stage.value,
            "turns_seen": self.turns_seen,
            "turns_in_window": self.turns_in_window,
            "turns_stored": self.turns_stored,
            "turns_pending": self.turns_pending,
            "threads": self.threads,
            "prunes": self.prunes,
            "last_thread_end": self.last_thread_end,
        }


class CachedCounter:
    """A token counter that remembers the count of each text it has seen in this window."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        self._cache: dict[str, int] = {}

    @property
    def name(self) -> str:
        return self.inner.name

    def count(self, text: str) -> int:
        n = self._cache.get(text)
        if n is None:
            n = self._cache[text] = self.inner.count(text)
        return n

    def forget(self, keep: Iterable[str]) -> None:
        kept = set(keep)
        self._cache = {t: n for t, n in self._cache.items() if t in kept}


def window_json(
    *,
    turn_count: int,
    thread: int,
    last_at: datetime | None,
    stored: int,
    prunes: int,
    turns: Iterable[Turn],
    thread_turns: Sequence[Turn],
    window: Sequence[Entry],
) -> str:
    """The window and every turn not yet remembered (``turns``), as kept in the store."""
    by_number = {t.number: t for t in turns}
    data = {
        "format": 1,
        "turn_count": turn_count,
        "thread": thread,
        "last_at": last_at.isoformat() if last_at else None,
        "stored": stored,
        "prunes": prunes,
        "thread_turns": [t.number for t in thread_turns],
        "turns": [
            {
                "n": t.number,
                "thread": t.thread,
                "at": t.at.isoformat(),
                "parts": t.parts,
                "left": t.left,
                "stored": t.stored,
            }
            for t in by_number.values()
        ],
        "window": [
            [e.message.role, e.message.content, e.turn.number if e.turn else None] for e in window
        ],
    }
    return json.dumps(data, ensure_ascii=False)


def read_window(
    raw: str,
) -> tuple[dict[str, Any], dict[int, Turn], list[Entry], list[Turn], datetime | None]:
    """What :func:`window_json` wrote: the data, the turns by number, the window, the turns of
    the current thread and the time of the last message. ValueError, KeyError or TypeError
    when it is not readable."""
    data = json.loads(raw)
    turns = {
        int(d["n"]): Turn(
            int(d["n"]),
            int(d["thread"]),
            datetime.fromisoformat(d["at"]),
            [(str(r), str(c)) for r, c in d["parts"]],
            bool(d["left"]),
            bool(d["stored"]),
        )
        for d in data["turns"]
    }
    window = [
        Entry(Message(str(role), str(content)), turns[n] if n is not None else None)
        for role, content, n in data["window"]
    ]
    thread_turns = [turns[int(n)] for n in data["thread_turns"]]
    last_at = datetime.fromisoformat(data["last_at"]) if data["last_at"] else None
    return data, turns, window, thread_turns, last_at
