"""Explicit English irony: praise said about a mishap.

"Great, another outage at 3am. Just great.", "oh wonderful, the build broke again", "thanks a
lot" after a failure, "love that for me" after a mishap: a word of praise in an exclamative frame
(opening a sentence on its own, after "oh", "just" or "how", or in one of a few set phrases) is
read as its opposite when the same text reports something going wrong and says nothing kind
besides. "yeah right" and "thanks for nothing" are ironic on their own. Plain praise ("Great job,
thanks!") has no mishap and stays as it is.

Frames also include "what a great …", "such a joy", "gotta love", "love it when", "love how" and
"lucky me"; a thing that "won't start" or "doesn't work" is a mishap. Gratitude for a harmful act
("thanks a lot for breaking my phone", "appreciate you ignoring me") and "nothing like" before an
unpleasant event ("nothing like being stuck in traffic 🙂") are ironic whatever else the text
says. Irony that names the speaker ("yay me", "love that for me") is frustration, not anger.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from .hits import Hit
from .match_ja import RawHit
from .tokenize_en import Word

__all__ = [
    "IRONY",
    "IRONY_AT_SELF",
    "IRONY_FIRST",
    "TURNABLE",
    "read_irony",
]

#: The term of the hits that mark a text as ironic.
IRONY: Final = "irony"
#: …and as ironic about the speaker ("yay me 🎉").
IRONY_AT_SELF: Final = "irony at self"

#: Words of praise that irony turns around (base forms, as the lexicon names them).
_PRAISE: Final = frozenset(
    {"great", "wonderful", "perfect", "fantastic", "lovely", "brilliant", "awesome"}
    | {"terrific", "marvelous", "marvellous", "splendid", "excellent", "nice", "super"}
    | {"fabulous", "amazing", "joy", "fun", "yay", "cool", "convenient", "love", "thanks"}
    | {"thank you", "thank", "exactly", "best", "lucky"}
)
#: Praise that is ironic only about a mishap word ("lucky me, the bus left again").
_STRICT_PRAISE: Final = frozenset({"lucky"})
#: Words right before praise that make it an exclamation ("oh great", "just perfect").
_FRAMING: Final = frozenset({"oh", "ah", "just", "how", "well", "wow"})
#: Two words before praise that make it an exclamation ("what a great start", "such a joy").
_FRAMING_PAIRS: Final = frozenset({("what", "a"), ("such", "a"), ("got", "to")})
#: Before and after "love" only: "gotta love", "love it when", "love how".
_LOVE_BEFORE: Final = frozenset({"gotta", "gotta'", "hafta"})
_LOVE_AFTER: Final = (("it", "when"), ("how",), ("when",), ("it", "how"))
#: Gratitude ("thanks for ruining", "appreciate you ignoring me") is ironic when what it thanks
#: for is a harmful act.
_GRATITUDE: Final = frozenset({"thanks", "thank", "thank you", "appreciate"})
_GRATITUDE_LINK: Final = frozenset({"for", "you", "a", "lot", "so", "much", "very", "really"})
#: Harmful acts beyond the lexicon's negative words, as the stems of their -ing forms; they
#: count when done to the speaker ("breaking my phone", not "deleting that spam").
_HARM: Final = frozenset(
    {"break", "crash", "los", "interrupt", "dump", "ghost", "forgett", "spill", "scratch"}
    | {"wreck"}
)
#: A negative word thanked for is an act that annoys (its tags), not a feeling shared
#: ("thanks for worrying about me", "thanks for missing me" are sincere).
_ANNOYING: Final = frozenset({"frustration", "anger", "disgust"})
_SPEAKER: Final = frozenset({"me", "my", "us", "our", "mine"})
#: "crashing at my place", "crashing with us": staying over, no harm.
_STAYING: Final = frozenset({"at", "on", "with", "over", "here", "there"})
_SENTENCE_END: Final = frozenset({".", "!", "?", ";", ":"})
#: After praise: "thanks a lot", "love that for me".
_AFTER: Final = (
    ("a", "lot"),
    ("that", "for", "me"),
    ("that", "for", "us"),
    ("this", "for", "me"),
    ("me",),
)
_DENIALS: Final = frozenset({"not", "never", "no"})
#: "won't start", "doesn't work": a thing that fails to do its job.
_FAILS_TO: Final = frozenset({"won't", "doesn't", "didn't", "wouldn't", "can't", "couldn't"})
_JOB: Final = frozenset({"start", "work", "load", "open", "boot", "charge", "connect", "print"})
#: Signs that something went wrong, beyond the lexicon's negative words.
_MISHAP: Final = frozenset(
    {"another", "again", "gone", "broke", "broken", "crashed", "crashes", "failed", "fails"}
    | {"down", "late", "missed", "lost", "deleted", "cancelled", "canceled", "delayed"}
    | {"outage", "stuck", "ruined", "flat", "spilled", "rejected", "locked", "overdrawn"}
    | {"rain", "raining", "traffic", "flooded", "forgot"}
)
_MISHAP_OR_JOB: Final = _MISHAP | _JOB
#: A problem that was dealt with: praise about it is sincere.
_RESOLVED: Final = frozenset(
    {"fixed", "finally", "fixing", "solved", "resolved", "works", "worked", "working"}
    | {"back", "restored", "help", "helped"}
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
#: Irony aimed at the speaker ("yay me", "love that for me", "lucky me") is fed up with no one
#: to be angry at.
_SELF_IRONIC_TAGS: Final = ("frustration",)
_AT_SELF: Final = (("me",), ("that", "for", "me"), ("this", "for", "me"))
_ALWAYS_SCORE: Final = -1.4
_ALWAYS_FIRST: Final = frozenset(p[0] for p in _ALWAYS)
#: "Nothing like getting ghosted 🙂": praise of something unpleasant that happens.
_NOTHING_LIKE: Final = ("nothing", "like")
#: A one-word sentence after a mishap: "Forgot my keys again. Classic."
_EXASPERATED: Final = frozenset({"classic", "typical", "figures", "naturally"})
_EXASPERATED_SCORE: Final = -1.0
_REPEATS: Final = frozenset({"again", "another"})
_EXASPERATED_TAGS: Final = ("frustration", "resignation")
#: Hit terms :func:`read_irony` may turn around.
TURNABLE: Final = _PRAISE | _GRATITUDE
#: First words of every phrase :func:`read_irony` looks for besides praise.
IRONY_FIRST: Final = _ALWAYS_FIRST | _EXASPERATED | {"nothing"}


def _follows(words: list[Word], i: int, phrase: tuple[str, ...]) -> bool:
    """Whether ``phrase`` (words) comes at word ``i``. (Its words are letters: the tokens there
    must be words, so a comma among them would leave too few.)"""
    return (
        i < len(words)
        and words[i].low == phrase[0]
        and tuple(w.low for w in words[i : i + len(phrase)]) == phrase
    )


def _framed(words: list[Word], i: int, length: int) -> int:
    """Whether the praise at word ``i`` (``length`` words) is exclamative: 1 in the plain
    frames, 2 in frames that also open sincere praise of a person ("what a lovely woman",
    "I love how he made me laugh"), which are ironic only about a mishap word; 0 if not."""
    before = words[i - 1].low if i > 0 else "."
    after = words[i + length].low if i + length < len(words) else "."
    if before in _FRAMING or any(_follows(words, i + length, p) for p in _AFTER):
        return 1
    opens = before in _SENTENCE_END or before.startswith(".")
    if opens and (after in {",", "!"} or after in _SENTENCE_END or after.startswith(".")):
        return 1
    if i >= 2 and (words[i - 2].low, before) in _FRAMING_PAIRS:
        return 2
    if words[i].low.startswith("lov") and (
        before in _LOVE_BEFORE or any(_follows(words, i + length, p) for p in _LOVE_AFTER)
    ):
        return 2
    return 0


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


def _mishap_word(words: list[Word], start: int, end: int, *, repeats: bool = True) -> bool:
    """A word among ``words[start:end]`` that tells of a mishap.

    "again" counts only for something that went wrong again ("jammed again"), not for a
    pleasant repeat ("see you again", "do that again", "open again"); with ``repeats`` False
    "again" and "another" do not count at all.
    """
    for k in range(start, end):
        low = words[k].low
        if low not in _MISHAP_OR_JOB or (not repeats and low in _REPEATS):
            continue
        if low in _JOB:
            if k > 0 and words[k - 1].low in _FAILS_TO:
                return True
            continue
        if any(w.low in _DENIALS or w.low.endswith("n't") for w in words[max(0, k - 5) : k]):
            continue  # "won't let anything get me down", "the train wasn't late"
        if low == "again" and (
            (k > 0 and words[k - 1].low in _PLEASANT_REPEAT)
            or (k + 1 < len(words) and words[k + 1].low in _PLEASANT_REPEAT)
        ):
            continue
        return True
    return False


def _thanks_for_harm(words: list[Word], i: int, length: int, bad: set[int]) -> bool:
    """Whether the gratitude at word ``i`` thanks for a harmful act ("thanks a lot for breaking
    my phone", "really appreciate you ignoring me"): an -ing word within four words after it,
    with only linking words between, that is a negative word or a harm."""
    for k in range(i + length, min(len(words), i + length + 4)):
        low = words[k].low
        if low.endswith("ing") and len(low) > 4:
            if low == "crashing" and k + 1 < len(words) and words[k + 1].low in _STAYING:
                return False  # "thanks for crashing at my place": staying over
            if words[k].start in bad:
                return True
            return low[:-3] in _HARM and any(w.low in _SPEAKER for w in words[k + 1 : k + 4])
        if low not in _GRATITUDE_LINK:
            return False
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


def _praises_harm(words: list[Word], hits: list[RawHit]) -> bool:
    """ "Nothing like getting ghosted by a recruiter", "nothing like being stuck in traffic":
    "nothing like" before an -ing word, in a sentence that tells something unpleasant (a
    negative word or a mishap) and nothing pleasant ("nothing like having a good cry" is
    sincere)."""
    for i, w in enumerate(words):
        if w.low != "nothing" or not _follows(words, i, _NOTHING_LIKE):
            continue
        if i + 2 >= len(words) or not words[i + 2].low.endswith("ing"):
            continue
        end = i + 2
        while end < len(words) and not (
            words[end].low in _SENTENCE_END or words[end].low.startswith(".")
        ):
            end += 1
        lo, hi = words[i].start, words[end - 1].end
        inside = [r.hit.score for r in hits if lo <= r.hit.start < hi and not r.expressive]
        if any(x >= 0.5 for x in inside):
            continue
        if any(x <= -0.5 for x in inside) or _mishap_word(words, i + 2, end):
            return True
    return False


def _exasperation(words: list[Word], hits: list[RawHit]) -> list[RawHit]:
    """ "Forgot my keys again. Classic.": a sentence of one such word right after text that
    tells a mishap (a mishap word other than "again" or "another", a thing that "doesn't work",
    or a negative word) voices fed-up resignation."""
    out = []
    for i, w in enumerate(words):
        if w.low not in _EXASPERATED or i < 2:
            continue
        before, after = words[i - 1].low, words[i + 1].low if i + 1 < len(words) else "."
        if not (before in _SENTENCE_END or before.startswith(".")):
            continue
        if not (after in _SENTENCE_END or after.startswith(".")):
            continue
        # "again" alone is no mishap here: "Watched it again. Classic." is fond.
        if _mishap_word(words, 0, i, repeats=False) or any(
            r.hit.score <= -0.5 and r.hit.start < w.start for r in hits
        ):
            hit = Hit(w.low, w.start, _EXASPERATED_SCORE, 0, _EXASPERATED_TAGS)
            out.append(RawHit(hit, w.end, False, False))
    return out


def read_irony(words: list[Word], hits: list[RawHit]) -> list[RawHit]:
    """``hits`` with ironic praise turned negative (and a hit for "yeah right")."""
    lows = {w.low for w in words}
    if "nothing" in lows and _praises_harm(words, hits):
        # A marker for the emoji and laughter that go with it.
        marker = RawHit(Hit(IRONY, words[0].start, 0.0, 0, ()), words[0].end, False, False)
        hits = [*hits, marker]
    if not _EXASPERATED.isdisjoint(lows):
        hits = hits + _exasperation(words, hits)
    always = _always(words) if lows & _ALWAYS_FIRST else []
    if not always and not any(r.hit.term in TURNABLE and r.hit.score > 0 for r in hits):
        return hits
    at = {w.start: i for i, w in enumerate(words)}
    framed: list[int] = []
    harmful: list[int] = []
    #: Framed praise that is ironic only about a mishap word, not any unpleasant word (a
    #: eulogy: "Such a lovely woman. She died last week."; "Lucky me, … before she died").
    strict: list[int] = []
    bad: set[int] | None = None
    for k, raw in enumerate(hits):
        hit = raw.hit
        i = at.get(hit.start)
        if i is None or hit.score <= 0:
            continue
        if hit.term in _GRATITUDE and bad is None:
            bad = {
                r.hit.start
                for r in hits
                if r.hit.score < 0 and (not r.hit.tags or _ANNOYING.intersection(r.hit.tags))
            }
        if (
            bad is not None
            and hit.term in _GRATITUDE
            and _thanks_for_harm(words, i, len(hit.term.split()), bad)
        ):
            harmful.append(k)
            framed.append(k)
        elif any(a <= hit.start < b for a, b in always):
            framed.append(k)
        elif hit.term in _PRAISE:
            frame = _framed(words, i, len(hit.term.split()))
            if frame or _after_mishap(words, i, hits):
                framed.append(k)
                if frame == 2 or hit.term in _STRICT_PRAISE:
                    strict.append(k)
    if not framed and not always:
        return hits
    others = [raw.hit for k, raw in enumerate(hits) if k not in framed]
    mishap = _mishap_word(words, 0, len(words))
    if not mishap and any(k not in strict for k in framed):
        mishap = any(h.score <= -0.5 for h in others)
    kind = (
        _resolved(words, hits)
        or bool(lows & _TURN)
        or any(h.score >= 1.0 and h.term not in _PRAISE for h in others)
    )
    out = list(hits)
    ironic = bool(always) or (mishap and not kind)
    at_self = any(
        _follows(words, at[hits[k].hit.start] + len(hits[k].hit.term.split()), p)
        for k in framed
        for p in _AT_SELF
    )
    tags = _SELF_IRONIC_TAGS if at_self else _IRONIC_TAGS
    for k in framed if ironic else harmful:
        hit = out[k].hit
        turned = replace(hit, score=_IRONIC_SCORE * hit.score, tags=tags)
        out[k] = replace(out[k], hit=turned)
    for start, end in always:
        hit = Hit(IRONY, start, _ALWAYS_SCORE, 1, _IRONIC_TAGS)
        out.append(RawHit(hit, end, False, False))
    if harmful or (framed and ironic):
        # A marker for the emoji and laughter that go with the irony ("Yay me 🎉").
        mark = Hit(IRONY_AT_SELF if at_self else IRONY, words[0].start, 0.0, 0, ())
        out.append(RawHit(mark, words[0].end, False, False))
    return out
