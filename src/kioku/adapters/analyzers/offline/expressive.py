"""Emoji, kaomoji, emoticons, written laughter and sarcasm markers.

These carry feeling in both languages, often more than the words (「了解😭」, "sure :)").
Input is the clean text before NFKC (which would break faces like ``(´・ω・`)``) and before
lower-casing (``XD`` and ``D:`` differ from ``xd``).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Final

from .hits import Hit
from .irony_en import (
    _IRONIC_SCORE,
    _IRONIC_TAGS,
    _SELF_IRONIC_TAGS,
    IRONY,
    IRONY_AT_SELF,
)
from .lexicon import Entry, emoji_table
from .match_ja import RawHit

__all__ = ["has_sarcasm_marker", "ironic_expressions", "laughing_tears", "match_expressive"]

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
    r"[(（](?:棒|皮肉)[)）]|(?<!\w)/s\b|(?<!\w)/sarc(?:asm)?\b|\(sarcasm\)|#sarcasm\b"
    r"|\byeah,? right\b|\bsure,? jan\b",
    re.IGNORECASE,
)
_VARIATION: Final = re.compile("[\ufe0e\ufe0f\U0001f3fb-\U0001f3ff\u200d]")
#: Characters from U+2190 on: the only ones the emoji table is looked up for.
_HIGH: Final = re.compile("[\u2190-\U0010ffff]")
#: For each pattern of :data:`_STANDALONE`, in order: strings one of which every match contains
#: (its text case folded for the first, whose pattern ignores case). A text with none of a
#: pattern's strings is not searched with it.
_STANDALONE_NEEDS: Final = (
    ("orz", "otl", "_|￣|○"),
    ("^",),
    (":", ";", "="),
    (":", "=", "xD", "XD"),
    (":", "="),
    (":", "="),
    (":", "="),
    (":", "="),
    ("D:",),
    ("¯",),
)
_STANDALONE_CUES: Final = tuple(
    (face, needs, bool(face[0].flags & re.IGNORECASE))
    for face, needs in zip(_STANDALONE, _STANDALONE_NEEDS, strict=True)
)
#: Every match of a pattern of :data:`_STANDALONE` but the first holds a match of this (and
#: so does the first's ``_|￣|○``; its ``orz`` and ``otl`` are looked for in the folded text):
#: a text with none is searched with none of them. A colon alone is not enough ("Ann: ...",
#: "10:30"): the character after it must be one a face goes on with.
_STANDALONE_ANY: Final = re.compile(r"[:;=]-?[)\]D'(\[pP/]|\(-?[:;=]|[xX]D|D:|\^|¯|_\|￣\|○")
#: Every match of :data:`_SARCASM` holds one of these, case folded (only the dotless ı matches an
#: i without folding to one, and none of these needs an i).
_SARCASM_NEEDS: Final = ("棒", "皮肉", "/s", "sarcasm", "yeah", "sure")
#: ASCII text matches :data:`_LAUGH_JA` only with a w at the start or after one of these.
_LAUGH_AFTER_ASCII: Final = ("!w", "?w", "~w", ")w")


_EMOJI_PATTERNS: dict[int, tuple[dict[str, Entry], re.Pattern[str]]] = {}


def _emoji_pattern(table: dict[str, Entry]) -> re.Pattern[str]:
    """One character of ``table`` (from U+2190 on, the only ones looked up)."""
    found = _EMOJI_PATTERNS.get(id(table))
    if found is None or found[0] is not table:
        chars = sorted(c for c in table if len(c) == 1 and ord(c) >= 0x2190)
        pattern = re.compile("[" + "".join(re.escape(c) for c in chars) + "]" if chars else "(?!)")
        _EMOJI_PATTERNS.clear()
        found = _EMOJI_PATTERNS[id(table)] = (table, pattern)
    return found[1]


def has_sarcasm_marker(text: str) -> bool:
    """(棒), (皮肉), /s, #sarcasm, "yeah right": the speaker means the opposite of the kind words
    used."""
    folded = text.casefold()
    if not any(cue in folded for cue in _SARCASM_NEEDS):
        return False
    return _SARCASM.search(text) is not None


def _may_laugh_ja(text: str) -> bool:
    """False only when :data:`_LAUGH_JA` cannot match ``text``."""
    if not text.isascii():
        return "笑" in text or "草" in text or "w" in text or "ｗ" in text
    return text.startswith("w") or any(cue in text for cue in _LAUGH_AFTER_ASCII)


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
    after_last = 0
    for found in _emoji_pattern(table).finditer(text) if not text.isascii() else ():
        i = found.start()
        ch = found.group()
        entry: Entry = table[ch]
        if last_emoji and _HIGH.search(text, after_last, i) is not None:
            last_emoji = ""  # a symbol or letter from U+2190 on that is no emoji came between
        # A repeated emoji (😭😭😭) adds arousal, not three times the valence.
        repeat = repeat + 1 if ch == last_emoji else 0
        last_emoji = ch
        after_last = i + 1
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
    folded = text.casefold()
    standalone = _STANDALONE_CUES
    if _STANDALONE_ANY.search(text) is None and "orz" not in folded and "otl" not in folded:
        standalone = ()  # none of the patterns below can match
    for (pattern, score, arousal, tags), needs, ignore_case in standalone:
        if ignore_case:
            if not any(cue in folded for cue in needs):
                continue
        elif not any(cue in text for cue in needs):
            continue
        for m in pattern.finditer(text):
            if any(a <= m.start() < b for a, b in taken):
                continue
            hits.append(_hit(m.group(), m.start(), m.end(), score, arousal, tags))
            taken.append((m.start(), m.end()))
    for m in _LAUGH_JA.finditer(text) if _may_laugh_ja(text) else ():
        if any(a <= m.start() < b for a, b in taken):
            continue
        strength = 1.0 + min(len(m.group()) - 1, 3) * 0.2
        hits.append(_hit(m.group(), m.start(), m.end(), 0.9 * strength, 1, ("joy",)))
    return hits


#: Laughter in any form: with it, "I'm crying", "I'm dead", "screaming" mean laughing hard.
_LAUGHTER: Final = frozenset({"😂", "🤣", "😹", "lol", "lmao", "lmfao", "rofl", "haha", "hahaha"})
_HYPERBOLE: Final = frozenset({"crying", "cry", "dead", "dying", "die", "scream", "screaming"})
_HYPERBOLE_SCORE: Final = 1.5


def laughing_tears(raw: list[RawHit]) -> list[RawHit]:
    """ "I'm crying at this 😂": tears, death and screams next to laughter are laughter too."""
    if not any(r.hit.term in _LAUGHTER for r in raw):
        return raw
    out = []
    for r in raw:
        if r.hit.term in _HYPERBOLE and r.hit.score < 0 and not r.hit.negated:
            r = replace(r, hit=replace(r.hit, score=_HYPERBOLE_SCORE, tags=("joy",)))
        out.append(r)
    return out


def ironic_expressions(raw: list[RawHit]) -> list[RawHit]:
    """In an ironic text, celebrating emoji and laughter go with the irony ("Yay me 🎉")."""
    markers = {r.hit.term for r in raw} & {IRONY, IRONY_AT_SELF}
    if not markers:
        return raw
    tags = _SELF_IRONIC_TAGS if IRONY_AT_SELF in markers else _IRONIC_TAGS
    out = []
    for r in raw:
        if r.expressive and r.hit.score > 0:
            turned = replace(r.hit, score=_IRONIC_SCORE * 0.6 * r.hit.score, tags=tags)
            r = replace(r, hit=turned)
        out.append(r)
    return out
