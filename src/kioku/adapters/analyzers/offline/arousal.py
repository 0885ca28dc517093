"""Arousal (覚醒度) from the spec's stylistic cues and the words used.

Raised by 「！」/"!", doubled 「？？」, strong or activating words, repetition (「やばいやばい」,
"no no no"), stretched words (「きたーーー」, "sooo"), capitals ("WHY"); lowered by 「……」/"...",
long calm text and calm or tired words. Ordinary requests and acknowledgements sit around 30–40.
"""

from __future__ import annotations

import itertools
import re
from typing import Final

from .emotion import EmotionResult
from .tokenize_en import Word

__all__ = ["score_arousal"]

BASE: Final = 36
ACK_BASE: Final = 30
_EXCLAIM: Final = re.compile(r"!+")
#: Doubled question marks and interrobangs (what ``\?{2,}|\?!|!\?`` finds).
_QUESTIONS: Final = ("??", "?!", "!?")
_ELLIPSIS: Final = re.compile(r"\.{3,}|・{3,}|。{2,}|…")
_STRETCH: Final = re.compile(r"[ー~]{2,}|([a-z])\1{2,}|っ$|っ!")
#: Every match of :data:`_ELLIPSIS` contains one of these.
_ELLIPSIS_CUES: Final = ("...", "・・・", "。。", "…")
_TRIPLE_LETTER: Final = re.compile(r"([a-z])\1\1")
_REPEAT_JA: Final = re.compile(r"(.{2,4}?)\1{1,}")
# Ordinary reduplicated words are not repetition for emphasis.
_REDUPLICATED: Final = frozenset(
    {
        "いろ",
        "だん",
        "どん",
        "とき",
        "そろ",
        "まだ",
        "ます",
        "いよ",
        "わざ",
        "ぎり",
        "ひと",
        "それ",
        "ちょこ",
        "ぶつ",
        "ごろ",
        "ころ",
        "ばら",
        "のろ",
        "よろ",
        "ぐる",
        "くる",
        "ぺこ",
        "にこ",
        "ふわ",
        "きら",
        "ぴか",
        "ざわ",
        "ひや",
    }
)


def _stretched(folded: str) -> bool:
    """Whether :data:`_STRETCH` matches. In ASCII text only its "~~" and tripled letters can, and
    these are quicker to look for alone."""
    if folded.isascii():
        return "~~" in folded or _TRIPLE_LETTER.search(folded) is not None
    return _STRETCH.search(folded) is not None


def _repetition(folded: str, words: list[Word]) -> int:
    count = 0
    for a, b in itertools.pairwise(words):
        if a.low == b.low and a.is_word:
            count += 1
    # Only a unit with a kana or kanji counts: ASCII text has none.
    for m in _REPEAT_JA.finditer(folded) if not folded.isascii() else ():
        unit = m.group(1)
        if any(0x3040 <= ord(c) <= 0x9FFF for c in unit) and unit not in _REDUPLICATED:
            count += 1
    return count


def _capitals(words: list[Word], known: frozenset[str]) -> int:
    return sum(
        1
        for w in words
        if len(w.text) >= 2 and w.text.isupper() and w.text.isalpha() and w.low in known
    )


def score_arousal(
    folded: str,
    words: list[Word],
    emotion: EmotionResult,
    *,
    known_words: frozenset[str],
    acknowledgement: bool,
    length: int,
    long_limits: tuple[int, ...],
) -> int:
    """0–100. ``known_words`` are ordinary words whose capitals mean shouting (not ``SQL``)."""
    value = float(ACK_BASE if acknowledgement and emotion.strength < 1 else BASE)
    hits = [h for h in emotion.hits if abs(h.score) >= 0.3 or h.arousal]
    if hits:
        total = sum(abs(h.score) for h in hits) or 1.0
        hint = sum(h.arousal * max(abs(h.score), 0.3) for h in hits) / total
        value += hint * 9
        value += min(emotion.strength, 3.5) * 4
        if any(abs(h.score) >= 2.4 and h.arousal >= 1 for h in hits):
            value += 6
    bangs = _EXCLAIM.findall(folded) if "!" in folded else []
    if bangs:
        marks = sum(len(b) for b in bangs)
        value += 15 + min(marks - 1, 4) * 6
        if length <= 15:
            value += 6
    if any(cue in folded for cue in _QUESTIONS):
        value += 10
    dots = len(_ELLIPSIS.findall(folded)) if any(c in folded for c in _ELLIPSIS_CUES) else 0
    if dots:
        value -= 12 + min(dots - 1, 2) * 4
    if _stretched(folded):
        value += 8
    value += min(_repetition(folded, words), 2) * 10
    value += min(_capitals(words, known_words), 3) * 7
    if not bangs:
        # Long, calm text lowers arousal step by step (40, 80, 160 characters or 10, 25, 50 words).
        value -= 4 * sum(length > limit for limit in long_limits)
    return max(0, min(100, round(value)))
