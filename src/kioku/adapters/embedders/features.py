"""Text to weighted features for the offline hashed embedder (and for lexical baselines).

Three feature groups, each a ``{feature: count}`` mapping:

* ``words`` — content words. English (and other alphabetic scripts): case-folded words with a light
  stemmer, a fixed stopword list removed. Japanese: UniDic lemmas of content words (nouns, verbs,
  adjectives, adverbs) from fugashi, so きのう and 昨日, 行った and 行く meet; without fugashi,
  kanji and katakana runs stand in.
* ``bigrams`` — adjacent content words, in order.
* ``chars`` — character n-grams: 3–5 within each English content word (with ``<``/``>`` word
  boundaries), 1–3 over each run of kanji and kana (all-hiragana n-grams are marked, they carry
  grammar more than meaning).

Everything is deterministic: text is NFKC-normalised and case-folded first; no corpus statistics
are used (the stopword lists are the fixed, corpus-independent down-weighting of common words).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Final

from kioku.adapters.text.patterns import LazyPattern

__all__ = [
    "EN_STOPWORDS",
    "Features",
    "JapaneseLemmatizer",
    "english_terms",
    "extract_features",
    "light_stem",
    "normalize",
]

EN_STOPWORDS: Final = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't
    doing don't down during each few for from further had hadn't has hasn't have haven't having he
    he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if
    in into is isn't it it's its itself just let's me more most mustn't my myself no nor not of off
    on once only or other ought our ours ourselves out over own same shan't she she'd she'll she's
    should shouldn't so some such than that that's the their theirs them themselves then there
    there's these they they'd they'll they're they've this those through to too under until up
    very was wasn't we we'd we'll we're we've were weren't what what's when when's where where's
    which while who who's whom why why's will with won't would wouldn't you you'd you'll you're
    you've your yours yourself yourselves also yeah yes oh ok okay hey hi really got get gets
    s t d ll m re ve
    """.split()
)

#: Japanese lemmas too common to carry meaning (する, ある, いる, なる, こと, もの …).
JA_STOP_LEMMAS: Final = frozenset(
    "為る 有る 居る 成る 事 物 所 様 其れ 此れ 彼れ 其の 此の".split()
    + "言う 思う 良い 無い 又 もう 然う".split()
)

#: UniDic coarse parts of speech kept as Japanese content words.
_JA_CONTENT_POS: Final = ("名詞", "動詞", "形容詞", "形状詞", "副詞")

_CJK_RUN: Final = LazyPattern(
    r"[\u3041-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff々〆ー]+"
)
_HIRAGANA: Final = re.compile(r"^[\u3041-\u309fー]+$")
_WORD: Final = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_EN_CHAR_NS: Final = (3, 4, 5)
_JA_CHAR_NS: Final = (1, 2, 3)

#: Turns one Japanese run into ``(lemma, coarse POS)`` pairs, or ``None`` without a dictionary.
JapaneseLemmatizer = Callable[[str], list[tuple[str, str]]]


@dataclass(slots=True)
class Features:
    """Feature counts of one text, by group."""

    words: Counter[str] = field(default_factory=Counter)
    bigrams: Counter[str] = field(default_factory=Counter)
    chars: Counter[str] = field(default_factory=Counter)


def normalize(text: str) -> str:
    """NFKC, case-folded, with typographic apostrophes made plain."""
    if text.isascii():
        return text.lower()  # NFKC leaves ASCII as it is, and casefold() is lower() on it
    return unicodedata.normalize("NFKC", text).casefold().replace("\u2019", "'")


