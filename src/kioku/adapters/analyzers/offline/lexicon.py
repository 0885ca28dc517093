"""Loading the lexicons shipped in ``data/``: emotion words, degree words, emoji, topic cues.

Each file is read once per process (on first use) and turned into lookup tables. Japanese
entries are expanded into the surface stems they appear as (嬉しい → 嬉し, 落ち込む → 落ち込ま,
落ち込み, 落ち込ん, …) so matching needs no dictionary; each stem remembers how negation attaches
to it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Final

from kioku.core.model import ALL_TAGS

from .text import fold, nfkc

__all__ = [
    "EnLexicon",
    "Entry",
    "JaLexicon",
    "emoji_table",
    "en_lexicon",
    "ja_lexicon",
    "read_data",
]


@dataclass(frozen=True, slots=True)
class Entry:
    """One emotion word: polarity/strength, arousal hint, tags and usage flags."""

    term: str
    score: float
    arousal: int
    tags: tuple[str, ...]
    #: Can be a mere topic (失敗, error): damped in requests and technical text.
    topical: bool = False
    #: An interjection (lol, wow, thanks): never negated by an earlier "not".
    interjection: bool = False


def read_data(name: str) -> list[list[str]]:
    """Rows of a tab-separated data file, without comments and blank lines."""
    text = resources.files(__package__).joinpath("data").joinpath(name).read_text(encoding="utf-8")
    rows: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        rows.append(line.rstrip("\n").split("\t"))
    return rows


def read_words(name: str) -> frozenset[str]:
    """Whitespace-separated words of a data file, without comment lines."""
    words: set[str] = set()
    for row in read_data(name):
        for cell in row:
            words.update(cell.split())
    return frozenset(words)


def _tags(cell: str) -> tuple[str, ...]:
    if cell in ("", "-"):
        return ()
    tags = tuple(t.strip() for t in cell.split(","))
    unknown = [t for t in tags if t not in ALL_TAGS]
    if unknown:
        raise ValueError(f"unknown emotion tags in lexicon: {unknown}")
    return tags


def _entry(term: str, score: str, arousal: str, tags: str, flags: str) -> Entry:
    return Entry(
        term,
        float(score),
        int(arousal),
        _tags(tags),
        topical="t" in flags,
        interjection="i" in flags,
    )


# Godan verb endings: (negative stem, 連用形, 仮定/可能 stem, te/ta onbin stem).
_GODAN: Final = {
    "う": ("わ", "い", "え", "っ"),
    "く": ("か", "き", "け", "い"),
    "ぐ": ("が", "ぎ", "げ", "い"),
    "す": ("さ", "し", "せ", "し"),
    "つ": ("た", "ち", "て", "っ"),
    "ぬ": ("な", "に", "ね", "ん"),
    "ぶ": ("ば", "び", "べ", "ん"),
    "む": ("ま", "み", "め", "ん"),
    "る": ("ら", "り", "れ", "っ"),
}

#: How negation attaches to a Japanese stem (see :mod:`negation_ja`).
JA_FORMS: Final = ("adj", "na", "v1", "v5a", "v5i", "v5e", "v5te", "plain")


@dataclass(frozen=True, slots=True)
class JaLexicon:
    """Japanese stems → (entry, form). Keys are normalised (NFKC, folded)."""

    words: dict[str, tuple[Entry, str]]
    modifiers: dict[str, float]
    max_len: int
    max_modifier_len: int


def _ja_forms(term: str, pos: str) -> list[tuple[str, str]]:
    if pos == "adj" and term.endswith("い") and len(term) >= 2:
        return [(term[:-1], "adj")]
    if pos == "v1" and term.endswith("る") and len(term) >= 2:
        return [(term[:-1], "v1")]
    if pos == "v5" and term[-1] in _GODAN:
        stem = term[:-1]
        neg, cont, cond, onbin = _GODAN[term[-1]]
        if term.endswith(("行く", "いく")):
            onbin = "っ"
        return [
            (stem + neg, "v5a"),
            (stem + cont, "v5i"),
            (term, "plain"),
            (stem + cond, "v5e"),
            (stem + onbin, "v5te"),
        ]
    if pos == "na":
        return [(term, "na")]
    return [(term, "plain")]


@functools.cache
def ja_lexicon() -> JaLexicon:
    words: dict[str, tuple[Entry, str]] = {}
    for row in read_data("emotion_ja.tsv"):
        term, pos, score, arousal, tags, flags = (row + [""] * 6)[:6]
        entry = _entry(term, score, arousal, tags, flags)
        for form, kind in _ja_forms(fold(nfkc(term)), pos):
            if len(form) < 1:
                continue
            old = words.get(form)
            # Between two entries for one stem, the dictionary form of a word wins over a stem.
            if old is None or (old[1] != "plain" and kind == "plain"):
                words[form] = (entry, kind)
    modifiers = {fold(nfkc(r[0])): float(r[1]) for r in read_data("modifiers_ja.tsv")}
    return JaLexicon(
        words=words,
        modifiers=modifiers,
        max_len=max(map(len, words)),
        max_modifier_len=max(map(len, modifiers)),
    )


@dataclass(frozen=True, slots=True)
class EnLexicon:
    """English words and phrases (phrases as tuples of tokens) → entry."""

    words: dict[str, Entry]
    phrases: dict[tuple[str, ...], Entry]
    modifiers: dict[tuple[str, ...], float]
    negators: frozenset[str]
    max_phrase: int
    #: First word of every phrase or multi-word modifier → the lengths starting with it.
    phrase_starts: dict[str, tuple[int, ...]]


@functools.cache
def en_lexicon() -> EnLexicon:
    words: dict[str, Entry] = {}
    phrases: dict[tuple[str, ...], Entry] = {}
    for row in read_data("emotion_en.tsv"):
        term, score, arousal, tags, flags = (row + [""] * 5)[:5]
        entry = _entry(term.lower(), score, arousal, tags, flags)
        parts = tuple(entry.term.split())
        if len(parts) == 1:
            words[parts[0]] = entry
        else:
            phrases[parts] = entry
    modifiers = {tuple(r[0].lower().split()): float(r[1]) for r in read_data("modifiers_en.tsv")}
    return EnLexicon(
        words=words,
        phrases=phrases,
        modifiers=modifiers,
        negators=read_words("negators_en.txt"),
        max_phrase=max(len(p) for p in [*phrases, *modifiers]),
        phrase_starts=phrase_index([*phrases, *modifiers]),
    )


def phrase_index(phrases: list[tuple[str, ...]]) -> dict[str, tuple[int, ...]]:
    """First word → the lengths of the phrases that start with it, longest first."""
    lengths: dict[str, set[int]] = {}
    for phrase in phrases:
        if len(phrase) > 1:
            lengths.setdefault(phrase[0], set()).add(len(phrase))
    return {word: tuple(sorted(ls, reverse=True)) for word, ls in lengths.items()}


@functools.cache
def emoji_table() -> dict[str, Entry]:
    table: dict[str, Entry] = {}
    for row in read_data("emoji.tsv"):
        symbol, score, arousal, tags = (row + [""] * 4)[:4]
        table[symbol] = _entry(symbol, score, arousal, tags, "")
    return table
