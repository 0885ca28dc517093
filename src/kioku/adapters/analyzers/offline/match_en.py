"""Finding English emotion words and phrases, with negation and degree words.

Phrases are matched before single words (``let down``, ``can't wait``, ``fed up``); single words
also match their inflections (``loved``, ``annoying``) and elongations (``sooo``, ``happyyy``).
A negator up to three words earlier in the same clause (``not``, ``never``, ``don't``) flips a
word: a negated positive becomes negative, a negated negative becomes mildly positive
(``isn't bad``). Degree words (``very``, ``a bit``) scale the next emotion word.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .hits import Hit
from .lexicon import EnLexicon, Entry
from .match_ja import RawHit
from .tokenize_en import Word, stem_candidates

__all__ = ["match_english"]

_NEG_REACH: Final = 4
_DEGREE_REACH: Final = 3
_CLAUSE_BREAK: Final = frozenset(
    {".", ",", ";", ":", "!", "?", "but", "however", "though", "although", "and", "or", "because"}
)
_SUBJECTS: Final = frozenset(
    {"i", "we", "you", "they", "he", "she", "people", "everyone", "who", "i'd", "we'd", "u"}
)
_BETWEEN_SUBJECT: Final = frozenset(
    {
        "really",
        "do",
        "does",
        "did",
        "don't",
        "didn't",
        "doesn't",
        "also",
        "just",
        "totally",
        "would",
        "kinda",
        "actually",
        "still",
        "always",
        "never",
        "dont",
        "didnt",
        "not",
        "will",
        "won't",
        "should",
        "so",
        "quite",
        "sure",
        "definitely",
        "absolutely",
        "honestly",
        "genuinely",
    }
)
#: Words that only express a feeling when a person is the subject ("I like", not "looks like").
_NEEDS_SUBJECT: Final = frozenset({"like", "likes", "liked", "miss", "missed", "care", "wish"})
_NOT_NEGATING_NEXT: Final = frozenset({"only", "doubt", "wonder", "matter"})
_HYPOTHETICAL: Final = frozenset({"if", "unless", "whether"})


def _lookup(lex: EnLexicon, word: str, stop: frozenset[str]) -> Entry | None:
    entry = lex.words.get(word)
    if entry is not None or word in stop:
        return entry
    for cand in stem_candidates(word):
        entry = lex.words.get(cand)
        if entry is not None:
            return entry
    return None


def _has_subject(words: list[Word], i: int) -> bool:
    j = i - 1
    while j >= 0 and i - j <= 4:
        low = words[j].low
        if low in _SUBJECTS:
            return True
        if low not in _BETWEEN_SUBJECT:
            return False
        j -= 1
    return False


def _negated(words: list[Word], i: int, lex: EnLexicon) -> bool:
    # "never been this happy", "never felt so alone": an intensifier, not a negation.
    window = {w.low for w in words[max(0, i - 3) : i]}
    if "never" in window and window & {"this", "so", "more", "as"}:
        return False
    j = i - 1
    while j >= 0 and i - j <= _NEG_REACH:
        low = words[j].low
        if low in _CLAUSE_BREAK:
            return False
        if (low in lex.negators or low.endswith("n't")) and (
            j + 1 >= len(words) or words[j + 1].low not in _NOT_NEGATING_NEXT
        ):
            return True
        j -= 1
    return False


def _hypothetical(words: list[Word], i: int) -> bool:
    j = i - 1
    while j >= 0 and i - j <= 6:
        low = words[j].low
        if low in (".", ";", "!", "?", "but"):
            return False
        if low in _HYPOTHETICAL:
            return True
        j -= 1
    return False


def _phrase(
    words: list[Word],
    i: int,
    table: Mapping[tuple[str, ...], object],
    starts: dict[str, tuple[int, ...]],
) -> int:
    lengths = starts.get(words[i].low)
    if lengths is None:
        return 0
    n = len(words)
    for length in lengths:
        if i + length <= n and tuple(w.low for w in words[i : i + length]) in table:
            return length
    return 0


def match_english(words: list[Word], lex: EnLexicon, stop: frozenset[str]) -> list[RawHit]:
    """Emotion hits over English tokens; ``stop`` are words never stemmed into a lexicon word."""
    hits: list[RawHit] = []
    degree = 1.0
    degree_until = -1
    # A degree word that is also an emotion word ("damn", "fucking") counts as one when nothing
    # follows for it to modify.
    orphan: tuple[int, Entry] | None = None
    i = 0
    n = len(words)

    def flush_orphan() -> None:
        nonlocal orphan
        if orphan is not None:
            at, entry = orphan
            hit = Hit(entry.term, words[at].start, entry.score, entry.arousal, entry.tags)
            hits.append(RawHit(hit, words[at].end, entry.topical, False))
            orphan = None

    while i < n:
        w = words[i]
        if orphan is not None and i > degree_until:
            flush_orphan()
        if not w.is_word:
            if w.low in _CLAUSE_BREAK:
                degree, degree_until = 1.0, -1
                flush_orphan()
            i += 1
            continue
        lex_len = _phrase(words, i, lex.phrases, lex.phrase_starts)
        mod_len = _phrase(words, i, lex.modifiers, lex.phrase_starts)
        if not mod_len and (w.low,) in lex.modifiers:
            mod_len = 1
        entry: Entry | None = None
        if lex_len:
            entry = lex.phrases[tuple(x.low for x in words[i : i + lex_len])]
        if mod_len > lex_len:
            key = tuple(x.low for x in words[i : i + mod_len])
            factor = lex.modifiers[key]
            degree = degree * factor if i <= degree_until else factor
            degree_until = i + mod_len + _DEGREE_REACH - 1
            own = lex.words.get(key[0]) if mod_len == 1 else None
            if own is not None and own.score < 0:
                flush_orphan()
                orphan = (i, own)
            i += mod_len
            continue
        if entry is None:
            entry = _lookup(lex, w.low, stop)
            lex_len = 1
            if entry is not None and w.low in _NEEDS_SUBJECT and not _has_subject(words, i):
                entry = None
        if entry is None:
            i += 1
            continue
        applied = degree if i <= degree_until else 1.0
        degree, degree_until = 1.0, -1
        orphan = None
        negated = not entry.interjection and _negated(words, i, lex)
        if negated and applied > 1.0:
            applied = 1.0 / applied  # "not very good" is only mildly bad
        score = entry.score * applied
        tags = entry.tags
        if negated:
            if score > 0:
                score, tags = -0.75 * score, ("sadness",)
            else:
                score, tags = -0.35 * score, ()
        hit = Hit(entry.term, w.start, score, entry.arousal, tags, negated, applied)
        end = words[i + lex_len - 1].end
        hits.append(RawHit(hit, end, entry.topical, _hypothetical(words, i)))
        i += lex_len
    flush_orphan()
    return hits
