"""Explicit English irony: praise said about a mishap.

"Great, another outage at 3am. Just great.", "oh wonderful, the build broke again", "thanks a
lot" after a failure, "love that for me" after a mishap: a word of praise in an exclamative frame
(opening a sentence on its own, after "oh", "just" or "how", or in one of a few set phrases) is
read as its opposite when the same text reports something going wrong and says nothing kind
besides. "yeah right" and "thanks for nothing" are ironic on their own. Plain praise ("Great job,
thanks!") has no mishap and stays as it is.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from .hits import Hit
from .match_ja import RawHit
from .tokenize_en import Word

__all__ = ["IRONY", "ironic_expressions", "laughing_tears", "read_irony"]

#: The term of the hits that mark a text as ironic.
IRONY: Final = "irony"

#: Words of praise that irony turns around (base forms, as the lexicon names them).
_PRAISE: Final = frozenset(
    {
        "great",
        "wonderful",
        "perfect",
        "fantastic",
        "lovely",
        "brilliant",
        "awesome",
        "terrific",
        "marvelous",
        "marvellous",
        "splendid",
        "excellent",
        "nice",
        "super",
        "fabulous",
        "amazing",
        "joy",
        "fun",
        "yay",
        "cool",
        "convenient",
        "love",
        "thanks",
        "thank you",
        "thank",
        "exactly",
        "best",
    }
)
#: Words right before praise that make it an exclamation ("oh great", "just perfect").
_FRAMING: Final = frozenset({"oh", "ah", "just", "how", "well", "wow"})
_SENTENCE_END: Final = frozenset({".", "!", "?", ";", ":"})
#: After praise: "thanks a lot", "love that for me".
_AFTER: Final = (
    ("a", "lot"),
    ("that", "for", "me"),
    ("that", "for", "us"),
    ("this", "for", "me"),
    ("me",),
)
#: Signs that something went wrong, beyond the lexicon's negative words.
_MISHAP: Final = frozenset(
    {
        "another",
        "again",
        "gone",
        "broke",
        "broken",
        "crashed",
        "crashes",
        "failed",
        "fails",
        "down",
        "late",
        "missed",
        "lost",
        "deleted",
        "cancelled",
        "canceled",
        "delayed",
        "outage",
        "stuck",
        "ruined",
        "flat",
        "spilled",
        "rejected",
        "locked",
        "overdrawn",
        "rain",
        "raining",
        "traffic",
        "flooded",
    }
)
#: A problem that was dealt with: praise about it is sincere.
_RESOLVED: Final = frozenset(
    {
        "fixed",
        "finally",
        "fixing",
        "solved",
        "resolved",
        "works",
        "worked",
        "working",
        "back",
        "restored",
        "help",
        "helped",
    }
)
_PLEASANT_REPEAT: Final = frozenset(
    {"see", "meet", "visit", "you", "thanks", "open", "that", "it", "soon", "next", "together"}
    | {"sometime", "back", "win", "won"}
)
#: "the pain is gone", "the stress is over": an unpleasant thing ended.
_ENDED: Final = frozenset({"gone", "over", "away", "ended", "stopped"})
_NOT_A_REMEDY: Final = frozenset({"late", "overtime", "weekends", "nights", "on"})
#: A turn for the better: "brutal exam, best feeling when it ended though".
_TURN: Final = frozenset(
    {"but", "though", "however", "although", "luckily", "fortunately", "thankfully", "anyway"}
)
#: Ironic on their own: the speaker means the opposite.
_ALWAYS: Final = (("yeah", "right"), ("thanks", "for", "nothing"), ("sure", "jan"))
_IRONIC_SCORE: Final = -0.8
_IRONIC_TAGS: Final = ("frustration", "anger")
_ALWAYS_SCORE: Final = -1.4
_ALWAYS_FIRST: Final = frozenset(p[0] for p in _ALWAYS)


def _follows(words: list[Word], i: int, phrase: tuple[str, ...]) -> bool:
    """Whether ``phrase`` (words) comes at word ``i``. (Its words are letters: the tokens there
    must be words, so a comma among them would leave too few.)"""
    return (
        i < len(words)
        and words[i].low == phrase[0]
        and tuple(w.low for w in words[i : i + len(phrase)]) == phrase
    )


def _framed(words: list[Word], i: int, length: int) -> bool:
    """Whether the praise at word ``i`` (``length`` words) is exclamative."""
    before = words[i - 1].low if i > 0 else "."
    after = words[i + length].low if i + length < len(words) else "."
    if before in _FRAMING:
        return True
    if any(_follows(words, i + length, p) for p in _AFTER):
        return True
    opens = before in _SENTENCE_END or before.startswith(".")
    return opens and (after in {",", "!"} or after in _SENTENCE_END or after.startswith("."))


def _always(words: list[Word]) -> list[tuple[int, int]]:
    """Offsets (start, end) of the phrases that are ironic on their own."""
    index = [i for i, w in enumerate(words) if w.is_word]
    lows = [words[i].low for i in index]
    found = []
    for k in range(len(lows)):
        if lows[k] not in _ALWAYS_FIRST:
            continue  # no phrase starts here
        for phrase in _ALWAYS:
            if tuple(lows[k : k + len(phrase)]) == phrase:
                found.append((words[index[k]].start, words[index[k + len(phrase) - 1]].end))
    return found


def _after_mishap(words: list[Word], i: int, hits: list[RawHit]) -> bool:
    """Whether a sentence before word ``i``'s reports a mishap ("Train cancelled. Thanks!")."""
    start = i
    while start > 0 and not (
        words[start - 1].low in _SENTENCE_END or words[start - 1].low.startswith(".")
    ):
        start -= 1
    if start == 0:
        return False
    edge = words[start].start
    return _mishap_word(words, 0, start) or any(
        r.hit.score <= -0.5 and r.hit.start < edge for r in hits
    )