@lru_cache(maxsize=65536)
def light_stem(word: str) -> str:
    """A small suffix stripper: plurals, -ing, -ed, -ly (``paintings`` → ``paint``)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("'s"):
        word = word[:-2]
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "ches", "shes", "xes", "zzes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is", "'s")) and len(word) > 3:
        word = word[:-1]
    for suffix, keep in (("ing", 3), ("ed", 3), ("ly", 4)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            base = word[: -len(suffix)]
            if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # running → run, stopped → stop
            elif suffix != "ly" and base.endswith(("at", "bl", "iz", "us", "v", "c")):
                base += "e"  # created → create, loving → love
            return base
    return word


#: Each word's term as :func:`english_terms` gives it by default ("" for a stopword), kept
#: for the next text with the word (emptied when :data:`_TERMS_KEPT` are kept).
_TERMS: dict[str, str] = {}
_TERMS_KEPT: Final = 65536


def _term(word: str) -> str:
    """``word``'s term, stemmed ("" for a stopword), remembered in :data:`_TERMS`."""
    stripped = word[:-2] if word.endswith("'s") else word
    term = "" if word in EN_STOPWORDS else light_stem(stripped)
    if len(_TERMS) >= _TERMS_KEPT:
        _TERMS.clear()
    _TERMS[word] = term
    return term


def _stemmed_terms(norm: str) -> list[str]:
    """:func:`english_terms` with its defaults, of normalised, CJK-free ``norm``."""
    words = _WORD.findall(norm)
    found = list(map(_TERMS.get, words))
    if None in found:
        found = [
            _term(word) if term is None else term for word, term in zip(words, found, strict=True)
        ]
    return [term for term in found if term]


def english_terms(text: str, *, stem: bool = True, stopwords: bool = True) -> list[str]:
    """Content words of the non-CJK parts of ``text``, in order (for BM25 and the embedder)."""
    latin = text if text.isascii() else _CJK_RUN.get().sub(" ", text)
    if stem and stopwords:
        return _stemmed_terms(normalize(latin))
    out: list[str] = []
    for match in _WORD.finditer(normalize(latin)):
        word = match.group()
        if stopwords and word in EN_STOPWORDS:
            continue
        if word.endswith("'s"):
            word = word[:-2]
        out.append(light_stem(word) if stem else word)
    return out


@lru_cache(maxsize=65536)
def _word_chars(word: str) -> tuple[str, ...]:
    padded = f"<{word}>"
    grams = [padded[i : i + n] for n in _EN_CHAR_NS for i in range(len(padded) - n + 1)]
    return tuple(g for g in grams if g != padded or len(word) > 3)


def _ja_chars(run: str) -> Iterable[str]:
    for n in _JA_CHAR_NS:
        for i in range(len(run) - n + 1):
            gram = run[i : i + n]
            if n == 1 and _HIRAGANA.match(gram):
                continue  # single kana are particles and inflections
            yield ("h:" if _HIRAGANA.match(gram) else "j:") + gram


def _script_lemmas(run: str) -> list[tuple[str, str]]:
    """Without a dictionary: kanji and katakana runs (two or more characters) as nouns."""
    pieces = re.findall(r"[\u3400-\u4dbf\u4e00-\u9fff々〆]{2,}|[\u30a0-\u30ffー]{2,}", run)
    return [(p, "名詞") for p in pieces]


def extract_features(text: str, lemmatize: JapaneseLemmatizer | None = None) -> Features:
    """The features of ``text``; Japanese lemmas come from ``lemmatize`` (script runs if None)."""
    norm = normalize(text)
    # english_terms(norm): normalising ASCII again (lower-casing) changes nothing.
    terms = _stemmed_terms(norm) if norm.isascii() else english_terms(norm)
    # Counted in one pass each: the same counts, keys in the same (first seen) order as
    # adding one feature at a time.
    feats = Features(
        words=Counter(["w:" + term for term in terms]),
        bigrams=Counter([f"b:{a} {b}" for a, b in itertools.pairwise(terms)]),
        chars=Counter(itertools.chain.from_iterable(map(_word_chars, terms))),
    )
    words = feats.words
    lemma_of = lemmatize or _script_lemmas
    runs = () if norm.isascii() else _CJK_RUN.get().finditer(norm)
    for match in runs:
        run = match.group()
        feats.chars.update(_ja_chars(run))
        lemmas = [
            lemma
            for lemma, pos in lemma_of(run)
            if pos.startswith(_JA_CONTENT_POS) and lemma not in JA_STOP_LEMMAS
        ]
        for lemma in lemmas:
            words["jw:" + lemma] += 1
        for a, b in itertools.pairwise(lemmas):
            feats.bigrams[f"jb:{a} {b}"] += 1
    return feats
