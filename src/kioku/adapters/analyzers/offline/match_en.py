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

from typing import Final

from .clause_en import (
    _AFTER_FACTOR,
    _AFTER_FIRST,
    _CLAUSE_BREAK,
    _COMPARATIVE_BOOST,
    _COMPARATIVE_LINK,
    _COUNTERFACTUAL_NEGATIVE,
    _COUNTERFACTUAL_POSITIVE,
    _DEGREE_REACH,
    _NEEDS_SUBJECT,
    _NOT_UN,
    _WISHED_FOR,
    _after_intensifier,
    _counterfactual,
    _has_subject,
    _hypothetical,
    _negation,
    _wished_for,
)
from .events_en import _BASE as _EVENT_BASE
from .events_en import _EVENTS, match_events
from .hits import Hit
from .irony_en import _ALWAYS_FIRST, _ALWAYS_SCORE, _IRONIC_SCORE, IRONY_FIRST, TURNABLE, read_irony
from .lexicon import EnLexicon, Entry
from .match_ja import RawHit
from .tokenize_en import Word, stem_candidates

__all__ = ["feeling_bound", "match_english"]


#: Acknowledgements carry no feeling (labelling guide: "ok" is neutral).
_ACK_CORE: Final = frozenset(
    {"ok", "okay", "k", "kk", "cool", "fair", "noted", "alright", "gotcha", "sure", "nope", "yep"}
)
_ACK: Final = _ACK_CORE | frozenset(
    {"yup", "yeah", "yes", "no", "lol", "haha", "enough", "got", "it", "that's", "thats"}
    | {"all", "for", "now", "makes", "sense", "then", "right", "sounds", "good", "fine"}
)
#: The words an achievement or loss event can start with ("passed", "lost", "win").
_EVENT_WORDS: Final = frozenset(_EVENTS) | frozenset(_EVENT_BASE)


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


def _phrases(lows: list[str], i: int, lex: EnLexicon) -> tuple[int, int]:
    """Lengths of the longest phrase and of the longest degree phrase at word ``i`` (0: none);
    ``lows`` are the words' ``low``."""
    lex_len = mod_len = 0
    n = len(lows)
    for length in lex.phrase_starts.get(lows[i], ()):
        if i + length <= n:
            key = tuple(lows[i : i + length])
            if not lex_len and key in lex.phrases:
                lex_len = length
            if not mod_len and key in lex.modifiers:
                mod_len = length
    return lex_len, mod_len


def _acknowledgement(words: list[Word]) -> bool:
    """A turn that only acknowledges ("ok cool", "lol fair", "nope, that's all for now"): one to
    six words, all from :data:`_ACK` and one from :data:`_ACK_CORE` (punctuation aside)."""
    count = 0
    core = False
    for w in words:
        if w.is_word:
            if w.low not in _ACK or count == 6:
                return False  # stops at the first word that is no acknowledgement
            count += 1
            core = core or w.low in _ACK_CORE
    return core


def match_english(
    words: list[Word], lex: EnLexicon, stop: frozenset[str], lows: list[str] | None = None
) -> list[RawHit]:
    """Emotion hits over English tokens; ``stop`` are words never stemmed into a lexicon word.
    ``lows`` are the words' ``low``, if the caller has them already."""
    if _acknowledgement(words):
        return []
    memo = _memo(lex, stop)
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

    facts = memo.facts
    all_lows = [w.low for w in words] if lows is None else lows
    while i < n:
        w = words[i]
        if orphan is not None and i > degree_until:
            flush_orphan()
        is_word, phrase_start, single_modifier, looked_up = facts.get(w.low) or memo.fact(w.low)
        if not is_word:
            if w.low in _CLAUSE_BREAK:
                degree, degree_until = 1.0, -1
                flush_orphan()
            i += 1
            continue
        lex_len, mod_len = _phrases(all_lows, i, lex) if phrase_start else (0, 0)
        if not mod_len and single_modifier:
            mod_len = 1
        entry: Entry | None = None
        if lex_len:
            entry = lex.phrases[tuple(all_lows[i : i + lex_len])]
        if mod_len > lex_len:
            key = tuple(all_lows[i : i + mod_len])
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
            entry = looked_up
            lex_len = 1
            if entry is not None and w.low in _NEEDS_SUBJECT and not _has_subject(words, i):
                entry = None
        if entry is None:
            i += 1
            continue
        if entry.score == 0.0:
            # A cue that only names a tag ("again", "as usual") leaves a degree word before it
            # to the feeling after it, or to itself ("this fucking laptop froze again").
            applied = 1.0
        else:
            applied = degree if i <= degree_until else 1.0
            degree, degree_until = 1.0, -1
            orphan = None
        negated, boost = (False, 1.0) if entry.interjection else _negation(words, i, lex, entry)
        if negated and applied > 1.0:
            applied = 1.0 / applied  # "not very good" is only mildly bad
        applied *= boost
        after = (
            _after_intensifier(words, i + lex_len)
            if i + lex_len < n and words[i + lex_len].low in _AFTER_FIRST
            else 0
        )
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
    # Only a word that names an event can start one.
    said = set(all_lows)
    events = [] if _EVENT_WORDS.isdisjoint(said) else match_events(words)
    if events:
        taken = {e.hit.start for e in events}
        hits = [h for h in hits if h.hit.start not in taken] + events
    if IRONY_FIRST.isdisjoint(said) and not any(
        r.hit.term in TURNABLE and r.hit.score > 0 for r in hits
    ):
        return hits  # nothing read_irony would look at
    return read_irony(words, hits)


