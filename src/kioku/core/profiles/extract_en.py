"""English patterns for profile claims (see :mod:`kioku.core.profiles`).

Every pattern is anchored on the speaker: "I ...", "I'm ...", "my ...". A sentence is skipped
when it is a question ("do you like sushi?", "are you from Japan"), and a match is skipped
when the words before it in its sentence make it hypothetical ("if", "would", "I'd", "used
to"), negate it ("I don't think I ...") or report someone else's view ("she says I ...").
Verbs match in the present tense only, so "I used to live", "I lived" and "I'm going to move"
never match. Values are cut at the first clause boundary (punctuation, "but", "because",
"with", time words such as "now" or "last year"), trimmed of filler ("too", "a lot", "lol")
and refused when longer than a few words, when they point at the conversation ("it", "that",
"your work") or when they name people. Places and names must be capitalised unless the whole
sentence is written in lower case.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final

from kioku.core.profiles import extract as lex
from kioku.core.profiles.extract import Found, sentences
from kioku.core.profiles.extract_en_rules import (
    ANY,
    ANY_LOW,
    GATES,
    GATES_LOW,
    PIECES,
    RULES,
    WORDS,
    X,
    expand,
)

__all__ = ["scan"]

#: How many characters before a match are read to judge it (questions, negations, "if").
_CONTEXT: Final = 160
#: How many characters after a pattern a value may span (values have six words at most).
_VALUE_CHARS: Final = 100
#: Whether a sentence holds a lower-case letter, as a case-blind search sees one.
_LETTER: Final = re.compile(r"[a-z]", X)
#: "I" as a word, in the words before a reporting verb.
_SELF: Final = re.compile(r"\bi\b", X)

_TAG = re.compile(
    r",\s*(?:(?:and|what\s+about|how\s+about|how\s+bout|do)\s+)?(?:you|u)\s*\?+$|,\s*(?:wbu|hbu)\s*\?+$",
    X,
)
_ASKS = re.compile(
    r"^\W*(?:do|does|did|are|is|was|were|can|could|would|will|should|have|has|had|may)\s+"
    r"(?:you|u|ya|y'all|we|they|he|she|it|i|your)\b",
    X,
)
_HYPO = re.compile(r"\b(?:" + lex.EN_UNREAL + r")\b|'d\b", X)
_NEG = re.compile(r"n't\b|\b(?:not|never|no\s+longer|dont|didnt|doesnt|cant|cannot|wont)\b", X)
_CLAUSE = re.compile(r"[,:]|\b(?:but|and|so|because|though|although)\b", X)
_REPORT = re.compile(r"\b(?:" + lex.EN_REPORTING + r")\b", X)
_CUT = re.compile(
    r"[,;:.!?()\[\]{}\"…~]|\s[-–—]|[-–—]\s|[^\w\s'&+/#.-]|\b(?:" + lex.EN_BREAKS + r")\b", X
)
_TRAIL = re.compile(r"(?:\s+(?:and|or|but|really|also|though|tho|ok|okay|either)|[\s\W_])+$", X)
_WORD = re.compile(r"[^\W\d_][\w'-]*|\d[\w'-]*")
_ARTICLE = re.compile(r"(?:a|an|the)\s+", X)
_PET = re.compile(r"(?:\w+\s+)*?(?:" + PIECES["{PETS}"] + r")$", X)
_NP = re.compile(
    expand(
        r"(?:(?P<count>a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2}|several)\s+)?"
        r"(?P<what>(?:(?:{KIN}|adult|grown|rescue|old|new|sweet|black|white|tabby)\s+){0,2}"
        r"(?:{FAMILY}|{PETS}))(?P<name>\s+(?:named|called)\s+[^\W\d_][\w'-]*)?(?=\s*(?:$|[^\w\s]|(?:and|"
        r"who|that|which|with|at|in|but|so|lol|haha|too|now|already|aged|of|i|we|it|is|are)\b))"
    ),
    X,
)
_LANG_STOP = re.compile(r"[.;!?]|\b(?:but|because|so|though|when|if|with|at|to|since|for)\b", X)
_AND = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+", X)
_DATE = re.compile(r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", X)

Span = tuple[int, int]


def _statement(sentence: str) -> str | None:
    """The sentence to read (a closing "..., what about you?" dropped); None for a question."""
    text = sentence.rstrip()
    if text.endswith("?"):
        tag = _TAG.search(text)
        if tag is None:
            return None
        text = text[: tag.start()]
    return None if _ASKS.match(text) else text


def _blocked(prefix: str) -> bool:
    """Whether the words before a match make it hypothetical, negated or someone else's."""
    if _HYPO.search(prefix) or _NEG.search(_CLAUSE.split(prefix)[-1]):
        return True
    return any(
        not _SELF.search(prefix[max(0, m.start() - 16) : m.start()])
        for m in _REPORT.finditer(prefix)
    )


