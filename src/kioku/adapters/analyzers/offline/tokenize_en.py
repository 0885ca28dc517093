"""English (and other Latin-script) word tokens with offsets, plus a light stemmer."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

__all__ = ["Word", "stem_candidates", "tokenize_en"]

_WORD: Final = re.compile(
    r"<3|[A-Za-z\u00c0-\u024f][A-Za-z\u00c0-\u024f0-9_]*(?:\*+[A-Za-z]+)?(?:['’][A-Za-z]+)*"
    r"(?:[-.+#][A-Za-z0-9]+)*[+#]*|\d+(?:[.,:]\d+)*%?|[!?]+|[.…]{2,}|[.,;:()\"]"
)


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which made
# building a turn's words several times as dear; Words are never changed after they are made,
# and hash and compare by their fields as a frozen one does.
@dataclass(slots=True, unsafe_hash=True)
class Word:
    """A token: ``text`` as written, ``low`` lower-cased with plain apostrophes."""

    text: str
    low: str
    start: int

    @property
    def is_word(self) -> bool:
        return self.low[0].isalpha() or self.low == "<3"

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def tokenize_en(text: str) -> list[Word]:
    """Words, numbers and punctuation of Latin-script text, with offsets into ``text``."""
    if "’" in text:
        return [
            Word(g := m.group(), g.lower().replace("’", "'"), m.start())
            for m in _WORD.finditer(text)
        ]
    return [Word(g := m.group(), g.lower(), m.start()) for m in _WORD.finditer(text)]


_REPEAT3: Final = re.compile(r"(.)\1{2,}")
_LAUGH: Final = re.compile(
    r"^(?:a?h[ae]){2,}h?$|^(?:ja){2,}$|^lo+l[sz]?$|^lmf?a+o+$|^ro+fl$|^ke{2,}$"
)
# Censored swearing (f*ck, sh*t): the letters before the stars tell the word.
_CENSORED: Final = (("mf", "fuck"), ("f", "fuck"), ("sh", "shit"), ("b", "bitch"), ("d", "damn"))
_REPEAT2: Final = re.compile(r"(.)\1+")


#: Nouns that only look like comparatives of a listed word (career is no "more care").
_NOT_COMPARATIVE: Final = frozenset(
    {"career", "careers", "stranger", "strangers", "sweater", "number", "numbers"}
)


def stem_candidates(word: str) -> Iterator[str]:
    """The word, then spellings it may be an inflection or elongation of (happ*ier* aside)."""
    yield word
    if word in _NOT_COMPARATIVE:
        return
    if _LAUGH.match(word):
        yield "haha"
        return
    if "*" in word:
        for prefix, full in _CENSORED:
            if word.startswith(prefix):
                yield full
                return
        return
    if "'" in word:
        if word.endswith("'s"):
            yield word[:-2]
        yield word.replace("'", "")
    squeezed = _REPEAT3.sub(r"\1\1", word)
    if squeezed != word:
        yield squeezed
        yield _REPEAT2.sub(r"\1", word)
        word = squeezed
    n = len(word)
    if n > 4 and word.endswith("ies"):
        yield word[:-3] + "y"
    if n > 4 and word.endswith("ied"):
        yield word[:-3] + "y"
    if n > 3 and word.endswith("es"):
        yield word[:-2]
    if n > 3 and word.endswith("s") and not word.endswith("ss"):
        yield word[:-1]
    if n > 4 and word.endswith("ed"):
        yield word[:-1]
        yield word[:-2]
        if word[-3] == word[-4]:
            yield word[:-3]
    if n > 5 and word.endswith("ing"):
        yield word[:-3]
        yield word[:-3] + "e"
        if word[-4] == word[-5]:
            yield word[:-4]
    if n > 5 and word.endswith("ily"):
        yield word[:-3] + "y"
    if n > 4 and word.endswith("ly"):
        yield word[:-2]
    if n > 5 and word.endswith("ness"):
        yield word[:-4]
    # Comparatives and superlatives: happier, saddest, nicer.
    if n > 5 and word.endswith(("iest", "ier")):
        yield word[: -4 if word.endswith("iest") else -3] + "y"
    if n > 4 and word.endswith(("est", "er")):
        base = word[: -3 if word.endswith("est") else -2]
        yield base
        yield base + "e"
        if len(base) > 2 and base[-1] == base[-2]:
            yield base[:-1]
