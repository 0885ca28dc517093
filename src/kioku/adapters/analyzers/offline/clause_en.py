"""What the words around an English feeling word do to it (for :mod:`.match_en`).

Whether a negator governs it (up to three words earlier in the same clause, ``not``, ``never``,
``don't``; ``never been this happy`` and ``can't stop smiling`` are no denials; a negated
comparative is a superlative), whether it is wished for (``I hope it works``), counterfactual
(``would have been nice``, ``I wish I was happy``) or hypothetical (``if it goes well``), whether
swearing right after it intensifies it (``cute af``), and whether a liking has a subject.
"""

from __future__ import annotations

from typing import Final

from .lexicon import EnLexicon, Entry
from .tokenize_en import Word

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


_PRONOUNS: Final = frozenset({"i", "we", "you", "they", "he", "she", "u", "i'd", "we'd"})


_LIKE_OBJECT: Final = frozenset(
    {"this", "that", "these", "those", "him", "her", "them", "you", "me", "us"}
)


#: Words that only express a feeling when a person is the subject ("I like", not "looks like").
_NEEDS_SUBJECT: Final = frozenset({"like", "likes", "liked", "miss", "missed", "care", "wish"})


#: Words that start with "un" but are not "un-" + a listed word.
_NOT_UN: Final = frozenset({"unlike", "unless", "until", "understand", "understood", "united"})


_NOT_NEGATING_NEXT: Final = frozenset({"only", "doubt", "wonder", "matter"})
#: "nothing like a cold beer", "nothing like getting ghosted": a superlative, not a negation.
_NOTHING_LIKE: Final = frozenset({"like"})


_HYPOTHETICAL: Final = frozenset({"if", "unless", "whether"})


#: "can't stop smiling", "couldn't help laughing": the feeling is there, not denied.
_UNSTOPPABLE: Final = frozenset({"stop", "stopped", "help"})


#: "never been happier", "can't get any worse": a negated comparative is a superlative.
_COMPARATIVE_LINK: Final = frozenset(
    {"be", "been", "get", "gets", "getting", "feel", "felt", "any"}
)


_COMPARATIVE_BOOST: Final = 1.4


#: "would have been nice", "could've been worse": a feeling that did not happen.
_COUNTERFACTUAL_MODALS: Final = frozenset({"would", "could", "might"})


_COUNTERFACTUAL_CONTRACTED: Final = frozenset(
    {"would've", "could've", "might've", "wouldve", "couldve"}
)


_COUNTERFACTUAL_POSITIVE: Final = -0.5


_COUNTERFACTUAL_NEGATIVE: Final = -0.35


#: "cute af", "cool as fuck", "happy as hell": swearing after a feeling intensifies it.
_AFTER_INTENSIFIERS: Final = (("af",), ("asf",), ("as", "fuck"), ("as", "hell"), ("as", "shit"))


_AFTER_FACTOR: Final = 1.4


_AFTER_FIRST: Final = frozenset(p[0] for p in _AFTER_INTENSIFIERS)


#: "I hope they fix it", "I wish it were easier": the wished-for state is not felt yet; the
#: wish itself (hope, wish) carries the feeling.
_WISHING: Final = frozenset({"hope", "hoping", "hopefully", "wish", "wishing", "pray", "praying"})


#: "I wish I was happy", "wish it were easier": a wish about the present is for what is missing.
_WISH: Final = frozenset({"wish", "wished", "wishing"})


_WISH_PAST: Final = frozenset({"was", "were", "had", "could", "would"})


_WISHED_FOR: Final = 0.5


def _has_subject(words: list[Word], i: int) -> bool:
    if words[i].low == "like" and i + 1 < len(words) and words[i + 1].low in _LIKE_OBJECT:
        # "people like this", "guys like him": a comparison unless a pronoun likes it.
        j = i - 1
        while j > 0 and words[j].low in _BETWEEN_SUBJECT:
            j -= 1
        if j < 0 or words[j].low not in _PRONOUNS:
            return False
    j = i - 1
    while j >= 0 and i - j <= 4:
        low = words[j].low
        if low in _SUBJECTS:
            return True
        if low not in _BETWEEN_SUBJECT:
            return False
        j -= 1
    return False


def _negator_at(words: list[Word], i: int, lex: EnLexicon) -> int:
    """Index of the negator that governs word ``i``, or -1."""
    j = i - 1
    while j >= 0 and i - j <= _NEG_REACH:
        low = words[j].low
        if low in _CLAUSE_BREAK:
            return -1
        if (low in lex.negators or low.endswith("n't")) and (
            j + 1 >= len(words) or words[j + 1].low not in _NOT_NEGATING_NEXT
        ):
            if low == "nothing" and j + 1 < i and words[j + 1].low in _NOTHING_LIKE:
                return -1
            return j
        j -= 1
    return -1


def _is_comparative(word: str, entry: Entry) -> bool:
    return word in ("better", "worse") or (
        word != entry.term and word.endswith(("er", "ier")) and not entry.term.endswith("er")
    )


def _negation(words: list[Word], i: int, lex: EnLexicon, entry: Entry) -> tuple[bool, float]:
    """Whether word ``i`` is negated, and a degree factor when the negation intensifies."""
    # "never been this happy", "never felt so alone": an intensifier, not a negation.
    window = {w.low for w in words[max(0, i - 3) : i]}
    if "never" in window and window & {"this", "so", "more", "as"}:
        return False, 1.0
    j = _negator_at(words, i, lex)
    if j < 0:
        return False, 1.0
    between = {w.low for w in words[j + 1 : i]}
    if between & _UNSTOPPABLE:
        return False, 1.0
    if between & _COMPARATIVE_LINK and _is_comparative(words[i].low, entry):
        return False, _COMPARATIVE_BOOST
    return True, 1.0


def _counterfactual(words: list[Word], i: int) -> bool:
    """A feeling that did not happen, in the clause before word ``i``.

    "would have been nice", "could've been worse", "I wish I was happy".
    """
    j = i - 1
    past = False
    while j >= 0 and i - j <= 5:
        low = words[j].low
        if low in _CLAUSE_BREAK:
            return False
        if low in _COUNTERFACTUAL_CONTRACTED or (
            low == "have" and j > 0 and words[j - 1].low in _COUNTERFACTUAL_MODALS
        ):
            return True
        if low in _WISH and past:
            return True
        past = past or low in _WISH_PAST
        j -= 1
    return False


def _wished_for(words: list[Word], i: int) -> bool:
    j = i - 1
    while j >= 0 and i - j <= 6:
        low = words[j].low
        if low in _CLAUSE_BREAK:
            return False
        if low in _WISHING:
            return True
        j -= 1
    return False


def _after_intensifier(words: list[Word], i: int) -> int:
    """Length of an intensifier right after a feeling word ("cute af", "cool as fuck")."""
    for phrase in _AFTER_INTENSIFIERS:
        n = len(phrase)
        if i + n <= len(words) and tuple(w.low for w in words[i : i + n]) == phrase:
            return n
    return 0


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