def _cased(sentence: str) -> bool:
    """Whether the writer uses capitals: a word after the first, other than "I", has one."""
    words = _WORD.findall(sentence)[1:]
    return any(w[0].isupper() for w in words if w.lower() not in ("i", "i'm", "i've", "im"))


def _span(body: str, pos: int, extra: str = "") -> Span | None:
    """The value from ``pos``: up to the first clause boundary, trailing filler trimmed."""
    while pos < len(body) and body[pos].isspace():
        pos += 1
    limit = min(len(body), pos + _VALUE_CHARS)
    cut = _CUT.search(body, pos, limit)
    end = cut.start() if cut else limit
    if extra:
        more = re.compile(r"\b(?:" + extra + r")\b", X).search(body, pos, end)
        end = more.start() if more else end
    trail = _TRAIL.search(body, pos, end)
    end = trail.start() if trail else end
    return (pos, end) if end > pos else None


def _plain(value: str, limit: int) -> bool:
    """Whether ``value`` is a plain phrase of at most ``limit`` words about the speaker's world:
    not a pointer into the conversation ("it", "that", "how ..."), not about "you"."""
    words = value.lower().split()
    return (
        0 < len(words) <= limit
        and words[0] not in lex.EN_BAD_START
        and not lex.EN_SECOND.intersection(words)
        and any(c.isalpha() for c in value)
    )


def _topic(body: str, pos: int, extra: str = "") -> Span | None:
    """A preference topic at ``pos``: a plain phrase of up to six words, not a person, and not
    one's own pet ("I love my dog" is a pet fact, not a taste)."""
    span = _span(body, pos, extra)
    if span is None or not _plain(body[span[0] : span[1]], 6):
        return None
    words = body[span[0] : span[1]].lower().split()
    if words[-1] in lex.EN_PEOPLE or (
        words[0] == "my" and (len(words) < 2 or _PET.match(words[-1]))
    ):
        return None
    return span


def _noun(body: str, pos: int, extra: str, stop: frozenset[str], limit: int) -> Span | None:
    """A noun phrase value without its leading article (an employer, an allergen)."""
    span = _span(body, pos, extra)
    if span is None:
        return None
    m = _ARTICLE.match(body, span[0], span[1])
    start = m.end() if m else span[0]
    value = body[start : span[1]]
    if not _plain(value, limit) or value.split()[0].lower() in stop:
        return None
    return start, span[1]


def _place(body: str, pos: int, cased: bool) -> Span | None:
    """A place name at ``pos``: capitalised when the writer uses capitals, never "a van" or
    "the moment", up to five words ("a small town in Ohio" passes on its proper noun)."""
    span = _span(body, pos, r"and|near|for|from|to|in\s+the|since|on|at|where")
    if span is None:
        return None
    m = _ARTICLE.match(body, span[0], span[1])
    start = m.end() if m else span[0]
    value = body[start : span[1]]
    if not _plain(value, 5) or any(c.isdigit() for c in value):
        return None
    if value.split()[0].lower() in lex.EN_NOT_PLACE | {"a", "an", "my"}:
        return None
    inside = re.search(r"\bin\s+[A-Z]", value) if m and m.group()[0] in "aA" else None
    if (cased and not (value[0].isupper() or inside)) or (not cased and m is not None):
        return None
    return start, span[1]


