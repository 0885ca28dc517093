"""Keywords: the names, terms and topics a memory can be found by.

Japanese uses morphology: runs of nouns are joined into compounds (記憶+システム → 記憶システム,
リスト+内包+表記 → リスト内包表記), Latin technical terms (``MongoDB``, ``SQL``) stand on their own,
and general nouns (こと, 今日) are skipped. English uses a stopword list and phrase scoring:
capitalised names, technical tokens and runs of content words. Proper nouns and technical terms
rank first, as the spec's compression prompt asks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from .lexicon import en_lexicon, read_words
from .tokenize_en import Word, tokenize_en
from .tokenize_ja import AFFIX, NOUN, NUM, PROPN, Segmenter, Token

__all__ = ["Candidate", "english_stopwords", "keywords_en", "keywords_ja", "rank_keywords"]

_TECH: Final = re.compile(
    r"^(?:[A-Za-z]+[0-9][A-Za-z0-9]*|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}[a-z0-9]*s?"
    r"|\w+(?:\.\w+)+|\w+[+#]+|\w+-\w+|[A-Za-z0-9]+_\w+)$"
)
_KATAKANA: Final = re.compile(r"[\u30a1-\u30fa]")
_ONLY_KANA: Final = re.compile(r"^[\u3040-\u309f\u30fc]+$")
# Dates and units are weak keywords even when capitalised (Tuesday, March, MB).
_TEMPORAL: Final = frozenset(
    {
        *("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
        *("january", "february", "march", "april", "may", "june", "july", "august"),
        *("september", "october", "november", "december", "week", "weeks", "month", "months"),
        *("year", "years", "day", "days", "hour", "hours", "minute", "minutes"),
        *("kb", "mb", "gb", "tb", "ms", "km", "kg"),
    }
)
_NOUNISH_SUFFIX: Final = ("tion", "sion", "ment", "ness", "ity", "ance", "ence", "ship", "ism")


@functools.cache
def english_stopwords() -> frozenset[str]:
    return read_words("stopwords_en.txt")


@functools.cache
def _ja_stop_nouns() -> frozenset[str]:
    return read_words("stopnouns_ja.txt")


@dataclass(slots=True)
class Candidate:
    """A keyword candidate and its score."""

    text: str
    score: float
    first: int
    count: int = 1
    parts: list[str] = field(default_factory=list)


_MAX_KEYWORD: Final = 40


def _add(cands: dict[str, Candidate], text: str, score: float, pos: int) -> None:
    if len(text) > _MAX_KEYWORD:
        return
    key = text.lower()
    found = cands.get(key)
    if found is None:
        cands[key] = Candidate(text, score, pos)
    else:
        found.count += 1
        found.score = max(found.score, score)


def is_technical(word: str) -> bool:
    return bool(_TECH.match(word))


def _ja_score(parts: list[Token]) -> float:
    text = "".join(t.surface for t in parts)
    score = 1.0
    if any(t.pos == PROPN for t in parts):
        score += 1.5
    if text.isascii():
        score += 1.6 if (is_technical(text) or text[:1].isupper()) else 0.6
    elif _KATAKANA.search(text):
        score += 0.8
    if len(parts) >= 2:
        score += 0.5
    if len(parts) == 1 and parts[0].detail == "sahen":
        score -= 0.4
    if len(parts) == 1 and parts[0].detail == "adverbial":
        score -= 0.8
    if len(text) >= 3:
        score += 0.2
    return score


def keywords_ja(
    text: str, segmenter: Segmenter, tokens: Iterable[Token] | None = None
) -> dict[str, Candidate]:
    """Candidate keywords of Japanese text (Latin words in it included).

    ``tokens`` are the segmenter's tokens of ``text`` when the caller already has them.
    """
    stop = _ja_stop_nouns()
    cands: dict[str, Candidate] = {}
    run: list[Token] = []

    def close() -> None:
        while run and (run[-1].pos == AFFIX and run[-1].detail != "noun_suffix"):
            run.pop()
        while run and run[0].pos == AFFIX and run[0].detail != "prefix":
            run.pop(0)
        if run and not all(t.pos == AFFIX for t in run):
            word = "".join(t.surface for t in run)
            if (
                word not in stop
                and not word.isdigit()
                and not (len(word) == 1 and not _is_kanji(word))
                and not _ONLY_KANA.match(word)
                and len(word) <= 30
            ):
                _add(cands, word, _ja_score(run), run[0].start)
        run.clear()

    for tok in tokens if tokens is not None else segmenter(text):
        joinable = tok.pos in (NOUN, PROPN, NUM) or (tok.pos == AFFIX and tok.detail != "suffix")
        if joinable and run:
            prev = run[-1]
            latin_switch = prev.surface.isascii() != tok.surface.isascii()
            if tok.start != prev.end or latin_switch or tok.pos == NUM or prev.pos == NUM:
                close()
        if (joinable and tok.surface not in stop) or (joinable and run):
            run.append(tok)
        elif run:
            close()
    close()
    return cands


def _is_kanji(word: str) -> bool:
    return all(0x4E00 <= ord(c) <= 0x9FFF for c in word)


#: :func:`_en_word_score` by (text, low, sentence start); cleared when it grows past the limit.
_WORD_SCORES: dict[tuple[str, str, bool], float] = {}
_WORD_SCORES_LIMIT: Final = 50_000


def _word_score(w: Word, sentence_start: bool, stop: frozenset[str]) -> float:
    key = (w.text, w.low, sentence_start)
    found = _WORD_SCORES.get(key)
    if found is None:
        if len(_WORD_SCORES) >= _WORD_SCORES_LIMIT:
            _WORD_SCORES.clear()
        found = _WORD_SCORES[key] = _en_word_score(w, sentence_start, stop)
    return found


def _en_word_score(w: Word, sentence_start: bool, stop: frozenset[str]) -> float:
    score = 1.0
    if is_technical(w.text):
        score += 2.0
    elif w.text[:1].isupper() and not sentence_start:
        score += 1.5
    if w.low.endswith(_NOUNISH_SUFFIX):
        score += 0.3
    if w.low.endswith(("ing", "ed", "ly")) and not w.text[:1].isupper():
        score -= 0.4
    if w.low in en_lexicon().words:
        score -= 0.3
    if len(w.low) <= 2 and not is_technical(w.text):
        score -= 0.6
    if w.low in _TEMPORAL:
        score -= 1.5
    return score


# How keywords_en treats a token, by its ``low``.
_STOP_WORD: Final = 0  # a stopword or "<3": ends a run
_NOT_WORD: Final = 1  # punctuation or a number: ends a run
_TOO_SHORT: Final = 2  # one letter or all digits: ends a run, not a sentence start
_CONTENT: Final = 3
_KINDS: dict[str, int] = {}
_SENTENCE_ENDS: Final = (".", "!", "?", "...", "…")


def _kind(low: str, stop: frozenset[str]) -> int:
    found = _KINDS.get(low)
    if found is None:
        if len(_KINDS) >= _WORD_SCORES_LIMIT:
            _KINDS.clear()
        is_word = low[0].isalpha() or low == "<3"
        if not is_word:
            found = _NOT_WORD
        elif low in stop or low.replace("'", "") in stop or low == "<3":
            found = _STOP_WORD
        elif len(low) < 2 or low.isdigit():
            found = _TOO_SHORT
        else:
            found = _CONTENT
        _KINDS[low] = found
    return found


def keywords_en(text: str, words: list[Word] | None = None) -> dict[str, Candidate]:
    """Candidate keywords of English text: names, technical tokens and content-word runs."""
    stop = english_stopwords()
    toks = words if words is not None else tokenize_en(text)
    cands: dict[str, Candidate] = {}
    run: list[tuple[Word, float]] = []
    sentence_start = True

    def close() -> None:
        if len(run) <= 3 and len(run) > 1:
            phrase = " ".join(w.text for w, _ in run)
            score = sum(s for _, s in run) / len(run) + 0.4 * (len(run) - 1)
            _add(cands, phrase, score, run[0][0].start)
        for w, s in run:
            _add(cands, w.text, s, w.start)
        run.clear()

    kinds = _KINDS
    scores = _WORD_SCORES
    for w in toks:
        kind = kinds.get(w.low)
        if kind is None:
            kind = _kind(w.low, stop)
        if kind == _CONTENT:
            score = scores.get((w.text, w.low, sentence_start))
            if score is None:
                score = _word_score(w, sentence_start, stop)
            run.append((w, score))
            sentence_start = False
            continue
        if run:
            close()
        if kind == _TOO_SHORT:
            sentence_start = False
        else:
            sentence_start = w.low in _SENTENCE_ENDS or (sentence_start and kind == _NOT_WORD)
    if run:
        close()
    return cands


def rank_keywords(cands: Iterable[Candidate], limit: int) -> list[str]:
    """Best first: score plus a bonus for repetition, ties by first appearance."""
    ranked = sorted(cands, key=lambda c: (-(c.score + 0.4 * min(c.count - 1, 3)), c.first))
    out: list[str] = []
    seen: list[str] = []
    for cand in ranked:
        low = cand.text.lower()
        for s in seen:
            if low in s or s in low:
                break  # overlaps a keyword already taken
        else:
            seen.append(low)
            out.append(cand.text)
            if len(out) >= limit:
                break
    return out
