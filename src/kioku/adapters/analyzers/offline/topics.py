"""Topic cues (decision, work, family, health, loss, …) found in a turn.

They decide the category and anchor intensity to the spec's situation guide (付録：感情強度
スコアリングの例). Japanese cues are matched as substrings starting on a word boundary, English
cues as words (with their inflections) or phrases.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from .lexicon import phrase_index, read_data
from .text import fold, nfkc
from .tokenize_en import Word, stem_candidates

__all__ = ["STORY", "TOPICS", "TopicScores", "find_topics", "names_close_one"]

_TECH: Final = re.compile(
    r"^(?:[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}[a-z]?s?|\w+\.(?:js|ts|py|rs|go|json|md|"
    r"yml|yaml|toml|sql|sh|css|html)|\w+(?:\.\w+)+\(\)|[A-Za-z]+[0-9]+[A-Za-z0-9]*)$"
)

TOPICS: Final = (
    "decision",
    "work",
    "personal",
    # The self and inner life (人生, 自分, 気持ち, 自己嫌悪): personal, but no family or partner.
    "self",
    "health",
    "loss",
    "trauma",
    "milestone",
    "casual",
    "pet",
    "ack",
    "correction",
    "fact",
    "plan",
    "life",
    "story",
)
#: A lasting liking or dislike of a kind of thing or of an activity ("I love hiking", "I hate
#: spiders"), not of one thing at hand ("I love this", "I like the new logo").
_LIKING_EN: Final = re.compile(
    r"\bi (?:really |just |absolutely |totally )?(?:love|like|enjoy|adore|hate|dislike|detest) "
    r"(?!(?:this|these|those|it|that|the|your|yours|his|hers|its|us|them|him|her|you|was|is)\b)"
    r"(?:\w+ing|\w{3,}s)\b"
)
_LIKING_VERBS: Final = ("love", "like", "enjoy", "adore", "hate", "dislike", "detest")
#: Who one is by trade ("I'm a nurse", "my partner's name is Sam": a fact about someone close).
_OCCUPATIONS: Final = (
    "nurse|teacher|doctor|engineer|developer|programmer|designer|lawyer|accountant|chef|cook"
    "|writer|artist|musician|photographer|pharmacist|dentist|firefighter|police officer|farmer"
    "|scientist|researcher|consultant|freelancer|carpenter|electrician|plumber|mechanic|pilot"
    "|cashier|barista|librarian|professor|translator|paramedic|caregiver|social worker"
)
_WHO_EN: Final = re.compile(
    rf"\bi(?:'m| am) an? (?:\w+ )?(?:{_OCCUPATIONS})\b|\bmy \w+(?:'s|’s) name\b"
    r"|\b(?:i|we)(?: have got| have|'ve got) (?:a|an|one|two|three|four|five|\d+) (?:\w+ )?"
    r"(?:kids?|children|child|sons?|daughters?|brothers?|sisters?|siblings|grandchildren)\b"
    r"|\bi(?:'m| am) taking (?:a|an) (?:\w+ )?(?:class|course|lessons)\b"
)
#: Every alternative of :data:`_WHO_EN` opens with one of these words.
_WHO_OPENERS: Final = ("i", "i'm", "i've", "my", "we", "we've")
_WHO_JA: Final = re.compile(
    r"(?:看護師|教師|教員|医師|医者|エンジニア|プログラマー?|デザイナー|弁護士|会計士|税理士|料理人"
    r"|シェフ|作家|美容師|保育士|介護士|薬剤師|公務員|会社員|主婦|主夫|研究者|銀行員|警察官|消防士"
    r"|農家|大工|ライター|カメラマン|通訳|翻訳家|獣医)(?:をして|をやって|として働|です)"
)
#: "I have two cats", "we adopted a puppy": owning a pet is a fact about one's life.
_PET_OWNER_EN: Final = re.compile(
    r"\b(?:i|we)(?:'ve| have)?\s+(?:have|own|got|adopted|rescued)\s+(?:a|an|two|three|four|\d+)\s+"
    r"(?:\w+\s+)?(?:dog|cat|puppy|kitten|rabbit|bunny|hamster|parrot|bird|turtle|fish)(?:s|es)?\b"
)


#: The animals :data:`_PET_OWNER_EN` names: text without any cannot match it.
_PETS: Final = (
    *("dog", "cat", "pupp", "kitten", "rabbit", "bunny", "hamster", "parrot", "bird", "turtle"),
    "fish",
)


@dataclass(frozen=True, slots=True)
class TopicScores:
    """Summed cue weights per topic, and the first position each topic was seen at."""

    scores: dict[str, float]
    cues: tuple[str, ...]

    def __getitem__(self, topic: str) -> float:
        return self.scores.get(topic, 0.0)


@dataclass(frozen=True, slots=True)
class _Tables:
    """The topic lexicon, loaded once."""

    ja: dict[str, tuple[str, float]]
    ja_max: int
    #: First character of a Japanese cue → the lengths of the cues starting with it, longest first.
    ja_heads: dict[str, tuple[int, ...]]
    en_words: dict[str, tuple[str, float]]
    en_phrases: dict[tuple[str, ...], tuple[str, float]]
    en_starts: dict[str, tuple[int, ...]]


@functools.cache
def _tables() -> _Tables:
    ja: dict[str, tuple[str, float]] = {}
    for term, topic, weight in read_data("topics_ja.tsv"):
        ja[fold(nfkc(term))] = (topic, float(weight))
    words: dict[str, tuple[str, float]] = {}
    phrases: dict[tuple[str, ...], tuple[str, float]] = {}
    for term, topic, weight in read_data("topics_en.tsv"):
        parts = tuple(term.lower().split())
        if len(parts) == 1:
            words[parts[0]] = (topic, float(weight))
        else:
            phrases[parts] = (topic, float(weight))
    lengths: dict[str, set[int]] = {}
    for key in ja:
        if key:
            lengths.setdefault(key[0], set()).add(len(key))
    heads = {head: tuple(sorted(ls, reverse=True)) for head, ls in lengths.items()}
    return _Tables(ja, max(map(len, ja)), heads, words, phrases, phrase_index(list(phrases)))


def _find_ja(
    text: str, starts: Collection[int] | None, out: dict[str, float], cues: list[str]
) -> None:
    tables = _tables()
    heads = tables.ja_heads
    n = len(text)
    # Positions a cue may start at: the word starts, in order, or every character.
    positions = sorted(starts) if starts is not None else range(n)
    i = 0  # the first position not yet read or covered by a cue
    for at in positions:
        if at < i:
            continue
        if at >= n:
            break
        # Only cues that start with this character can match here.
        lengths = heads.get(text[at])
        if lengths is None:
            continue
        for length in lengths:
            if at + length > n:
                continue
            found = tables.ja.get(text[at : at + length])
            if found is not None:
                out[found[0]] += found[1]
                cues.append(text[at : at + length])
                i = at + length
                break


def _find_en(lows: list[str], stop: frozenset[str], out: dict[str, float], cues: list[str]) -> None:
    """English topic cues, phrases first, in the words whose ``low`` are ``lows``."""
    tables = _tables()
    memo = _cue_memo(stop)
    i = 0
    n = len(lows)
    while i < n:
        low = lows[i]
        matched = 0
        for length in tables.en_starts.get(low, ()):
            if i + length > n:
                continue
            key = tuple(lows[i : i + length])
            found = tables.en_phrases.get(key)
            if found is not None:
                out[found[0]] += found[1]
                cues.append(" ".join(key))
                matched = length
                break
        if matched:
            i += matched
            continue
        cue = memo.get(low, _UNSEEN)
        if cue is _UNSEEN:
            cue = _word_cue(memo, low, stop, tables)
        if cue is not None:
            out[cue[0]] += cue[1]
            cues.append(cue[2])
        i += 1


#: Per stop list: each word's topic cue (topic, weight, the cue's spelling) or None.
_CUE_MEMOS: dict[frozenset[str], dict[str, tuple[str, float, str] | None]] = {}
#: Words remembered per stop list before the memo starts afresh (bounds its memory).
_MEMO_SIZE: Final = 50_000
_UNSEEN: Final = ("", 0.0, "")


def _cue_memo(stop: frozenset[str]) -> dict[str, tuple[str, float, str] | None]:
    memo = _CUE_MEMOS.get(stop)
    if memo is None:
        if len(_CUE_MEMOS) >= 8:
            _CUE_MEMOS.clear()
        memo = _CUE_MEMOS[stop] = {}
    return memo


def _word_cue(
    memo: dict[str, tuple[str, float, str] | None],
    low: str,
    stop: frozenset[str],
    tables: _Tables,
) -> tuple[str, float, str] | None:
    """The topic cue of one word, by itself or an inflection of it (remembered)."""
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    found: tuple[str, float, str] | None = None
    for cand in (low,) if low in stop else stem_candidates(low):
        entry = tables.en_words.get(cand)
        if entry is not None:
            found = (entry[0], entry[1], cand)
            break
    memo[low] = found
    return found


# A told experience: past-tense clause ends (落ちた。, 震えた、, 言われた), time anchors (昨日,
# 先週, あのとき) and length. Stories of one's own life are personal topics whatever their wording.
_PAST_JA: Final = re.compile(
    r"(?:[たっ]|だった|かった|ました|でした|てた|てました)(?=[。、,.!?…\s]|$|けど|のに|ら[、,])"
)
_TIME_JA: Final = re.compile(
    r"昨日|きのう|昨夜|今朝|先週|先月|去年|昨年|この前|こないだ|あのとき|あの時|のとき|の時|ぶりに"
    r"|今日|初めて|小[1-6１-６一二三四五六]|中[1-3１-３]|高校|学生時代|子どもの頃|子供の頃"
    r"|先日|当時|年前|[かヶヵケ]月前|週間前|日前|昔"
)
_PAST_EN: Final = frozenset(
    """was were had got went came said told found saw took made felt left lost won ran
    heard thought knew gave bought sold wrote caught sat stood spent kept met paid sent
    forgot broke drove fell flew held began became brought taught""".split()
)
_TIME_EN: Final = frozenset(
    "yesterday today tonight morning night week month year ago finally first".split()
)


#: A ``story`` score at or above this reads as a told experience of one's own life.
STORY: Final = 1.5


def _story(folded: str, lows: list[str], lang: str) -> float:
    """How much the text reads as a told personal experience (0 …); ``lows`` are the
    ``low`` of its English words."""
    if lang == "en":
        # A long word in -ed that starts with a letter (Word.is_word) reads as past tense.
        past = sum(
            1
            for low in lows
            if low in _PAST_EN or (len(low) > 4 and low.endswith("ed") and low[0].isalpha())
        )
        time = not _TIME_EN.isdisjoint(lows)
        length = sum(map(len, lows)) + len(lows)
        long_bonus = 0.5 if length >= 70 else 0.0
        long_bonus += 0.5 if length >= 110 else 0.0
    else:
        past = len(_PAST_JA.findall(folded))
        time = _TIME_JA.search(folded) is not None
        long_bonus = 0.5 if len(folded) >= 35 else 0.0
        long_bonus += 0.5 if len(folded) >= 60 else 0.0
    return min(past, 3) * 0.6 + (0.5 if time else 0.0) + long_bonus


def _technical_tokens(words: list[Word], stop: frozenset[str]) -> float:
    """camelCase, ALLCAPS acronyms, dotted names and file names are signs of technical work."""
    memo = _TECH_MEMOS.get(stop)
    if memo is None:
        if len(_TECH_MEMOS) >= 8:
            _TECH_MEMOS.clear()
        memo = _TECH_MEMOS[stop] = {}
    count = 0
    for w in words:
        found = memo.get(w.text)
        if found is None:
            if len(memo) >= _MEMO_SIZE:
                memo.clear()
            found = memo[w.text] = bool(
                w.is_word and w.low not in stop and _TECH.match(w.text) is not None
            )
        count += found
    return min(count, 3) * 0.8


#: Per stop list: whether a token (by its text) is technical.
_TECH_MEMOS: dict[frozenset[str], dict[str, bool]] = {}


@functools.cache
def _close_ones() -> frozenset[str]:
    return frozenset(fold(nfkc(row[0])).lower() for row in read_data("close_ones.txt"))


def names_close_one(topics: TopicScores) -> bool:
    """Whether a cue names family, a partner, a child or a pet (not friends, places or events)."""
    close = _close_ones()
    return any(cue in close for cue in topics.cues)


def find_topics(
    folded: str,
    starts: Collection[int] | None,
    words: list[Word],
    stop: frozenset[str],
    lang: str,
    lows: list[str] | None = None,
) -> TopicScores:
    """Topic cue weights in a turn (Japanese from ``folded``, English from ``words``, whose
    ``low`` are ``lows`` if the caller has them already)."""
    if lows is None:
        lows = [w.low for w in words]
    out: dict[str, float] = defaultdict(float)
    cues: list[str] = []
    if lang in ("ja", "mixed", "other"):
        _find_ja(folded, starts, out, cues)
        if _WHO_JA.search(folded):
            out["fact"] += 1.5
            cues.append("occupation")
    if lang in ("en", "mixed") or (lang == "ja" and words):
        _find_en(lows, stop, out, cues)
        tech = _technical_tokens(words, stop)
        if tech:
            out["work"] += tech
        joined = " ".join(lows)
        if any(pet in joined for pet in _PETS) and _PET_OWNER_EN.search(joined):
            out["fact"] += 1.8
            cues.append("pet owner")
        if any(verb in joined for verb in _LIKING_VERBS) and _LIKING_EN.search(joined):
            out["fact"] += 1.2
            cues.append("lasting liking")
        if any(word in lows for word in _WHO_OPENERS) and _WHO_EN.search(joined):
            out["fact"] += 1.5
            cues.append("who one is")
    story = _story(folded, lows, lang) if lang != "other" else 0.0
    if story:
        out["story"] = story
    return TopicScores(dict(out), tuple(cues))