def _name(body: str, pos: int, capital: bool) -> Span | None:
    """A person's name at ``pos``: up to three words, capitalised when ``capital``, and not a
    word that only looks like one ("Call me maybe", "Hi, I'm Japanese")."""
    span = _span(body, pos, r"and|from|i|im|i'm|nice|here|by|the|a|an|at|to|in")
    if span is None:
        return None
    words = list(_WORD.finditer(body, span[0], span[1]))[:3]
    if capital:
        upper = [not w.group()[0].isupper() for w in words]
        words = words[: upper.index(True)] if True in upper else words
    if not words or words[0].start() != span[0]:
        return None
    low = words[0].group().lower()
    if low in lex.EN_NOT_NAME | lex.EN_NATIONAL | lex.EN_LANGUAGES | lex.EN_OCCUPATIONS:
        return None
    return span[0], words[-1].end()


def _occupation(body: str, pos: int) -> Span | None:
    """An occupation noun phrase at ``pos``: up to five words ending in a known occupation."""
    words = list(_WORD.finditer(body, pos, pos + 60))[:5]
    head = None
    for i, w in enumerate(words):
        low = w.group().lower()
        if i and body[words[i - 1].end() : w.start()].strip():
            break
        if low in lex.EN_JUDGED or low in ("at", "for", "in", "and", "but", "who", "of", "with"):
            break
        prev = words[i - 1].group().lower() if i else ""
        if low in lex.EN_OCCUPATIONS or (low == "worker" and prev in lex.EN_WORKER_KINDS):
            head = i
    if head is None or words[0].start() != pos:
        return None
    if re.match(r"\s+of\b|'s\b", body[words[head].end() :], X):
        return None
    return pos, words[head].end()


def _preference(body: str, m: re.Match[str], variant: str, pol: int) -> tuple[Span, int] | None:
    """The topic span and polarity of one preference rule's match, None when refused."""
    pos, groups = m.end(), m.groupdict()
    cat = (groups.get("cat") or "").lower().split()
    if cat and (cat[0] in lex.EN_REACTION or lex.EN_SECOND.intersection(cat)):
        return None
    if groups.get("neg"):
        if groups.get("fav") or groups.get("strong"):
            return None
        pol = -1
    if variant == "after":
        floor = max(0, m.start() - _CONTEXT)
        start = max((c.end() for c in _CLAUSE.finditer(body, floor, m.start())), default=floor)
        span = _topic(body[: m.start()], start)
        return None if span is None or span[1] < m.start() else (span, pol)
    if variant == "fanof":
        what = body[m.start("what") : m.end("what")]
        return ((m.start("what"), m.end("what")), pol) if _plain(what, 2) else None
    if body[pos : pos + 3].lower() == "to ":
        if pol < 0:
            return None
        pos += 3
    span = _topic(body, pos, r"over|to|than|instead|rather" if variant == "prefer" else "")
    return None if span is None else (span, pol)


