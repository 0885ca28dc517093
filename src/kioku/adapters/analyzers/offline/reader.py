"""One pass over a text: the views, tokens, hits and topic cues every later step needs."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, replace
from typing import Final

from kioku.core.language import Language, detect_language

from .context import Context, build_context, weigh
from .emotion import EmotionResult, score_emotion
from .expressive import ironic_expressions, laughing_tears, match_expressive
from .hits import Hit
from .keywords import english_stopwords
from .lexicon import en_lexicon, ja_lexicon
from .match_en import match_english
from .match_ja import RawHit, match_japanese
from .text import MAX_ANALYSED_CHARS, clean, fold, garbage_share, nfkc
from .tokenize_en import Word, tokenize_en
from .tokenize_ja import Segmenter, Token
from .topics import STORY, TopicScores, find_topics

__all__ = ["Reading", "read_text", "shouting_words"]

_SELF_JA: Final = re.compile(r"私|僕|俺|わたし|あたし|ぼく|おれ|自分|うち(?:の|は|が|も)")
_EXCLAMATION_SCORE: Final = 0.7
#: Text with more than this share of broken characters is treated as unreadable.
_GARBAGE_SHARE: Final = 0.1
#: Words that report a death. Where one is told as a felt loss (at :data:`_FELT` or more:
#: not denied, not wished, not supposed), kind words in the same turn praise the one lost
#: ("Such a lovely woman. She died last week."): the turn is grief, and they count for
#: :data:`_EULOGY` of their score.
_BEREAVEMENT: Final = frozenset({"died", "passed away"})
_FELT: Final = -1.5
_EULOGY: Final = 0.4
_SELF_EN: Final = frozenset({"i", "me", "my", "myself", "i'm", "i've", "i'd", "i'll", "im", "ive"})


def _eulogy(hits: list[Hit]) -> list[Hit]:
    """Kind words next to a reported death weigh :data:`_EULOGY` of their score."""
    if not any(h.term in _BEREAVEMENT and h.score <= _FELT for h in hits):
        return hits
    return [replace(h, score=h.score * _EULOGY) if h.score > 0 else h for h in hits]


@dataclass(frozen=True, slots=True)
class Reading:
    """Everything the analyzer learned from one text."""

    clean: str
    cased: str
    folded: str
    language: Language
    tokens: tuple[Token, ...]
    words: tuple[Word, ...]
    context: Context
    emotion: EmotionResult
    topics: TopicScores
    self_reference: bool


@functools.cache
def shouting_words() -> frozenset[str]:
    """Words whose capitals mean raised voice ("WHY", "NO"), unlike acronyms ("SQL")."""
    extra = {"why", "what", "no", "yes", "stop", "help", "omg", "wtf", "lol", "now", "please"}
    return english_stopwords() | frozenset(en_lexicon().words) | frozenset(extra)


def _boundaries(tokens: list[Token], text: str) -> tuple[set[int], set[int]]:
    starts = {t.start for t in tokens}
    ends = {t.start + len(t.surface) for t in tokens}  # Token.end
    starts.add(0)
    ends.add(len(text))
    return starts, ends


def _exclamation_cue(folded: str, language: Language, hits: list[Hit]) -> Hit | None:
    """In Japanese chat 「！」 with no negative word marks excitement (「明日から三連休！！」)."""
    if language != "ja" or "!" not in folded or "?" in folded:
        return None
    if any(h.score < -0.3 for h in hits) or sum(h.score for h in hits) >= 1.5:
        return None
    return Hit("!", folded.index("!"), _EXCLAMATION_SCORE, 2, ("excitement", "joy"))


def read_text(
    text: str, segmenter: Segmenter, *, limit: int = MAX_ANALYSED_CHARS, feelings: bool = True
) -> Reading:
    """Analyse ``text`` (a user or assistant message) up to ``limit`` characters.

    With ``feelings=False`` only language, tokens and topics are read (for the assistant's
    reply, whose wording does not decide the memory's emotion).
    """
    cleaned = clean(text, limit)
    cased = nfkc(cleaned)
    folded = fold(cased)
    language = detect_language(cleaned)
    unreadable = garbage_share(text) > _GARBAGE_SHARE
    if unreadable:
        language = "other"
    stop = english_stopwords()
    tokens: list[Token] = []
    starts: set[int] | None = None
    ends: set[int] | None = None
    raw: list[RawHit] = []
    if language in ("ja", "mixed"):
        tokens = segmenter(cased)
        if segmenter.name == "fugashi":
            starts, ends = _boundaries(tokens, cased)
        # Script runs are too coarse for boundaries (超嬉しい is one kanji run): match anywhere.
        if feelings:
            raw.extend(match_japanese(folded, ja_lexicon(), starts, ends))
    words = tokenize_en(cased) if language != "other" else []
    lows = [w.low for w in words]
    if feelings and language in ("en", "mixed"):
        raw.extend(match_english(words, en_lexicon(), stop, lows))
    if feelings and not unreadable:
        raw.extend(match_expressive(cleaned))
        raw = laughing_tears(ironic_expressions(raw))
    topics = find_topics(folded, starts, words, stop, language, lows)
    # A told experience that mentions work is a story, not a task.
    task = topics["work"] >= 1.5 and topics["story"] < STORY  # a told experience is no task
    context = build_context(folded, cased, language, work=task)
    hits = weigh(raw, context)
    if language in ("en", "mixed"):
        hits = _eulogy(hits)
    excited = _exclamation_cue(folded, language, hits)
    if excited is not None:
        hits.append(excited)
    # A told experience of one's own life that asks for nothing needs less evidence to leave
    # neutral (the same reading makes such a turn emotional in category.py).
    told = topics["story"] >= STORY and not context.any_request
    emotion = score_emotion(hits, told=told)
    if language == "en":
        self_ref = not _SELF_EN.isdisjoint(lows)
    else:
        self_ref = bool(_SELF_JA.search(cased)) or not _SELF_EN.isdisjoint(lows)
    return Reading(
        clean=cleaned,
        cased=cased,
        folded=folded,
        language=language,
        tokens=tuple(tokens),
        words=tuple(words),
        context=context,
        emotion=emotion,
        topics=topics,
        self_reference=self_ref,
    )
