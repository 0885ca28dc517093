"""Which language a text is written in, by counting scripts.

Pure and fast: no dictionary, no model. Japanese is recognised by kana and kanji, English by
Latin letters. Latin technical terms inside Japanese (``MongoDBにしたら``) do not make a text
mixed, because one Japanese character carries about as much as a short Latin word.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["Language", "detect_language", "script_counts"]

Language = Literal["ja", "en", "mixed", "other"]

#: Only this many characters are looked at; the start of a text decides its language.
_SCAN_LIMIT: Final = 4000
#: Latin letters are weighed by this factor against Japanese characters.
_LATIN_WEIGHT: Final = 0.5
#: Kanji-only text longer than this is more likely Chinese than Japanese.
_KANJI_ONLY_LIMIT: Final = 24

#: ASCII letters, and the ASCII characters that are neither letters nor symbols (space and
#: control characters), for :func:`script_counts`.
_ASCII_LETTERS: Final = bytes(range(0x41, 0x5B)) + bytes(range(0x61, 0x7B))
_ASCII_BLANKS: Final = bytes(range(0x21))


def script_counts(text: str) -> tuple[int, int, int, int, int]:
    """Count (kana, kanji, latin letters, letters of other scripts, symbols) in ``text``'s start.

    Symbols are visible characters that are not letters: punctuation, digits, emoji, garbage.
    """
    sample = text[:_SCAN_LIMIT]
    if sample.isascii():
        # What the loop below counts in ASCII, counted in C: letters, then the visible
        # characters that are none.
        data = sample.encode("ascii")
        rest = data.translate(None, _ASCII_LETTERS)
        return 0, 0, len(data) - len(rest), 0, len(rest.translate(None, _ASCII_BLANKS))
    kana = kanji = latin = other = symbols = 0
    for ch in sample:
        o = ord(ch)
        if o < 0x80:
            if 0x61 <= (o | 0x20) <= 0x7A:
                latin += 1
            elif o > 0x20:
                symbols += 1
        elif 0x3040 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9D:
            if o not in (0x30FB, 0x30FC):  # ・ and ー belong to both kana scripts
                kana += 1
        elif 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or o in (0x3005, 0x3006):
            kanji += 1
        elif 0xFF21 <= o <= 0xFF3A or 0xFF41 <= o <= 0xFF5A:
            kana += 1  # full-width letters are typed with a Japanese input method (ｗｗｗ)
        elif 0xC0 <= o <= 0x24F:
            if o not in (0xD7, 0xF7):
                latin += 1
        elif ch.isalpha():
            other += 1
        elif not ch.isspace():
            symbols += 1
    return kana, kanji, latin, other, symbols


def detect_language(text: str) -> Language:
    """``ja``, ``en``, ``mixed`` or ``other`` (neither script, or nothing meaningful)."""
    kana, kanji, latin, other, symbols = script_counts(text)
    japanese = kana + kanji
    if japanese == 0 and latin == 0:
        return "other"
    if symbols > 3 * (japanese + latin) and symbols >= 12:
        return "other"  # mostly noise: binary garbage, long symbol runs
    if other > (japanese + latin) * 2:
        return "other"
    if japanese and not kana and kanji > _KANJI_ONLY_LIMIT and latin == 0:
        return "other"
    if japanese == 0:
        return "en" if latin >= 2 or other == 0 else "other"
    latin_share = latin * _LATIN_WEIGHT / (latin * _LATIN_WEIGHT + japanese)
    if latin_share < 0.4:
        return "ja"
    if latin_share > 0.85:
        return "en"
    return "mixed"