def _fact(body: str, m: re.Match[str], key: str, cased: bool) -> Iterator[tuple[str, Span]]:
    """The (fact key, value span) pairs one fact rule's match yields."""
    pos, groups = m.end(), m.groupdict()
    span: Span | None = None
    also: tuple[str, Span | None] | None = None  # a second claim the same words make
    if key in ("name", "callme", "hello"):
        lead = body[: m.start()].strip().lower()
        if key == "callme" and not re.fullmatch(
            r"(?:(?:hi|hey|hello|oh|ok|okay)\W*)?(?:(?:you\s+can|u\s+can|please|pls|just)\s+)*",
            lead,
        ):
            return
        span = _name(body, pos, capital=cased or key != "name")
        key = "name"
    elif key in ("residence", "origin"):
        year = re.match(r"\s*(\d{4})\b", body[pos:])
        if year and "born" in m.group().lower():
            yield "birthday", (pos + year.start(1), pos + year.end(1))
            return
        span = _place(body, pos, cased)
    elif key == "employer":
        span = _noun(body, pos, r"in|as|since|from|on|doing|where|and", lex.EN_NOT_EMPLOYER, 5)
        role = re.compile(r"\s+as\s+an?\s+", X).match(body, span[1]) if span else None
        also = ("occupation", _occupation(body, role.end())) if role else None
    elif key == "occupation":
        span = _occupation(body, pos)
        where = re.compile(r"\s+(?:at|for)\s+", X).match(body, span[1]) if span else None
        firm = _noun(body, where.end(), r"in|since|and", lex.EN_NOT_EMPLOYER, 5) if where else None
        also = ("employer", firm)
    elif key == "age":
        span = (m.start("n"), m.end("n")) if 0 < int(m.group("n")) < 120 else None
    elif key == "birthday":
        span = _span(body, pos, r"and|so")
        if span and not (len(body[span[0] : span[1]].split()) <= 4 and _DATE.search(body, *span)):
            span = None
    elif key == "allergy":
        span = _noun(body, pos, r"and|or", lex.EN_NOT_ALLERGEN, 4)
    elif key in ("allergen", "diet", "married", "my"):
        what = groups["what"]
        if key == "allergen" and what.split()[0].lower() in lex.EN_NOT_ALLERGEN | lex.EN_BAD_START:
            return
        span = m.start("what"), m.end("what")
        key = {"allergen": "allergy", "married": "family"}.get(key, key)
        if key == "my":
            key = "pet" if _PET.match(what) else "family"
    elif key == "language":
        stop = _LANG_STOP.search(body, pos, pos + 80)
        for w in _WORD.finditer(body, pos, stop.start() if stop else pos + 80):
            if w.group().lower() in lex.EN_LANGUAGES:
                yield "language", (w.start(), w.end())
    elif key in ("have", "adopted"):
        at = pos
        while np := _NP.match(body, at):
            pet = _PET.match(np.group("what")) is not None
            if (pet or key == "have") and (np.group("count") or np.group("what")[-1] in "sS"):
                counted = (np.group("count") or "a").lower() not in ("a", "an")
                start = np.start("count") if counted else np.start("what")
                yield ("pet" if pet else "family"), (start, np.end())
            joined = _AND.match(body, np.end())
            if not joined:
                break
            at = joined.end()
    if span is not None:
        yield key, span
        if also is not None and also[1] is not None:
            yield also[0], also[1]


def scan(text: str, *, gates: bool = True) -> list[Found]:
    """The English claims in ``text`` (already prepared: capped, quotes blanked out).

    A sentence is read only when it has a word some rule needs (:data:`ANY`), a rule whose
    pattern starts with "I", "I'm" or "my" only on a sentence that has it, and on ASCII text
    only on a sentence with one of the rule's :data:`WORDS`; ``gates=False`` tries every rule
    on every sentence: the same claims, slower.
    """
    found: list[Found] = []
    for start, end in sentences(text):
        body = _statement(text[start:end])
        if body is None or not _LETTER.search(body):
            continue
        passed: list[bool] = []
        low: str | None = None  # the sentence in lower case, when it is ASCII
        if gates and body.isascii():
            low = body.lower()
            if not ANY_LOW.search(low):
                continue
            passed = [search.search(low) is not None for search in GATES_LOW]
        elif gates:
            if not ANY.search(body):
                continue
            passed = [search.search(body) is not None for _, search in GATES]
        cased: bool | None = None  # read when a fact rule matches
        rules = zip(RULES, WORDS, strict=True)
        for (kind, key, polarity, confidence, pattern, gate), words in rules:
            if passed and gate >= 0 and not passed[gate]:
                continue
            if low is not None and words:
                for word in words:
                    if word in low:
                        break
                else:
                    continue  # none of the rule's words: it cannot match
            for m in pattern.finditer(body):
                if _blocked(body[max(0, m.start() - _CONTEXT) : m.start()]):
                    continue
                if kind == "p":
                    liked = _preference(body, m, key, polarity)
                    if liked is not None:
                        (a, b), pol = liked
                        first, last = start + min(a, m.start()), start + max(b, m.end())
                        found.append(("preference", "", body[a:b], pol, first, last, confidence))
                    continue
                if cased is None:
                    cased = _cased(body)
                for fact, (a, b) in _fact(body, m, key, cased):
                    first = start + min(a, m.start())
                    found.append(("fact", fact, body[a:b], 0, first, start + b, confidence))
    return found
