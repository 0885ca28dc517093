"""The English rule table of profile claims, compiled (see :mod:`~kioku.core.profiles.extract_en`).

Each rule of :data:`_TABLE` is one pattern anchored on the speaker; :data:`RULES` holds them
compiled, with the quick tests that rule a pattern out of a sentence before it is searched:
the words one of which every match holds (:data:`WORDS`) and the search its start needs
(:data:`GATES`).
"""

from __future__ import annotations

import re
from typing import Final

from kioku.core.profiles import extract as lex

__all__ = ["ANY", "ANY_LOW", "GATES", "GATES_LOW", "PIECES", "RULES", "WORDS", "X", "expand"]

X: Final = re.IGNORECASE
PIECES: Final = {
    "{ADV}": lex.EN_ADVERBS,
    "{I}": r"\bi\s+(?:{ADV}\s+){0,3}",
    "{IM}": r"\bi(?:'m|\s+am|m)\s+(?:{ADV}\s+){0,2}",
    "{KIN}": lex.EN_KIN_ADJECTIVES,
    "{PETS}": lex.EN_PETS,
    "{FAMILY}": lex.EN_FAMILY,
}
_END: Final = r"(?=\s*(?:$|[,.!;)]|(?:and|but|lol|haha|btw|now|today|too|this|last)\b))"

#: One rule a line: kind (p: preference, f: fact), handler key, polarity, confidence, pattern;
#: an indented line continues the pattern above. For a preference the key names the variant;
#: for a fact it is the fact key or the name of the handler that decides it.
_TABLE: Final = r"""
p like   1 .80 {I}(?:(?:love|like|adore|enjoy)\s+){1,3}
p hate  -1 .80 {I}(?:(?:hate|dislike|detest|despise|loathe|can'?t\s+stand|cannot\s+stand)\s+){1,3}
p hate  -1 .80 {I}(?:don'?t|do\s+not)\s+(?:{ADV}\s+)?(?:like|enjoy|care\s+for)\s+
p prefer 1 .70 {I}prefer\s+
p fan    1 .75 \bi(?:'m|\s+am|m)\s+(?:{ADV}\s+){0,2}(?P<neg>not\s+)?(?:{ADV}\s+){0,2}
    (?:(?:a|the)\s+(?:big(?:gest)?\s+|huge\s+)?fan\s+of|into|crazy\s+about
    |(?P<strong>obsessed\s+with|hooked\s+on|addicted\s+to))\s+
p fan    1 .70 ^\W*(?:(?:honestly|tbh|ngl|lol|but|and)\W+)?(?P<neg>not\s+)?
    (?:(?:really|much|exactly)\s+)?(?:a\s+)?(?:(?:big|huge)\s+)?fan\s+of\s+
p fanof  1 .70 {IM}(?P<neg>not\s+)?an?\s+(?:(?:big|huge|massive|giant|die-?hard)\s+)?
    (?P<what>[\w'-]+(?:\s+[\w'-]+)?)\s+fan\b(?!\s+of)
p fav    1 .85 \bmy\s+(?:(?:all[- ]time|absolute|personal|{ADV})\s+)?(?:fav(?:ou?rite)?|fave)
    (?:s|\s+(?P<cat>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,3}?))?(?:\s+(?:is|are)|'s)\s+
    (?:(?:probably|definitely|still|easily|just|has\s+to\s+be)\s+)*
p after  1 .75 (?:\s+(?:is|are)|'s)\s+(?P<neg>not\s+)?
    (?:(?:probably|definitely|still|really|totally|more|just|kinda|so|always)\s+){0,3}
    my\s+(?:(?P<fav>(?:all[- ]time\s+)?(?:fav(?:ou?rite)?|fave))|thing|jam)\b(?:\s+(?P<cat>[a-z]+))?
p after  1 .70 \s+is\s+life\b(?=\s*(?:$|[^\w\s]))
f name   0 .95 \bmy\s+name(?:'s|\s+is)\s+
f callme 0 .85 \bcall\s+me\s+
f hello  0 .70 ^\W*(?:hi|hello|hey|hiya|heya|howdy|greetings|good\s+(?:morning|afternoon|evening))\b
    [\s,!.]*(?:(?:there|all|everyone|guys|folks)\b[\s,!.]*)?(?:i'm|i\s+am|im)\s+
f residence 0 .90 {I}(?:live|reside)\s+in\s+
f residence 0 .85 {IM}based\s+(?:in|out\s+of)\s+
f residence 0 .65 \bwe\s+(?:{ADV}\s+){0,2}live\s+in\s+
f residence 0 .70 {I}moved\s+(?:over\s+|back\s+)?to\s+
f origin 0 .85 {IM}(?:originally\s+)?from\s+
f origin 0 .75 {I}(?:grew\s+up|was\s+(?:born\s+and\s+raised|raised|born))\s+in\s+
f employer 0 .85 {I}work\s+(?:at|for)\s+
f occupation 0 .85 {I}work\s+as\s+(?:an?\s+)?
f occupation 0 .75 {IM}an?\s+
f age    0 .80 {IM}(?P<n>\d{1,3})(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*y/?o)?{END}
f age    0 .75 (?:\bi\s+(?:just\s+)?|^\W*just\s+)turned\s+(?P<n>\d{1,3}){END}
f birthday 0 .85 \bmy\s+(?:birthday|bday|b-day)\s+is\s+(?:on\s+|in\s+)?
f birthday 0 .85 {I}was\s+born\s+on\s+
f allergy 0 .90 {IM}(?:very\s+|severely\s+|deathly\s+|mildly\s+)?allergic\s+to\s+
f allergen 0 .85 {I}have\s+(?:an?\s+|(?:a\s+)?(?:severe|mild|bad|serious)\s+)?
    (?P<what>[a-z]+(?:\s+[a-z]+)?)\s+allerg(?:y|ies)\b
f diet   0 .85 {IM}(?:an?\s+)?(?:strict\s+)?(?P<what>vegetarian|vegan|pescatarian|pescetarian
    |gluten[- ]free|lactose[- ]intolerant|celiac|coeliac|keto)\b(?![-'])
    (?!\s*(?:food|restaurant|option|place|dish|recipe|friendly|cook))
f language 0 .85 {I}(?:(?:can\s+)?speak|am\s+fluent\s+in)\s+|{IM}fluent\s+in\s+
    |\bmy\s+(?:native|first|mother)\s+(?:language|tongue)\s+is\s+|{IM}an?\s+native\s+(?=\w+\s+speaker)
f have   0 .85 \bi(?:\s+(?:{ADV}\s+){0,2}have(?:\s+got)?|'ve\s+got|ve\s+got)\s+
f adopted 0 .75 {I}(?:adopted|rescued|got)\s+
f my     0 .70 \bmy\s+(?P<what>(?:{KIN}\s+)?(?!(?:baby|boys|girls)\b)(?:{FAMILY}|{PETS}))\b(?!-)
f married 0 .75 {IM}(?P<what>married|engaged)(?=\s*(?:$|[,.!;]|(?:and|with|for|now|lol|haha)\b))
"""