def _mishap_word(words: list[Word], start: int, end: int) -> bool:
    """A word among ``words[start:end]`` that tells of a mishap.

    "again" counts only for something that went wrong again ("jammed again"), not for a
    pleasant repeat ("see you again", "do that again", "open again").
    """
    for k in range(start, end):
        low = words[k].low
        if low not in _MISHAP:
            continue
        if low == "again" and (
            (k > 0 and words[k - 1].low in _PLEASANT_REPEAT)
            or (k + 1 < len(words) and words[k + 1].low in _PLEASANT_REPEAT)
        ):
            continue
        return True
    return False


def _resolved(words: list[Word], hits: list[RawHit]) -> bool:
    """A problem was dealt with: "it's working again", "finally", "the pain is gone", "no more
    late trains" ("working late" is no remedy)."""
    bad = {r.hit.start for r in hits if r.hit.score < 0}
    for k, w in enumerate(words):
        low = w.low
        nxt = words[k + 1].low if k + 1 < len(words) else ""
        if low in _RESOLVED and nxt not in _NOT_A_REMEDY:
            return True
        if low == "no" and nxt == "more":
            return True
        if low in _ENDED and any(x.start in bad for x in words[max(0, k - 3) : k]):
            return True
    return False


def read_irony(words: list[Word], hits: list[RawHit]) -> list[RawHit]:
    """``hits`` with ironic praise turned negative (and a hit for "yeah right")."""
    lows = {w.low for w in words}
    always = _always(words) if lows & _ALWAYS_FIRST else []
    if not always and not any(r.hit.term in _PRAISE and r.hit.score > 0 for r in hits):
        return hits
    at = {w.start: i for i, w in enumerate(words)}
    framed: list[int] = []
    for k, raw in enumerate(hits):
        hit = raw.hit
        i = at.get(hit.start)
        if i is None or hit.score <= 0:
            continue
        if any(a <= hit.start < b for a, b in always) or (
            hit.term in _PRAISE
            and (_framed(words, i, len(hit.term.split())) or _after_mishap(words, i, hits))
        ):
            framed.append(k)
    if not framed and not always:
        return hits
    others = [raw.hit for k, raw in enumerate(hits) if k not in framed]
    mishap = _mishap_word(words, 0, len(words)) or any(h.score <= -0.5 for h in others)
    kind = (
        _resolved(words, hits)
        or bool(lows & _TURN)
        or any(h.score >= 1.0 and h.term not in _PRAISE for h in others)
    )
    out = list(hits)
    if always or (mishap and not kind):
        for k in framed:
            hit = out[k].hit
            turned = replace(hit, score=_IRONIC_SCORE * hit.score, tags=_IRONIC_TAGS)
            out[k] = replace(out[k], hit=turned)
    for start, end in always:
        hit = Hit(IRONY, start, _ALWAYS_SCORE, 1, _IRONIC_TAGS)
        out.append(RawHit(hit, end, False, False))
    if framed and (always or (mishap and not kind)):
        # A marker for the emoji and laughter that go with the irony ("Yay me 🎉").
        out.append(RawHit(Hit(IRONY, words[0].start, 0.0, 0, ()), words[0].end, False, False))
    return out


def ironic_expressions(raw: list[RawHit]) -> list[RawHit]:
    """In an ironic text, celebrating emoji and laughter go with the irony ("Yay me 🎉")."""
    if not any(r.hit.term == IRONY for r in raw):
        return raw
    out = []
    for r in raw:
        if r.expressive and r.hit.score > 0:
            turned = replace(r.hit, score=_IRONIC_SCORE * 0.6 * r.hit.score, tags=_IRONIC_TAGS)
            r = replace(r, hit=turned)
        out.append(r)
    return out


#: Laughter in any form: with it, "I'm crying", "I'm dead", "screaming" mean laughing hard.
_LAUGHTER: Final = frozenset({"😂", "🤣", "😹", "lol", "lmao", "lmfao", "rofl", "haha", "hahaha"})
_HYPERBOLE: Final = frozenset({"crying", "cry", "dead", "dying", "die", "scream", "screaming"})
_HYPERBOLE_SCORE: Final = 1.5


def laughing_tears(raw: list[RawHit]) -> list[RawHit]:
    """ "I'm crying at this 😂": tears, death and screams next to laughter are laughter too."""
    if not any(r.hit.term in _LAUGHTER for r in raw):
        return raw
    out = []
    for r in raw:
        if r.hit.term in _HYPERBOLE and r.hit.score < 0 and not r.hit.negated:
            r = replace(r, hit=replace(r.hit, score=_HYPERBOLE_SCORE, tags=("joy",)))
        out.append(r)
    return out
