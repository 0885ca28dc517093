"""Terms for lexical search, in Japanese and English.

SQLite's own tokenizers cannot find Japanese words (the trigram tokenizer misses two-character
words such as 寿司), so kioku indexes a column of terms it makes itself: Japanese content
morphemes from fugashi + UniDic (script runs without it), English words lower-cased with a short
stopword list and light suffix stripping. The same function makes the terms of a query;
:func:`query_terms` then leaves out the question words of the query. :func:`entity_terms`
picks out the terms of the names a text mentions (people, places, products, identifiers),
which recall uses to tell a prompt about something the store has never heard of.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from kioku.adapters.text.patterns import LazyPattern

__all__ = ["entity_terms", "index_terms", "query_terms"]

_JA = LazyPattern(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆ヵヶー]")
_WORD = re.compile(r"[0-9a-z]+(?:['’][a-z]+)?")
_KANJI_HEAD = LazyPattern(r"^[\u3400-\u4dbf\u4e00-\u9fff々]+")
#: Only what carries no topic at all; question words and time words stay searchable.
_STOP_EN: Final = frozenset(
    "a an the and or but if of to in on at by for from with as is am are was were be been "
    "being do does did doing have has had having it its it's this that these those there "
    "their they them he him his she her i me my we us our you your yours mine so than too "
    "very just can could would should will shall may might must not no nor into onto about "
    "over under up down out off again then once here all any both each few more most other "
    "some such only own same s t don't didn't doesn't isn't wasn't i'm i've i'll you're "
    "that's what's let's oh hey hi yeah yes ok okay".split()
)
#: Question words (and the "please" of a polite request) say what kind of answer a query
#: wants, not what it is about: a query leaves them out (memories keep them in their
#: terms). Japanese ones (いつ, 何, 誰) are pronouns and adverbs that :func:`_japanese`
#: never keeps.
_QUESTION_EN: Final = frozenset(
    "what when where which who whom whose why how please pls kindly".split()
)
_JA_KEEP_POS: Final = frozenset({"noun", "propn", "verb", "adj", "adverb", "prefix-noun"})
#: Capitalised words that name nothing in particular: the pronoun, months and weekdays (a
#: memory keeps its time as a date, not as these words). "May" is a stopword already.
_NOT_NAMES: Final = frozenset(
    "i january february march april june july august september october november december "
    "monday tuesday wednesday thursday friday saturday sunday".split()
)
#: The words of :data:`_WORD`, before lower-casing.
_LATIN_NAME = re.compile(r"[0-9A-Za-z]+(?:['’][A-Za-z]+)?")
#: What may stand between the end of a sentence and its first word.
_OPENERS: Final = " \t\"'“‘([「『"
_SENTENCE_ENDS: Final = frozenset(".!?。！？:;\n…")
_MAX_CHARS: Final = 20_000


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """Light, conservative suffix stripping: plurals, -ing, -ed, possessive."""
    word = word.replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ed") and not word.endswith("eed"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _english(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP_EN]


def _japanese(text: str) -> list[str]:
    from kioku.adapters.analyzers.offline.tokenize_ja import default_segmenter

    terms: list[str] = []
    for token in default_segmenter()(text):
        if token.pos == "noun" and token.detail == "latin":
            terms.extend(_english(token.surface))
        elif token.pos in _JA_KEEP_POS and token.detail != "nonindependent":
            if token.pos in ("verb", "adj"):
                head = _KANJI_HEAD.get().match(token.surface)
                terms.append(head.group(0) if head else token.surface)
            else:
                terms.append(token.surface.lower())
    return terms


def _latin_names(text: str) -> list[str]:
    """Terms of the words of ``text`` written as names: capitalised inside a sentence
    ("Caroline", "Kyoto"), or with a capital after the first letter anywhere ("CSS",
    "TypeError", "iPhone"). A capitalised first word of a sentence is only a capital."""
    found: list[str] = []
    for match in _LATIN_NAME.finditer(text):
        word = match.group(0)
        if not word[0].isalpha():
            continue
        inner = any(c.isupper() for c in word[1:])
        if not (inner or word[0].isupper()):
            continue
        if not inner:
            before = text[: match.start()].rstrip(_OPENERS)
            if not before or before[-1] in _SENTENCE_ENDS:
                continue
        lowered = word.lower().replace("’", "'")
        if lowered in _STOP_EN or lowered in _QUESTION_EN or lowered in _NOT_NAMES:
            continue
        found.extend(_english(word))
    return found


def _japanese_names(text: str) -> list[str]:
    """Proper nouns (UniDic's 固有名詞: people, places, organisations) and words in Latin
    letters ("Python", "React") of a Japanese text, as terms."""
    from kioku.adapters.analyzers.offline.tokenize_ja import default_segmenter

    found: list[str] = []
    for token in default_segmenter()(text):
        if token.pos == "propn":
            found.append(token.surface.lower())
        elif token.pos == "noun" and token.detail == "latin":
            found.extend(_english(token.surface))
    return found


def entity_terms(text: str) -> list[str]:
    """The terms (as :func:`index_terms` makes them) of the names ``text`` mentions, each
    once, in order: in English, words written as names (see :func:`_latin_names`) other than
    months, weekdays and "I"; in Japanese, proper nouns and words in Latin letters."""
    text = text[:_MAX_CHARS]
    if not text.isascii() and _JA.get().search(text):
        found = _japanese_names(text)
    else:
        found = _latin_names(text)
    return [term for term in dict.fromkeys(found) if term not in _QUESTION_EN]


def index_terms(text: str) -> list[str]:
    """The searchable terms of ``text``, in order (repeats kept: they count for BM25)."""
    text = text[:_MAX_CHARS]
    if not text.isascii() and _JA.get().search(text):
        return _japanese(text)
    return _english(text)


def query_terms(text: str) -> list[str]:
    """The terms to search for ``text`` as a query: :func:`index_terms` without question words
    ("what", "when", "how"...), unless nothing else is left."""
    terms = index_terms(text)
    topical = [term for term in terms if term not in _QUESTION_EN]
    return topical or terms