def expand(pattern: str) -> str:
    """``pattern`` with its ``{PIECE}`` placeholders filled in (twice: pieces hold pieces)."""
    for _ in range(2):
        for name, piece in PIECES.items():
            pattern = pattern.replace(name, piece)
    return pattern.replace("{END}", _END)


#: Every rule's match holds one of these: "I" (before a space, "'", "m " or "ve"), "my", "we",
#: "me" ("call me"), "fan of", "life" ("... is life") or "turned" ("just turned 30"). A sentence
#: without any is not read further.
ANY: Final = re.compile(r"\bi(?:\s|'|m\s|ve)|\b(?:my|we|me)\s|fan\s+of|\blife\b|turned", X)
#: What every match of a pattern starting so holds: a quick search that rules the pattern out
#: of a sentence without it (most sentences say neither "I", "I'm" nor "my").
GATES: Final = (
    (r"\bi\s+", re.compile(r"\bi\s", X)),
    (r"\bi(?:'m|\s+am|m)\s+", re.compile(r"\bi(?:'m|\s+am|m\s)", X)),
    (r"\bmy\s+", re.compile(r"\bmy\s", X)),
)


def _alternatives(pattern: str) -> bool:
    """Whether ``pattern`` has a ``|`` outside any group (its start says nothing then)."""
    depth, escaped, in_class, first = 0, False, False, 0
    for i, char in enumerate(pattern):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]" or i == first  # "]" first in a set is one of its characters
        elif char == "[":
            in_class = True
            first = i + 2 if pattern.startswith("^", i + 1) else i + 1
        elif char in "()":
            depth += 1 if char == "(" else -1
        elif char == "|" and depth == 0:
            return True
    return False


def _gate(pattern: str) -> int:
    """The index in :data:`GATES` of the search a sentence must pass for ``pattern`` to match
    in it, or -1 (always try it)."""
    if _alternatives(pattern):
        return -1
    return next((i for i, (start, _) in enumerate(GATES) if pattern.startswith(start)), -1)


RULES: Final = tuple(
    (rule[0], parts[1], int(parts[2]), float(parts[3]), re.compile(source, X), _gate(source))
    for rule in re.split(r"\n(?! )", _TABLE.strip())
    for parts in [re.sub(r"\n\s+", "", rule).split(maxsplit=4)]
    for source in [expand(parts[4])]
)

#: For each rule of :data:`_TABLE`, in order: words (lower case) of which every match of the
#: rule holds one, or none to name. An ASCII sentence with none of a rule's words is not
#: searched with it: a substring test costs a fraction of a case-blind search. Other text is
#: searched with every rule, since a case-blind pattern also matches a few letters outside
#: ASCII ("ſ" for "s", "ı" for "i") that lower-casing does not turn into the word.
WORDS: Final[tuple[tuple[str, ...], ...]] = (
    ("love", "like", "adore", "enjoy"),
    ("hate", "like", "detest", "despise", "loathe", "stand"),
    ("like", "enjoy", "care"),
    ("prefer",),
    ("fan", "into", "crazy", "obsessed", "hooked", "addicted"),
    ("fan",),
    ("fan",),
    ("fav",),
    ("my",),
    ("life",),
    ("name",),
    ("call",),
    ("hi", "hello", "hey", "howdy", "greetings", "good"),
    ("live", "reside"),
    ("based",),
    ("live",),
    ("moved",),
    ("from",),
    ("grew", "raised", "born"),
    ("work",),
    ("work",),
    (),
    (),
    ("turned",),
    ("birthday", "bday", "b-day"),
    ("born",),
    ("allergic",),
    ("allerg",),
    ("vegan", "vegetarian", "pesc", "gluten", "lactose", "celiac", "coeliac", "keto"),
    ("speak", "fluent", "native", "language", "tongue"),
    ("have", "got"),
    ("adopted", "rescued", "got"),
    (),
    ("married", "engaged"),
)
if len(WORDS) != len(RULES):
    raise AssertionError("every rule of _TABLE needs its line in WORDS")
#: :data:`ANY` and the searches of :data:`GATES` for lower-cased ASCII text, where they match
#: as the case-blind ones do on the text (their letters are all lower case), only quicker.
ANY_LOW: Final = re.compile(ANY.pattern)
GATES_LOW: Final = tuple(re.compile(search.pattern) for _, search in GATES)
