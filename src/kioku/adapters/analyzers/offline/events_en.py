"""English life events told without a feeling word: achievement and loss.

"I passed my driving test", "we won the final", "she landed the job" report an achievement;
"I failed the exam", "we lost our dog" a loss. The verb and its object may be a few words apart
(a determiner, a possessive, an adjective), so these are matched as a verb followed by one of
its objects within the same clause, not as fixed phrases. A negated verb ("didn't pass the exam")
turns the event around, and a question or a wish ("did you pass the test?", "I hope I pass the
exam") is left to the clause weighting that questions and wishes already get.
"""

from __future__ import annotations

from typing import Final

from .hits import Hit
from .match_ja import RawHit
from .tokenize_en import Word

__all__ = ["match_events"]

_EXAMS: Final = frozenset(
    {"exam", "exams", "test", "bar", "interview", "certification", "boards", "finals", "course"}
    | {"everything"}
)
_AWARDS: Final = frozenset(
    {"job", "offer", "promotion", "raise", "award", "prize", "scholarship", "grant", "contract"}
)
_CONTESTS: Final = frozenset(
    {"race", "final", "match", "game", "championship", "tournament", "medal", "lottery", "case"}
)
#: Long efforts whose end is an achievement ("finally finished my thesis").
_MILESTONES: Final = frozenset(
    {"thesis", "dissertation", "phd", "marathon", "degree", "novel", "apprenticeship", "residency"}
)
_BONES: Final = frozenset(
    {"leg", "arm", "wrist", "ankle", "nose", "rib", "ribs", "foot", "hand", "finger", "hip"}
    | {"collarbone", "toe", "knee", "back"}
)
_KIN: Final = frozenset(
    {
        "mom",
        "mum",
        "mother",
        "dad",
        "father",
        "grandma",
        "grandmother",
        "grandpa",
        "grandfather",
        "wife",
        "husband",
        "son",
        "daughter",
        "brother",
        "sister",
        "friend",
        "partner",
        "baby",
        "dog",
        "cat",
        "pet",
        "uncle",
        "aunt",
        "cousin",
    }
)
#: verb forms -> (objects, score, tags)
_EVENTS: Final[dict[str, tuple[frozenset[str], float, tuple[str, ...]]]] = {
    "passed": (_EXAMS, 2.2, ("pride", "joy")),
    "aced": (_EXAMS, 2.4, ("pride", "joy")),
    "won": (_CONTESTS | _AWARDS, 2.2, ("joy", "pride")),
    "landed": (_AWARDS | frozenset({"client", "deal"}), 2.2, ("joy", "pride")),
    "got": (_AWARDS, 1.8, ("joy", "pride")),
    "earned": (_AWARDS | frozenset({"degree", "diploma", "license", "licence"}), 2.0, ("pride",)),
    "defended": (frozenset({"thesis", "dissertation", "phd"}), 2.2, ("pride", "joy")),
    "sold": (frozenset({"first"}), 2.0, ("pride", "joy")),
    "finished": (_MILESTONES, 2.0, ("pride", "relief")),
    "completed": (_MILESTONES, 2.0, ("pride", "relief")),
    "broke": (_BONES, -1.8, ("sadness",)),
    "sprained": (_BONES, -1.4, ("sadness",)),
    "failed": (_EXAMS, -2.2, ("sadness",)),
    "flunked": (_EXAMS, -2.2, ("sadness",)),
    "lost": (_KIN | frozenset({"job"}), -2.6, ("sadness",)),
}
#: Words that may stand between the verb and its object.
_FILLER: Final = frozenset(
    {
        "my",
        "our",
        "his",
        "her",
        "their",
        "the",
        "a",
        "an",
        "first",
        "final",
        "driving",
        "entrance",
        "job",
        "new",
        "big",
        "little",
        "old",
        "beloved",
        "dear",
        "best",
        "math",
        "english",
        "history",
        "law",
        "medical",
        "state",
        "sweet",
        "cup",
        "grand",
    }
)
#: Objects that are also work words ("the test passed", "won the case"): damped in task text.
_TOPICAL: Final = frozenset(
    {"test", "case", "contract", "deal", "client", "match", "game", "course"}
)
#: "didn't pass the exam", "didn't get the job": the base form counts only when negated.
_BASE: Final = {"pass": "passed", "win": "won", "get": "got", "land": "landed"}
_REACH: Final = 4
_NEGATORS: Final = frozenset({"not", "never", "didn't", "didnt", "couldn't", "barely", "almost"})


def match_events(words: list[Word]) -> list[RawHit]:
    """Hits for achievement and loss events in ``words``."""
    hits: list[RawHit] = []
    for i, w in enumerate(words):
        event = _EVENTS.get(w.low)
        before = {x.low for x in words[max(0, i - 2) : i]}
        negated = bool(before & _NEGATORS)
        if event is None and negated and w.low in _BASE:
            event = _EVENTS[_BASE[w.low]]
        if event is None:
            continue
        objects, score, tags = event
        for j in range(i + 1, min(i + 1 + _REACH, len(words))):
            low = words[j].low
            if low in objects and (j + 1 == len(words) or words[j + 1].low not in objects):
                value, out_tags = score, tags
                if negated:  # a missed success is a let-down, a near miss a relief
                    value, out_tags = (
                        (-0.8 * score, ("sadness",)) if score > 0 else (-0.5 * score, ("relief",))
                    )
                hit = Hit(f"{w.low} {low}", w.start, value, 1, out_tags, negated)
                hits.append(RawHit(hit, words[j].end, low in _TOPICAL, False))
                break
            if low not in _FILLER:
                break
    return hits