#: Words remembered per lexicon before the memo starts afresh (bounds its memory).
_MEMO_SIZE: Final = 50_000
_MISSING: Final = Entry("", 0.0, 0, ())
#: Per word: the largest non-topical score a hit starting at it can have before degree; the
#: degree factor it can bring as a one-word degree word or an intensifier after a feeling;
#: whether a phrase or degree phrase can start at it; whether it can negate; whether it can
#: link a negation to a comparative ("never been happier").
_Reach = tuple[float, float, bool, bool, bool]
#: Per token: whether it is a word; whether a phrase or degree phrase can start at it; whether
#: it is a one-word degree word; its lexicon entry (:func:`_lookup`) when it is a word.
_Fact = tuple[bool, bool, bool, Entry | None]


class _Memo:
    """Per-word facts about one lexicon and stop list, worked out once per word."""

    def __init__(self, lex: EnLexicon, stop: frozenset[str]) -> None:
        self.lex = lex
        self.stop = stop
        # A degree factor of zero or less would make :func:`feeling_bound` meaningless.
        self.sound = all(f > 0 for f in lex.modifiers.values())
        self.entries: dict[str, Entry] = {}
        self.single_modifiers = frozenset(m[0] for m in lex.modifiers if len(m) == 1)
        self.reaches: dict[str, _Reach] = {}
        self.facts: dict[str, _Fact] = {}

    def fact(self, low: str) -> _Fact:
        """What :func:`match_english` needs to know of a token by its ``low`` (see
        :data:`_Fact`), remembered."""
        if len(self.facts) >= _MEMO_SIZE:
            self.facts.clear()
        is_word = low[0].isalpha() or low == "<3"  # Word.is_word
        found = self.facts[low] = (
            is_word,
            low in self.lex.phrase_starts,
            low in self.single_modifiers,
            self.lookup(low) if is_word else None,
        )
        return found

    def lookup(self, low: str) -> Entry | None:
        """:func:`_lookup` of ``low``."""
        found = self.entries.get(low)
        if found is None:
            if len(self.entries) >= _MEMO_SIZE:
                self.entries.clear()
            found = self.entries[low] = _lookup(self.lex, low, self.stop) or _MISSING
        return None if found is _MISSING else found

    def reach(self, low: str) -> _Reach:
        """What a hit at ``low`` can come to (see :data:`_Reach`)."""
        found = self.reaches.get(low)
        if found is not None:
            return found
        if len(self.reaches) >= _MEMO_SIZE:
            self.reaches.clear()
        reach = 0.0
        entry = self.lookup(low)
        if entry is not None and not entry.topical:
            reach = abs(entry.score)
        own = self.lex.words.get(low)  # a degree word that is also an emotion word
        if own is not None and not own.topical:
            reach = max(reach, abs(own.score))
        event = _EVENTS.get(low) or _EVENTS.get(_EVENT_BASE.get(low, ""))
        if event is not None:
            reach = max(reach, abs(event[1]))
        if low in _ALWAYS_FIRST:
            reach = max(reach, abs(_ALWAYS_SCORE))
        factor = max(1.0, self.lex.modifiers.get((low,), 1.0))
        if low in _AFTER_FIRST:
            factor *= _AFTER_FACTOR
        found = self.reaches[low] = (
            reach,
            factor,
            low in self.lex.phrase_starts,
            low in self.lex.negators or low.endswith("n't"),
            low in _COMPARATIVE_LINK,
        )
        return found


#: Memos by stop list, for the lexicon last used (in practice there is one lexicon and a stop
#: list or two).
_MEMOS: dict[frozenset[str], _Memo] = {}


def _memo(lex: EnLexicon, stop: frozenset[str]) -> _Memo:
    memo = _MEMOS.get(stop)
    if memo is not None and memo.lex is lex:
        return memo
    if len(_MEMOS) >= 8 or any(m.lex is not lex for m in _MEMOS.values()):
        _MEMOS.clear()
    memo = _MEMOS[stop] = _Memo(lex, stop)
    return memo


def feeling_bound(lows: list[str], lex: EnLexicon, stop: frozenset[str]) -> float:
    """An upper bound ``b`` such that every non-topical hit ``h`` of :func:`match_english`
    over words whose ``low`` are ``lows`` (same ``lex`` and ``stop``) has
    ``abs(h.hit.score) <= b * min(h.hit.degree, 1.0)``.

    Cheap next to :func:`match_english`: a text whose bound is below a threshold cannot have a
    hit that reaches it, so the full reading can be skipped.
    """
    memo = _memo(lex, stop)
    if not memo.sound:
        return float("inf")
    reaches = memo.reaches
    best = 0.0
    amplify = 1.0
    negator = link = False
    for i, low in enumerate(lows):
        reach, factor, starts, negates, links = reaches.get(low) or memo.reach(low)
        if reach > best:
            best = reach
        amplify *= factor
        negator = negator or negates
        link = link or links
        if starts:
            for length in lex.phrase_starts[low]:
                key = tuple(lows[i : i + length])
                phrase = lex.phrases.get(key)
                if phrase is not None and not phrase.topical:
                    best = max(best, abs(phrase.score))
                amplify *= max(1.0, lex.modifiers.get(key, 1.0))
    if negator and link:
        amplify *= _COMPARATIVE_BOOST
    return best * amplify * max(1.0, abs(_IRONIC_SCORE))
