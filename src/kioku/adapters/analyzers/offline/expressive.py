"""Emoji, kaomoji, emoticons, written laughter and sarcasm markers.

These carry feeling in both languages, often more than the words (「了解😭」, "sure :)").
Input is the clean text before NFKC (which would break faces like ``(´・ω・`)``) and before
lower-casing (``XD`` and ``D:`` differ from ``xd``).
"""

from __future__ import annotations

import re
from typing import Final

from .hits import Hit
from .lexicon import Entry, emoji_table
from .match_ja import RawHit

__all__ = ["has_sarcasm_marker", "match_expressive"]

_EYES_HAPPY: Final = "▽∀≧≦ᴗ◡\\^"
_KAOMOJI: Final = re.compile(r"[(\[][^()\[\]\n]{1,14}[)\]]")
_Face = tuple[re.Pattern[str], float, int, tuple[str, ...]]
_FACES: Final[tuple[_Face, ...]] = (
    # (pattern, score, arousal, tags)
    (
        re.compile(r"[tT]_+[tT]|[tT][oO][tT]|;_+;|[tT]\^[tT]|´;ω;`|;ω;|qq|[tT]{2}"),
        -2.0,
        0,
        ("sadness",),
    ),
    (re.compile(r"`д´|`Д´|╬|怒|`皿´|#`"), -2.3, 2, ("anger",)),
    (re.compile(r"・ω・[`｀]|・_・[`｀]|-ω-[`｀]|´・ω・"), -0.8, -1, ("sadness",)),
    # A soft content face: (´ω｀), (*´ω`*).
    (re.compile(r"´ω[`｀]"), 1.2, -1, ("joy",)),
    (re.compile(r">_<|><|>\.<|x_x|@_@|;\^ω\^|\^\^;"), -0.7, 1, ("frustration",)),
    (re.compile(r"_ _|_\._"), 0.5, 0, ("gratitude",)),
    (re.compile(f"[{_EYES_HAPPY}]"), 1.8, 1, ("joy",)),
)
_STANDALONE: Final[tuple[_Face, ...]] = (
    (
        re.compile(r"(?<![A-Za-z])(?:orz|otl|_\|￣\|○)(?![A-Za-z])", re.IGNORECASE),
        -1.6,
        -1,
        ("resignation", "sadness"),
    ),
    (re.compile(r"\^\^|\^_\^|\^-\^|\^o\^|\^ω\^|\^▽\^"), 1.8, 1, ("joy",)),
    (re.compile(r"(?<![\w:])[:;=]-?[)\]]|\(-?[:;=](?![\w])"), 1.5, 0, ("joy",)),
    (re.compile(r"(?<![\w:])[:=]-?D(?![\w])|(?<![\w])[xX]D(?![\w])"), 1.9, 2, ("joy",)),
    (re.compile(r"(?<![\w:])[:=]'-?\("), -2.1, 1, ("sadness",)),
    (re.compile(r"(?<![\w:'])[:=]-?[(\[](?![\w])"), -1.5, 0, ("sadness",)),
    (re.compile(r"(?<![\w:])[:=]-?[pP](?![\w])"), 1.0, 1, ("joy",)),
    (re.compile(r"(?<![\w:])[:=]-?/(?![\w/])"), -0.8, 0, ("confusion",)),
    (re.compile(r"(?<![\w])D:(?![\w])"), -1.2, 2, ("fear",)),
    (re.compile(r"¯\\_\(ツ\)_/¯"), -0.3, -1, ("resignation",)),
)
# Japanese written laughter: 笑, (笑), w/ww after Japanese text, 草 at the end of a sentence.
_LAUGH_JA: Final = re.compile(
    r"[(（]笑[)）]|(?:^|(?<=[\u3040-\u30ff\u4e00-\u9fff!?！？~〜ー。、)）]))(?:笑+|[wｗ]+|草)"
    r"(?=$|[\s!?！？。、.)）」])"
)
_SARCASM: Final = re.compile(
    r"[(（]棒[)）]|(?<!\w)/s\b|\(sarcasm\)|\byeah,? right\b|\bsure,? jan\b", re.IGNORECASE
)
_VARIATION: Final = re.compile("[\ufe0e\ufe0f\U0001f3fb-\U0001f3ff\u200d]")


def has_sarcasm_marker(text: str) -> bool:
    """(棒), /s, "yeah right": the speaker means the opposite of the kind words used."""
    return _SARCASM.search(text) is not None


def _hit(
    term: str, start: int, end: int, score: float, arousal: int, tags: tuple[str, ...]
) -> RawHit:
    return RawHit(Hit(term, start, score, arousal, tags), end, False, False, expressive=True)


def match_expressive(text: str) -> list[RawHit]:
    """Emoji, kaomoji, emoticons and laughter in clean (not NFKC-normalised) ``text``."""
    hits: list[RawHit] = []
    table = emoji_table()
    last_emoji = ""
    repeat = 0
    for i, ch in enumerate(text):
        if ord(ch) < 0x2190:
            continue
        entry: Entry | None = table.get(ch)
        if entry is None:
            last_emoji = ""
            continue
        # A repeated emoji (😭😭😭) adds arousal, not three times the valence.
        repeat = repeat + 1 if ch == last_emoji else 0
        last_emoji = ch
        scale = 1.0 if repeat == 0 else 0.3
        hits.append(_hit(ch, i, i + 1, entry.score * scale, entry.arousal, entry.tags))
    taken: list[tuple[int, int]] = []
    for m in _KAOMOJI.finditer(text):
        inner = _VARIATION.sub("", m.group())
        if any(c.isalpha() and not (c in "ωдДoOTvxXqQ" or ord(c) > 0x2000) for c in inner[1:-1]):
            continue
        for pattern, score, arousal, tags in _FACES:
            if pattern.search(inner):
                hits.append(_hit(m.group(), m.start(), m.end(), score, arousal, tags))
                taken.append((m.start(), m.end()))
                break
    for pattern, score, arousal, tags in _STANDALONE:
        for m in pattern.finditer(text):
            if any(a <= m.start() < b for a, b in taken):
                continue
            hits.append(_hit(m.group(), m.start(), m.end(), score, arousal, tags))
            taken.append((m.start(), m.end()))
    for m in _LAUGH_JA.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        strength = 1.0 + min(len(m.group()) - 1, 3) * 0.2
        hits.append(_hit(m.group(), m.start(), m.end(), 0.9 * strength, 1, ("joy",)))
    return hits
