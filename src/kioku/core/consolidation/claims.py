"""Claims and the offline contradiction rules (spec 001 知識矛盾検出・解決).

A claim is what one sentence says about a subject: where someone lives, where they work, who is
in charge of something, an attribute ("Ken's birthday is May 3"), the tool someone uses, and
under which condition ("on weekends", 「平日は」). Two claims about the same subject and relation
with different values conflict, and spec 001's three strategies resolve them without an LLM:
``coexist`` when their conditions differ, ``merge`` when one value contains the other ("tokyo"
and "shibuya, tokyo"), otherwise ``supersede`` (the newer replaces the older).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from kioku.core.consolidation.classify import split_sentences
from kioku.core.consolidation.model import Conflict, ConflictJudgement, Source

__all__ = ["Claim", "claims_of", "detect_conflicts", "judge_claims"]


@dataclass(frozen=True, slots=True)
class Claim:
    """One statement: ``subject``'s ``relation`` is ``value`` (under ``condition``, an English
    phrase such as "on weekdays", or always when None); ``text`` is the sentence that says so.
    Subject and value are normalised (see :func:`normalise`)."""

    subject: str
    relation: str
    value: str
    condition: str | None
    text: str


# -- conditions -------------------------------------------------------------------------------

_CONDITIONS_EN: Final = (
    (r"(?:on|during|over)\s+(?:the\s+)?weekdays?", "on weekdays"),
    (r"(?:on|during|over)\s+(?:the\s+)?weekends?", "on weekends"),
    (r"(?:in|during)\s+(?:the\s+)?summer", "in summer"),
    (r"(?:in|during)\s+(?:the\s+)?winter", "in winter"),
    (r"at\s+work", "at work"),
    (r"at\s+home", "at home"),
)
_CONDITIONS_JA: Final = (
    (r"平日(?:は|に|、)", "on weekdays"),
    (r"(?:週末|土日)(?:は|に|、)", "on weekends"),
    (r"夏(?:は|に|場は)", "in summer"),
    (r"冬(?:は|に|場は)", "in winter"),
    (r"(?:仕事|職場)では", "at work"),
    (r"(?:家|自宅)では", "at home"),
)
#: (pattern, condition, what replaces the phrase): a space in English, nothing in Japanese.
_CONDITION: Final = tuple(
    (re.compile(r"(?:^|,?\s+)\b" + p + r"\b,?", re.IGNORECASE), c, " ") for p, c in _CONDITIONS_EN
) + tuple((re.compile(r"(?<![\u4e00-\u9fff])" + p), c, "") for p, c in _CONDITIONS_JA)

# -- English ----------------------------------------------------------------------------------

_DET: Final = r"(?:[Tt]he|[Mm]y|[Oo]ur|[Hh]is|[Hh]er|[Tt]heir|[Yy]our)"
_NAME: Final = r"[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’-]*){0,2}"
_SUBJ: Final = rf"(?<![\w'’])(?P<s>{_DET}\s+[a-z][\w-]*|{_NAME}|I|[Ww]e)"
_STOP: Final = (
    r"(?=\s*(?:[.!?;](?:\s|$)|,(?!\s+[A-Z])|$)|\s+(?:since|because|but|and|now|these|this|"
    r"last|for|from|until|till|with|when|after|before|as|to|every|on|in|at|instead|anymore|"
    r"nowadays|these days|too|again|already)\b)"
)
_VAL: Final = r"(?P<v>[^\s,;!?]+(?:(?:,\s+(?=[A-Z])|\s+)[^\s,;!?]+)*?)" + _STOP
_NOW: Final = (
    r"(?:[a-z][\w'’-]*(?:\s+[A-Z]?[\w'’-]+){0,3}\s+and\s+)?"  # "left Google and (now works)"
    r"(?:(?:now|still|currently|also|recently|just|finally|already)\s+)?"
)
_OBJ: Final = r"(?P<s>(?:[Tt]he\s+)?[\w][\w'’ -]{0,40}?)"

_EN: Final = tuple(
    (re.compile(pattern), relation)
    for pattern, relation in (
        (rf"{_SUBJ}\s+{_NOW}(?:lives|live|is living|are living)\s+in\s+{_VAL}", "residence"),
        (
            rf"{_SUBJ}\s+{_NOW}(?:has\s+|have\s+)?(?:moved|relocated)\s+(?:back\s+)?to\s+{_VAL}",
            "residence",
        ),
        (
            rf"{_SUBJ}\s+{_NOW}(?:works|work|is working|are working)\s+(?:at|for)\s+{_VAL}",
            "employer",
        ),
        (rf"{_SUBJ}\s+{_NOW}(?:has\s+|have\s+)?joined\s+{_VAL}", "employer"),
        (rf"{_SUBJ}\s+{_NOW}(?:uses|use|is using|are using)\s+{_VAL}", "tool"),
        (
            rf"{_SUBJ}\s+{_NOW}(?:has\s+|have\s+)?(?:switched|migrated)\s+(?:over\s+)?"
            rf"(?:from\s+[\w.-]+(?:\s+[\w.-]+)?\s+)?to\s+{_VAL}",
            "tool",
        ),
        (
            _SUBJ.replace("?P<s>", "?P<v>")
            + rf"\s+(?:is|are)\s+{_NOW}(?:in charge of|responsible for|the owner of)\s+"
            + _VAL.replace("?P<v>", "?P<s>"),
            "in_charge",
        ),
        (
            rf"(?<![\w'’])(?:[Tt]he\s+)?(?:owner|person in charge)\s+of\s+{_OBJ}\s+(?:is|are)\s+"
            + _NOW
            + _VAL,
            "in_charge",
        ),
        (rf"{_SUBJ}['’]s\s+(?P<a>[a-z][\w -]{{0,30}}?)\s+(?:is|are)\s+{_NOW}{_VAL}", ""),
        (
            rf"(?<![\w'’])[Tt]he\s+(?P<a>[a-z][\w -]{{0,30}}?)\s+of\s+{_OBJ}\s+(?:is|are)\s+"
            + _NOW
            + _VAL,
            "",
        ),
    )
)
#: Things whose one value a team keeps, said without an owner ("The deadline is Friday", "the
#: meeting was moved to Thursday"): the subject is left empty, the attribute is the relation.
_SCHEDULE_EN: Final = (
    r"deadline|due date|meeting|standup|stand-up|kickoff|demo|review|budget|price|launch|"
    r"release(?: date)?|venue|location|meeting point|office"
)
_EN_SCHEDULE: Final = re.compile(
    rf"(?<![\w'’])(?:[Tt]he|[Oo]ur|[Mm]y)\s+(?P<a>{_SCHEDULE_EN})\s+(?:(?:is|was|has been|will be)"
    rf"\s+)?(?:now\s+|still\s+)?(?:moved\s+to\s+|changed\s+to\s+|pushed\s+to\s+|postponed\s+to\s+)?"
    + _VAL
)
#: "The staging server is now staging-02": a named thing's value, when it names something.
_EN_STATE: Final = re.compile(
    r"^(?:[Tt]he|[Oo]ur|[Mm]y)\s+(?P<a>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)\s+(?:is|are)\s+"
    r"(?:now\s+|still\s+|currently\s+)?(?!not\b|no\b|going\b|being\b)" + _VAL
)
#: A value that says when or where: a number, a day, a month, a name, or "in/at" a place.
_WHEN_WHERE: Final = re.compile(
    r"\d|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\btomorrow\b|\bnext\b|\bnoon\b"
    r"|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b|^(?:in|at)\s|(?-i:[A-Z])",
    re.IGNORECASE,
)
#: Capitalised words that open a sentence without naming anyone.
_OPENERS: Final = frozenset(
    "yesterday today tomorrow now recently so also btw actually oh well and but then since "
    "anyway apparently meanwhile finally lately currently".split()
)
#: Pronouns that name nobody in particular without the conversation around them.
_PRONOUNS: Final = frozenset("he she they it this that there".split())
_NOT_ATTRIBUTES: Final = frozenset({"owner", "person in charge"})

# -- Japanese ---------------------------------------------------------------------------------

_JA_SUBJ: Final = r"(?:^|(?<=[、\s]))(?P<s>[^\s、。！？「」『』]{1,20}?)(?:は|が)"
_JA_TIME: Final = (
    r"(?:(?:去年|今年|昨年|先月|今月|来月|先週|今週|来週|最近|この前|今は|今|現在は|現在|いまは|いま|"
    r"もう|ついに|既に|すでに|また)、?)*"
)
_JA_VAL: Final = r"(?P<v>[^\s、。！？「」]{1,30}?)"
_JA_HONORIFIC: Final = r"(?:さん|くん|君|様|さま|ちゃん|氏)?"
_JA_END: Final = r"(?:[。！!]|$)"
_JA: Final = tuple(
    (re.compile(pattern), relation)
    for pattern, relation in (
        (
            rf"{_JA_SUBJ}{_JA_TIME}{_JA_VAL}に住(?:んで(?:いる|います|いて|る|おり)|む|みます)",
            "residence",
        ),
        (rf"{_JA_SUBJ}{_JA_TIME}{_JA_VAL}に引っ越(?:した|しました|す|します)", "residence"),
        (
            rf"{_JA_SUBJ}{_JA_TIME}{_JA_VAL}で働(?:いて(?:いる|います|いて|る|おり)|く|きます)",
            "employer",
        ),
        (rf"{_JA_SUBJ}{_JA_TIME}{_JA_VAL}に勤めて(?:いる|います|る)", "employer"),
        (rf"{_JA_SUBJ}{_JA_TIME}{_JA_VAL}に(?:入社|転職)(?:した|しました)", "employer"),
        (
            rf"{_JA_SUBJ}{_JA_TIME}{_JA_VAL}を使(?:って(?:いる|います|いて|る|おり)|う|います)",
            "tool",
        ),
        (rf"{_JA_SUBJ}{_JA_TIME}{_JA_VAL}に(?:乗り換え|切り替え|移行し)(?:た|ました)", "tool"),
        (
            r"(?:(?P<s>[^\s、。！？「」『』]{1,30}?)の)?担当(?:者)?は"
            + _JA_TIME
            + _JA_VAL
            + _JA_HONORIFIC
            + r"(?:です|だ|でした|になりました|になった|に(?:変わ|代わ)(?:った|りました))?"
            + _JA_END,
            "in_charge",
        ),
        (
            r"(?:^|(?<=[、\s]))(?P<s>[^\s、。！？「」『』]{1,20}?)の(?P<a>[^\s、。！？「」『』の]{1,15}?)は"
            + _JA_TIME
            + r"(?P<v>[^、。！？「」]{1,30}?)"
            + _JA_HONORIFIC
            + r"(?:です|だ)"
            + _JA_END,
            "",
        ),
    )
)
_NOT_ATTRIBUTES_JA: Final = frozenset({"担当", "担当者"})
#: The same without an owner in Japanese: 「締め切りは金曜日です」,
#: 「会議は木曜日に変更になりました」.
_JA_SCHEDULE: Final = re.compile(
    r"(?:^|(?<=[、\s]))(?P<a>締め切り|締切|期限|納期|会議|打ち合わせ|ミーティング|定例|予算|価格|"
    r"リリース日|リリース|発売日|集合場所|会場|場所|日程|オフィス)は"
    + _JA_TIME
    + r"(?P<v>[^、。！？「」]{1,30}?)"
    + r"(?:です|だ|でした|に(?:変更|延期|移動)"
    + r"(?:になりました|になった|されました|された|しました|した)"
    + r"|になりました|になった|に決まりました|に決まった)"
    + _JA_END
)
#: 「田中さんは東京在住です」: residence.
_JA_RESIDENT: Final = re.compile(_JA_SUBJ + _JA_TIME + r"(?P<v>[^\s、。！？「」]{1,30}?)在住")

# -- normalising ------------------------------------------------------------------------------

_EDGE = re.compile(
    r"^[\s\"'“”‘’「」『』()（）\[\].,:;!?。、，！？]+|[\s\"'“”‘’「」『』()（）\[\].,:;!?。、，！？]+$"
)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_HONORIFIC = re.compile(r"(?:さん|くん|君|様|さま|ちゃん|氏)$")
_QUESTION = re.compile(r"[?？][\s」』)）]*$|(?:か|かな|っけ)[。\s]*$")


def normalise(value: str) -> str:
    """A subject or value as claims compare it: NFKC, whitespace collapsed, surrounding
    punctuation and quotes, a leading article and a trailing honorific (さん, くん, 様) removed,
    Latin letters lower-cased."""
    text = " ".join(unicodedata.normalize("NFKC", value).split())
    previous = None
    while previous != text:
        previous = text
        text = _EDGE.sub("", text)
        text = _ARTICLE.sub("", text)
        text = _HONORIFIC.sub("", text) if len(text) > 2 else text
    return text.lower()


def _conditions(sentence: str) -> tuple[str, str | None]:
    """The sentence without its condition phrase, and the condition (the first one found)."""
    found: str | None = None
    for pattern, condition, gap in _CONDITION:
        match = pattern.search(sentence)
        if match is not None:
            found = found or condition
            sentence = sentence[: match.start()] + gap + sentence[match.end() :]
    return " ".join(sentence.split()).strip(" ,、"), found


#: Ways a speaker names their own group: one subject.
_WE: Final = frozenset({"we", "us", "our team", "the team", "our company", "our group"})


def _subject(raw: str) -> str:
    """A normalised subject, without a capitalised opener ("Yesterday Ken": ken); "our team"
    and "we" are one subject."""
    words = raw.split()
    while len(words) > 1 and words[0].lower() in _OPENERS:
        words.pop(0)
    subject = normalise(" ".join(words))
    return "we" if subject in _WE else subject


def _matches(sentence: str) -> Iterator[tuple[str, str, str]]:
    """(subject, relation, value) for every pattern that matches ``sentence``."""
    for pattern, relation in (*_EN, *_JA):
        for match in pattern.finditer(sentence):
            groups = match.groupdict()
            name = relation
            if not name:
                attribute = normalise(groups["a"] or "")
                if attribute in _NOT_ATTRIBUTES or attribute in _NOT_ATTRIBUTES_JA:
                    continue
                name = attribute
            subject = _subject(groups["s"] or "")
            if (not subject and relation != "in_charge") or subject in _PRONOUNS:
                continue
            yield subject, name, normalise(groups["v"] or "")
    scheduled = False
    for match in _EN_SCHEDULE.finditer(sentence):
        if _WHEN_WHERE.search(match.group("v")):  # "is at 3pm", not "is important"
            scheduled = True
            yield "", normalise(match.group("a")), normalise(match.group("v"))
    state = None if scheduled else _EN_STATE.search(sentence)
    if state is not None and _WHEN_WHERE.search(state.group("v")):
        attribute = normalise(state.group("a"))
        if attribute not in _NOT_ATTRIBUTES:
            yield "", attribute, normalise(state.group("v"))
    for match in _JA_SCHEDULE.finditer(sentence):
        yield "", normalise(match.group("a")), normalise(match.group("v").lstrip("の"))
    for match in _JA_RESIDENT.finditer(sentence):
        subject = _subject(match.group("s"))
        if subject and subject not in _PRONOUNS:
            yield subject, "residence", normalise(match.group("v"))


def claims_of(text: str) -> list[Claim]:
    """The claims ``text`` makes, sentence by sentence, in order; questions make none."""
    claims: list[Claim] = []
    for sentence in split_sentences(text):
        if _QUESTION.search(sentence):
            continue
        body, condition = _conditions(sentence)
        verbatim = " ".join(sentence.split())
        for subject, relation, value in _matches(body):
            claim = Claim(subject, relation, value, condition, verbatim)
            if value and claim not in claims:
                claims.append(claim)
    return claims


# -- judging ----------------------------------------------------------------------------------


def _contains(longer: str, shorter: str) -> bool:
    """Whether ``shorter`` is part of ``longer``: as whole words in Latin script, as a
    substring otherwise."""
    if len(shorter) >= len(longer):
        return False
    if shorter.isascii():
        return re.search(rf"(?<!\w){re.escape(shorter)}(?!\w)", longer) is not None
    return shorter in longer


_LABELS: Final = {"in_charge": "person in charge"}


def _owner(subject: str) -> str:
    return f"{subject}'s" if subject else "the"


def judge_claims(older: Claim, newer: Claim) -> ConflictJudgement | None:
    """How two claims conflict, or None when they are about different things or agree.

    Different conditions: ``coexist`` (``condition`` names each with its value). One value
    part of the other: ``merge`` (``merged_text`` is the more specific sentence). Otherwise
    ``supersede``: the newer replaces the older.
    """
    if older.subject != newer.subject or older.relation != newer.relation:
        return None
    if older.value == newer.value:
        return None
    owner = _owner(older.subject)
    relation = _LABELS.get(older.relation, older.relation)
    if older.condition != newer.condition:
        condition = (
            f"{older.condition or 'otherwise'}: {older.value}; "
            f"{newer.condition or 'otherwise'}: {newer.value}"
        )
        reason = (
            f"{owner} {relation} is '{older.value}' {older.condition or 'otherwise'} "
            f"and '{newer.value}' {newer.condition or 'otherwise'}."
        )
        return ConflictJudgement(True, "coexist", condition=condition, reason=reason)
    if _contains(older.value, newer.value) or _contains(newer.value, older.value):
        specific = older if len(older.value) > len(newer.value) else newer
        reason = (
            f"{owner} {relation} '{older.value}' and '{newer.value}' agree; "
            f"'{specific.value}' is the more specific."
        )
        return ConflictJudgement(True, "merge", merged_text=specific.text, reason=reason)
    reason = f"{owner} {relation} was '{older.value}' and is now '{newer.value}'."
    return ConflictJudgement(True, "supersede", reason=reason)


def _judge(older: Sequence[Claim], newer: Sequence[Claim]) -> ConflictJudgement | None:
    """The first conflict between a newer claim and an older one, in order."""
    for new in newer:
        for old in older:
            judgement = judge_claims(old, new)
            if judgement is not None:
                return judgement
    return None


def detect_conflicts(older: Sequence[Source], newer: Sequence[Source]) -> list[Conflict]:
    """Every pair of sources whose claims conflict, at most one conflict per pair: each older
    source against each newer one (in the given order), then the newer ones among themselves
    (by ``at``, the earlier as the older)."""
    claims: dict[int, list[Claim]] = {}

    def of(source: Source) -> list[Claim]:
        key = id(source)
        if key not in claims:
            claims[key] = claims_of(source.text)
        return claims[key]

    later = [source for _, source in sorted(enumerate(newer), key=lambda p: (p[1].at, p[0]))]
    # Only sources that claim something of the same subject and relation can conflict: pairs
    # are drawn from those buckets, then put in the order every pair would have been checked.
    old_rank = {id(o): n for n, o in enumerate(older)}
    new_rank = {id(n): i for i, n in enumerate(newer)}
    late_rank = {id(n): i for i, n in enumerate(later)}
    buckets: dict[tuple[str, str], list[Source]] = {}
    for source in (*older, *later):
        for key in dict.fromkeys((c.subject, c.relation) for c in of(source)):
            buckets.setdefault(key, []).append(source)
    cross: dict[tuple[int, int], tuple[Source, Source]] = {}
    among: dict[tuple[int, int], tuple[Source, Source]] = {}
    for members in buckets.values():
        olds = [m for m in members if id(m) in old_rank]
        news = [m for m in members if id(m) in late_rank]
        for o in olds:
            for n in news:
                cross[(old_rank[id(o)], new_rank[id(n)])] = (o, n)
        ranked = sorted(news, key=lambda m: late_rank[id(m)])
        for x, a in enumerate(ranked):
            for b in ranked[x + 1 :]:
                among[(late_rank[id(a)], late_rank[id(b)])] = (a, b)
    pairs = [cross[k] for k in sorted(cross)] + [among[k] for k in sorted(among)]
    seen: set[frozenset[str]] = set()
    conflicts: list[Conflict] = []
    for old, new in pairs:
        pair = frozenset((old.id, new.id))
        if old.id == new.id or pair in seen:
            continue
        judgement = _judge(of(old), of(new))
        if judgement is None or judgement.strategy is None:
            continue
        seen.add(pair)
        conflicts.append(
            Conflict(
                older=old.id,
                newer=new.id,
                strategy=judgement.strategy,
                reason=judgement.reason,
                merged_text=judgement.merged_text,
                condition=judgement.condition,
            )
        )
    return conflicts
