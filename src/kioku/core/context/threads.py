"""When a conversation thread of working memory ends (spec 003 §3.2, スレッド判定).

Spec 003 keeps the current thread of conversation in short-term memory (at most 12 turns) and
ends it when the topic moves on: similarity to the thread below 0.75, ten minutes idle, the
turn cap reached, or a change of topic such as 「ところで…」. A new message is checked against
the thread so far, in this order:

1. ``idle``: more than ``idle_seconds`` (600 s) passed since the previous message — a reply
   exactly ten minutes later still continues the thread (like a similarity of exactly 0.75);
2. ``topic``: the message opens with a topic-change phrase (``ところで``, ``by the way``, …),
   possibly after a short interjection (「あ、ところで」, "Oh, by the way");
3. ``similarity``: the message's similarity to the thread is below ``similarity_threshold``
   (0.75 itself continues the thread); only when a similarity is given and the thread has turns;
4. ``cap``: the thread already has ``max_turns`` (12) turns.

Pure: the caller measures similarity (embeddings) and passes the clock.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Final

from kioku.errors import ValidationError

__all__ = [
    "DEFAULT_TOPIC_PHRASES",
    "ThreadEnd",
    "ThreadPolicy",
    "thread_end",
    "topic_change",
]

#: Phrases that open a new topic, Japanese and English (matched case-insensitively).
DEFAULT_TOPIC_PHRASES: Final[tuple[str, ...]] = (
    "ところで",
    "話は変わるけど",
    "話は変わるが",
    "話は変わりますが",
    "話変わるけど",
    "それはそうと",
    "さて",
    "by the way",
    "btw",
    "anyway",
    "anyways",
    "changing the subject",
    "on another note",
    "on a different note",
    "unrelated, but",
)

#: A topic phrase may follow one interjection word of at most this many characters ending in
#: punctuation (「あ、」, "Oh, ", "Hey! ").
_INTERJECTION_CHARS: Final = 8


@dataclass(frozen=True, slots=True)
class ThreadPolicy:
    """When a thread ends (spec 003 §3.2); validated."""

    similarity_threshold: float | None = 0.75
    idle_seconds: float = 600.0
    max_turns: int = 12
    topic_phrases: tuple[str, ...] = DEFAULT_TOPIC_PHRASES

    def __post_init__(self) -> None:
        threshold = self.similarity_threshold
        if threshold is not None and (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not -1.0 <= threshold <= 1.0
        ):
            raise ValidationError(
                "thread.similarity_threshold",
                threshold,
                "a number from -1 to 1, or None",
                hint="use e.g. 0.75, or None to end threads by time, turns and topic only",
            )
        idle = self.idle_seconds
        if isinstance(idle, bool) or not isinstance(idle, int | float) or not idle > 0:
            raise ValidationError(
                "thread.idle_seconds", idle, "a number above 0", hint="use e.g. 600 (ten minutes)"
            )
        turns = self.max_turns
        if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
            raise ValidationError("thread.max_turns", turns, "an integer >= 1", hint="use e.g. 12")
        phrases = self.topic_phrases
        if not isinstance(phrases, tuple) or not all(
            isinstance(p, str) and p.strip() for p in phrases
        ):
            raise ValidationError(
                "thread.topic_phrases",
                phrases,
                "a tuple of non-empty strings",
                hint="e.g. ('ところで', 'by the way')",
            )


class ThreadEnd(StrEnum):
    """Why a thread ended."""

    SIMILARITY = "similarity"
    IDLE = "idle"
    CAP = "cap"
    TOPIC = "topic"


def _is_filler(ch: str) -> bool:
    """Whitespace, punctuation and symbols: what may stand before a topic phrase."""
    return ch.isspace() or unicodedata.category(ch)[0] in "PSZ"


def _starts_phrase(text: str, at: int, phrase: str) -> bool:
    if not text.startswith(phrase, at):
        return False
    after = at + len(phrase)
    if after < len(text) and phrase[-1].isascii() and phrase[-1].isalnum():
        return not text[after].isalnum()  # "anyway," yes, "anywayz" no
    return True


def topic_change(text: str, policy: ThreadPolicy) -> bool:
    """Whether ``text`` opens with a topic-change phrase (possibly after a short interjection)."""
    lowered = text.lower()
    start = 0
    while start < len(lowered) and _is_filler(lowered[start]):
        start += 1
    if start == len(lowered):
        return False
    phrases = [p.lower().strip() for p in policy.topic_phrases]
    if any(_starts_phrase(lowered, start, p) for p in phrases):
        return True
    # one short interjection word ending in punctuation: 「あ、ところで」, "Oh, by the way"
    limit = min(len(lowered), start + _INTERJECTION_CHARS + 1)
    for i in range(start + 1, limit):
        ch = lowered[i]
        if ch.isspace():
            break  # more than one word: "It was, by the way, …" is no topic change
        if not _is_filler(ch):
            continue
        j = i
        while j < len(lowered) and _is_filler(lowered[j]):
            j += 1
        if any(_starts_phrase(lowered, j, p) for p in phrases):
            return True
        break
    return False


def thread_end(
    *,
    previous_at: datetime | None,
    now: datetime,
    similarity: float | None,
    text: str,
    turns: int,
    policy: ThreadPolicy,
) -> ThreadEnd | None:
    """Why the message ``text`` at ``now`` ends the current thread, or ``None`` if it continues.

    ``previous_at`` is when the thread's last message came (``None`` for an empty thread),
    ``similarity`` the message's similarity to the thread (``None`` when unknown), ``turns``
    how many turns the thread holds before this message.
    """
    if previous_at is not None:
        if (previous_at.tzinfo is None) != (now.tzinfo is None):
            raise ValidationError(
                "previous_at",
                previous_at,
                "a datetime of the same kind as now (both naive or both timezone-aware)",
                hint="pass timezone-aware datetimes, e.g. datetime.now(UTC)",
            )
        if (now - previous_at).total_seconds() > policy.idle_seconds:
            return ThreadEnd.IDLE
    if topic_change(text, policy):
        return ThreadEnd.TOPIC
    threshold = policy.similarity_threshold
    if threshold is not None and similarity is not None and turns > 0 and similarity < threshold:
        return ThreadEnd.SIMILARITY
    if turns >= policy.max_turns:
        return ThreadEnd.CAP
    return None
