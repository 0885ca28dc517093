"""Finding English emotion words and phrases, with negation and degree words.

Phrases are matched before single words (``let down``, ``can't wait``, ``fed up``); single words
also match their inflections (``loved``, ``annoying``) and elongations (``sooo``, ``happyyy``).
A negator up to three words earlier in the same clause (``not``, ``never``, ``don't``) flips a
word: a negated positive becomes negative, a negated negative becomes mildly positive
(``isn't bad``); a negated comparative is a superlative (``never been happier``) and
``can't stop smiling`` is not a denial. Degree words (``very``, ``a bit``) scale the next emotion
word, swearing after one (``cute af``, ``cool as fuck``) the previous one. Counterfactuals turn a
feeling around (``would have been nice``, ``could've been worse``), wished-for states count half
(``I hope it works``), and ``un-`` + a listed word is read as its opposite (``unfunny``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from .events_en import match_events
from .hits import Hit
from .irony_en import read_irony
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
_PRONOUNS: Final = frozenset({"i", "we", "you", "they", "he", "she", "u", "i'd", "we'd"})
_LIKE_OBJECT: Final = frozenset(
    {"this", "that", "these", "those", "him", "her", "them", "you", "me", "us"}
)
#: Acknowledgements carry no feeling (labelling guide: "ok" is neutral).
_ACK_CORE: Final = frozenset(
    {"ok", "okay", "k", "kk", "cool", "fair", "noted", "alright", "gotcha", "sure", "nope", "yep"}
)
_ACK: Final = _ACK_CORE | frozenset(
    {"yup", "yeah", "yes", "no", "lol", "haha", "enough", "got", "it", "that's", "thats"}
    | {"all", "for", "now", "makes", "sense", "then", "right", "sounds", "good", "fine"}
)
#: Words that only express a feeling when a person is the subject ("I like", not "looks like").
_NEEDS_SUBJECT: Final = frozenset({"like", "likes", "liked", "miss", "missed", "care", "wish"})
#: Words that start with "un" but are not "un-" + a listed word.
_NOT_UN: Final = frozenset({"unlike", "unless", "until", "understand", "understood", "united"})
_NOT_NEGATING_NEXT: Final = frozenset({"only", "doubt", "wonder", "matter"})
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
#: "I hope they fix it", "I wish it were easier": the wished-for state is not felt yet; the
#: wish itself (hope, wish) carries the feeling.
_WISHING: Final = frozenset({"hope", "hoping", "hopefully", "wish", "wishing", "pray", "praying"})
#: "I wish I was happy", "wish it were easier": a wish about the present is for what is missing.
_WISH: Final = frozenset({"wish", "wished", "wishing"})
_WISH_PAST: Final = frozenset({"was", "were", "had", "could", "would"})
_WISHED_FOR: Final = 0.5


def _lookup(lex: EnLexicon, word: str, stop: frozenset[str]) -> Entry | None:
    entry = lex.words.get(word)
    if entry is not None or word in stop:
        return entry
    for cand in stem_candidates(word):
        entry = lex.words.get(cand)
        if entry is not None:
            return entry
    return _un_word(lex, word, stop)


def _un_word(lex: EnLexicon, word: str, stop: frozenset[str]) -> Entry | None:
    """A word such as "unfunny" or "unharmed": ``un-`` turns a listed word around."""
    if not word.startswith("un") or len(word) < 7 or word in _NOT_UN:
        return None
    base = word[2:]
    if base in stop:
        return None
    for cand in stem_candidates(base):
        entry = lex.words.get(cand)
        if entry is not None and not entry.interjection and cand not in _NEEDS_SUBJECT:
            if entry.score > 0:
                return Entry(word, -0.75 * entry.score, entry.arousal, ())
            return Entry(word, -0.35 * entry.score, entry.arousal, ())
    return None


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


def _acknowledgement(words: list[Word]) -> bool:
    """A turn that only acknowledges ("ok cool", "lol fair", "nope, that's all for now")."""
    lows = [w.low for w in words if w.is_word]
    return 0 < len(lows) <= 6 and bool(_ACK_CORE.intersection(lows)) and _ACK.issuperset(lows)


def match_english(words: list[Word], lex: EnLexicon, stop: frozenset[str]) -> list[RawHit]:
    """Emotion hits over English tokens; ``stop`` are words never stemmed into a lexicon word."""
    if _acknowledgement(words):
        return []
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
        negated, boost = (False, 1.0) if entry.interjection else _negation(words, i, lex, entry)
        if negated and applied > 1.0:
            applied = 1.0 / applied  # "not very good" is only mildly bad
        applied *= boost
        after = _after_intensifier(words, i + lex_len)
        if after:
            applied *= _AFTER_FACTOR
        score = entry.score * applied
        tags = entry.tags
        if negated:
            if score > 0:
                score, tags = -0.75 * score, ("sadness",)
            else:
                score, tags = -0.35 * score, ()
        elif not entry.interjection and _counterfactual(words, i):
            # A pleasant outcome that did not happen is a let-down; an unpleasant one, a relief.
            if score > 0:
                score, tags = _COUNTERFACTUAL_POSITIVE * score, ("sadness",)
            else:
                score, tags = _COUNTERFACTUAL_NEGATIVE * score, ("relief",)
        elif not entry.interjection and _wished_for(words, i):
            score *= _WISHED_FOR
        hit = Hit(entry.term, w.start, score, entry.arousal, tags, negated, applied)
        end = words[i + lex_len - 1].end
        hits.append(RawHit(hit, end, entry.topical, _hypothetical(words, i)))
        i += lex_len + after
    flush_orphan()
    events = match_events(words)
    if events:
        taken = {e.hit.start for e in events}
        hits = [h for h in hits if h.hit.start not in taken] + events
    return read_irony(words, hits)
