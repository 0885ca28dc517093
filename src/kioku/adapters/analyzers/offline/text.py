"""Text preparation shared by every part of the offline analyzer.

Two views of a turn are used: the *clean* text (control characters and replacement characters
removed, length capped) that trigger and content are cut from, and the *normalised* text (NFKC,
lower case, katakana folded to hiragana) that lexicons are matched against. Folding maps one
character to one character, so offsets found in the normalised text are valid in the NFKC text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = [
    "MAX_ANALYSED_CHARS",
    "clean",
    "first_sentence",
    "fold",
    "garbage_share",
    "is_japanese_char",
    "nfkc",
    "split_sentences",
]

#: Only this many characters of a turn are analysed, so time stays bounded on huge input.
MAX_ANALYSED_CHARS: Final = 20_000

_CONTROL: Final = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ufeff\u200b-\u200d\u2028\u2029]"
)
_SPACES: Final = re.compile(r"[ \t\u3000]+")
_NEWLINES: Final = re.compile(r"\n\s*\n+")
_SURROGATE: Final = re.compile(r"[\ud800-\udfff]")

# Katakana → hiragana (ァ..ヶ → ぁ..ゖ); ー and ・ stay.
_KATA_TO_HIRA: Final = {cp: cp - 0x60 for cp in range(0x30A1, 0x30F7)}


def clean(text: str, limit: int | None = None) -> str:
    """Drop control, replacement and lone surrogate characters; tidy spaces; optionally cap."""
    if limit is not None and len(text) > limit:
        text = text[:limit]
        space = text.rfind(" ", limit - 40)
        if space > 0:
            text = text[:space]  # do not cut a word in half
    if text.isascii() and text.isprintable() and "  " not in text:
        return text.strip()  # no control character, line break, tab or run of spaces to tidy
    if not text.isascii():  # surrogates are not ASCII
        text = _SURROGATE.sub("", text)
    text = _CONTROL.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _SPACES.sub(" ", text)
    text = _NEWLINES.sub("\n\n", text)
    return text.strip()


_BROKEN: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffd\ud800-\udfff]")


def garbage_share(text: str) -> float:
    """Share of control, replacement and surrogate characters (binary or mis-decoded input)."""
    sample = text[:4000]
    if not sample:
        return 0.0
    if sample.isascii() and sample.isprintable():
        return 0.0  # printable ASCII has no control character
    return len(_BROKEN.findall(sample)) / len(sample)


def nfkc(text: str) -> str:
    """NFKC with the full-width wave dash kept as a plain tilde and 「…」 as three dots."""
    if text.isascii():
        return text  # NFKC leaves ASCII as it is, and it has no wave dash
    return unicodedata.normalize("NFKC", text.replace("〜", "~"))


def fold(text: str) -> str:
    """Lower case and katakana folded to hiragana; one character in, one character out."""
    if text.isascii():
        return text.lower()  # no katakana to fold
    return text.lower().translate(_KATA_TO_HIRA)


def is_japanese_char(ch: str) -> bool:
    o = ord(ch)
    return (
        0x3040 <= o <= 0x30FF
        or 0x4E00 <= o <= 0x9FFF
        or 0x3400 <= o <= 0x4DBF
        or o in (0x3005, 0x3006)
    )


_SENTENCE_END: Final = re.compile(
    r"(?<=[。！？!?\n])(?![。！？!?」』）)\"'])|(?<=[.])\s+(?=[A-Z0-9\"'(「\u3040-\u9fff])|(?<=[.])(?=[^\x00-\x7f])"
)


def split_sentences(text: str) -> list[str]:
    """Split on Japanese and English sentence ends; keeps the punctuation; drops blank pieces."""
    pieces = _SENTENCE_END.split(text)
    return [p.strip() for p in pieces if p and p.strip()]


def first_sentence(text: str) -> str | None:
    """``split_sentences(text)[0]`` (None when there is none), without splitting the rest."""
    last = 0
    for m in _SENTENCE_END.finditer(text):
        piece = text[last : m.start()].strip()
        if piece:
            return piece
        last = m.end()
    return text[last:].strip() or None
