"""Extractive, rule-based compression (spec 000, 三段階圧縮モデル › 圧縮方法).

* :func:`shorten` and :func:`gist` cut a long message down for a Level 1 memory (trigger, content)
  by keeping its most informative sentences in their original order.
* :func:`summarize_pair` is Level 1 → 2: trigger in 1–2 sentences, content in 2–3, about a third
  of the original length; names, technical terms, numbers and the feeling are kept. Short text is
  compressed at the clause level, and a short question becomes a headline (「MongoDBの相談」).
* :func:`extract_keywords_pair` is Level 2 → 3: 2–3 keywords per field, comma-separated, names
  and technical terms first.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from dataclasses import dataclass
from typing import Final

from kioku.core.language import detect_language
from kioku.ports.analyzer import Compressed

from .clauses import Important, compress_sentence_en, compress_sentence_ja
from .keywords import Candidate, keywords_en, keywords_ja, rank_keywords
from .lexicon import en_lexicon, ja_lexicon
from .match_en import feeling_bound, match_english
from .match_ja import RawHit, match_japanese
from .text import MAX_ANALYSED_CHARS, clean, first_sentence, fold, nfkc, split_sentences
from .tokenize_en import Word, tokenize_en
from .tokenize_ja import Segmenter

__all__ = [
    "extract_keywords_pair",
    "gist",
    "gist_clean",
    "shorten",
    "shorten_clean",
    "summarize_pair",
]

PLACEHOLDER: Final = "(empty)"
#: Keyword score of a name or technical term (MongoDB, ストレージ), as opposed to a plain noun.
_STRONG: Final = 1.8
#: Lexicon strength of a word that carries the memory's feeling (安心, relieved).
_FELT: Final = 1.5
#: Feelings in summaries are read with no stopwords kept from stemming.
_NO_STOP: Final[frozenset[str]] = frozenset()
#: Level 2 keeps about this share of a field's characters.
RATIO: Final = 0.3
_MIN_BUDGET: Final = {"ja": 12, "en": 40}
_MAX_BUDGET: Final = {"trigger": 160, "content": 320}
_MAX_SENTENCES: Final = {"trigger": 2, "content": 3}
_NUMBER: Final = re.compile(r"\d")
_QUESTION_JA: Final = re.compile(r"[?？]|教えて|とは|なに|何|どう|ですか|かな")
_ADVICE_JA: Final = re.compile(r"どう思う|どうすれば|べき|相談|迷って|どっち|どちら|どうしたら")
_REQUEST_JA: Final = re.compile(r"て(?:ください|ほしい|くれ|もらえ)|お願い|して$|しといて")
_QUESTION_EN: Final = re.compile(
    r"\?|^(?:what|how|why|when|where|which|who|is|are|do|does|can)\b", re.I
)
_ADVICE_EN: Final = re.compile(
    r"\bshould (?:i|we)\b|\bwhat do you think\b|\bwhich (?:one|is better)\b|\badvice\b", re.I
)
_REQUEST_EN: Final = re.compile(r"^(?:please|can you|could you|would you)\b|\bplease\b", re.I)


@dataclass(frozen=True, slots=True)
class _Field:
    """One text being summarised: its language, sentences and keyword candidates."""

    text: str
    lang: str
    sentences: list[str]
    candidates: dict[str, Candidate]
    #: English tokens of ``text`` when NFKC leaves it as it is (pieces of it are then read from
    #: these instead of being tokenised again).
    words: list[Word] | None = None
    starts: list[int] = dataclasses.field(default_factory=list)
    lows: list[str] = dataclasses.field(default_factory=list)
    #: :func:`_has_feeling` of the pieces asked about so far (sentences, clauses).
    feelings: dict[str, bool] = dataclasses.field(default_factory=dict)
    #: Each candidate's lower-cased text and its weight in a sentence's score.
    weights: list[tuple[str, float]] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.weights.extend(
            (c.text.lower(), 0.6 * c.score if c.score >= _STRONG else 0.1)
            for c in self.candidates.values()
        )
        if self.words is not None:
            self.starts.extend(w.start for w in self.words)
            self.lows.extend(w.low for w in self.words)

    def feeling(self, piece: str) -> bool:
        """:func:`_has_feeling` of a piece of ``text`` (remembered)."""
        found = self.feelings.get(piece)
        if found is None:
            span = self._span(piece)
            if span is None or self.words is None:
                found = _has_feeling(piece, self.lang)
            else:
                first, stop, offset = span
                found = _english_feeling(self.words[first:stop], offset, self.lows[first:stop])
            self.feelings[piece] = found
        return found

    def _span(self, piece: str) -> tuple[int, int, int] | None:
        """``(first, stop, offset)``: ``words[first:stop]``, moved back by ``offset``, are
        ``tokenize_en(nfkc(piece))``; None when that cannot be told so simply.

        The tokenizer's pattern looks neither behind nor ahead, so when no token of ``text``
        crosses the piece's edges, the piece's tokens are exactly the tokens inside it.
        """
        words = self.words
        if words is None or nfkc(piece) != piece:
            return None
        start = self.text.find(piece)
        if start < 0:
            return None
        end = start + len(piece)
        first = bisect.bisect_left(self.starts, start)
        stop = bisect.bisect_left(self.starts, end)
        if (first > 0 and words[first - 1].end > start) or (
            stop > first and words[stop - 1].end > end
        ):
            return None
        return first, stop, start


def _lang(text: str) -> str:
    lang = detect_language(text)
    return "ja" if lang in ("ja", "mixed") else "en"


def _read(text: str, segmenter: Segmenter) -> _Field:
    lang = _lang(text)
    cased = nfkc(text)
    if lang == "ja":
        return _Field(text, lang, split_sentences(text), keywords_ja(cased, segmenter))
    words = tokenize_en(cased)
    cands = keywords_en(cased, words)
    own = words if cased == text else None
    return _Field(text, lang, split_sentences(text), cands, own)


def _strong_terms(field: _Field) -> list[str]:
    return [c.text for c in field.candidates.values() if c.score >= _STRONG]


def _felt(hits: list[RawHit]) -> bool:
    # Degree words do not decide whether there is a feeling: 「少し安心」 still is one.
    return any(abs(h.hit.score) >= _FELT * min(h.hit.degree, 1.0) and not h.topical for h in hits)


def _english_feeling(words: list[Word], offset: int = 0, lows: list[str] | None = None) -> bool:
    """:func:`_has_feeling` of English text from its tokens (their offsets less ``offset``);
    ``lows`` are the tokens' ``low`` when the caller has them."""
    lex = en_lexicon()
    if lows is None:
        lows = [w.low for w in words]
    if feeling_bound(lows, lex, _NO_STOP) < _FELT:
        return False  # no hit can reach the strength of a feeling
    if offset:
        words = [Word(w.text, w.low, w.start - offset) for w in words]
    return _felt(match_english(words, lex, _NO_STOP))


def _has_feeling(piece: str, lang: str) -> bool:
    if lang == "ja":
        return _felt(match_japanese(fold(nfkc(piece)), ja_lexicon()))
    return _english_feeling(tokenize_en(nfkc(piece)))


def _important(field: _Field) -> Important:
    """Does a piece of text carry a name, a technical term, a number or a feeling?"""
    strong = _strong_terms(field)

    def important(piece: str) -> bool:
        return (
            any(term in piece for term in strong)
            or bool(_NUMBER.search(piece))
            or field.feeling(piece)
        )

    return important


def _sentence_score(sentence: str, index: int, field: _Field, role: str) -> float:
    score = 0.0
    low = sentence.lower()
    for text, weight in field.weights:
        if text in low:
            score += weight
    score += min(len(_NUMBER.findall(sentence)), 2) * 0.5
    if field.feeling(sentence):
        score += 1.5
    if index == 0:
        score += 1.0 if role == "trigger" else 0.4
    return score / (1.0 + len(sentence) / (120 if field.lang == "ja" else 300))


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[: max(1, limit - 1)]
    for stop in ("、", ", ", " "):
        cut = head.rfind(stop)
        if cut >= limit // 2:
            head = head[:cut]
            break
    return head.rstrip(" 、,") + "…"


def shorten(text: str, limit: int) -> str:
    """``text`` itself when it fits ``limit``; else its best sentences, in order, within it."""
    return shorten_clean(clean(text, MAX_ANALYSED_CHARS), limit)


def shorten_clean(text: str, limit: int) -> str:
    """:func:`shorten` of text that :func:`clean` has already been through (cleaning it again
    would change nothing)."""
    if len(text) <= limit:
        return text or PLACEHOLDER
    sentences = split_sentences(text)
    field = _Field(text, _lang(text[:2000]), sentences, {})
    scored = sorted(
        range(len(sentences)),
        key=lambda i: (-(_sentence_score(sentences[i], i, field, "content")), i),
    )
    chosen = {0}
    used = len(sentences[0]) if sentences else 0
    for i in scored:
        if i in chosen:
            continue
        if used + len(sentences[i]) + 1 > limit:
            continue
        chosen.add(i)
        used += len(sentences[i]) + 1
    sep = "" if field.lang == "ja" else " "
    out = sep.join(sentences[i] for i in sorted(chosen))
    return _cut(out, limit) or PLACEHOLDER


def gist(text: str, limit: int = 80) -> str:
    """A short extractive trigger for a turn that has only the user's words."""
    return gist_clean(clean(text, MAX_ANALYSED_CHARS), limit)


def gist_clean(text: str, limit: int = 80) -> str:
    """:func:`gist` of text that :func:`clean` has already been through."""
    sentence = first_sentence(text)
    if sentence is None:
        return PLACEHOLDER
    return _cut(sentence, limit)


def _headline(field: _Field) -> str | None:
    """「MongoDBの相談」, "Question about MongoDB": a short question or request as a headline."""
    # One topic word for a short question, up to three for a longer one.
    count = 1 if len(field.text) < 60 else 2 if len(field.text) < 150 else 3
    ranked = rank_keywords(field.candidates.values(), count)
    if not ranked:
        return None
    topic = ("・" if field.lang == "ja" else ", ").join(ranked)
    text = field.text
    if field.lang == "ja":
        if _ADVICE_JA.search(text):
            return f"{topic}の相談"
        if _QUESTION_JA.search(text):
            return f"{topic}の質問"
        if _REQUEST_JA.search(text):
            return f"{topic}の依頼"
        return None
    if _ADVICE_EN.search(text):
        return f"Asked for advice on {topic}."
    if _REQUEST_EN.search(text):
        return f"Asked for help with {topic}."
    if _QUESTION_EN.search(text):
        return f"Asked about {topic}."
    return None


def _compress_field(text: str, role: str, segmenter: Segmenter) -> str:
    text = clean(text, MAX_ANALYSED_CHARS)
    if not text:
        return PLACEHOLDER
    field = _read(text, segmenter)
    important = _important(field)
    sentences = field.sentences or [text]
    budget = min(max(int(len(text) * RATIO), _MIN_BUDGET[field.lang]), _MAX_BUDGET[role])

    squeezed: dict[str, str] = {}

    def squeeze(sentence: str) -> str:
        found = squeezed.get(sentence)
        if found is None:
            if field.lang == "ja":
                found = compress_sentence_ja(sentence, important, segmenter)
            else:
                found = compress_sentence_en(sentence, important)
            squeezed[sentence] = found
        return found

    order = sorted(
        range(len(sentences)),
        key=lambda i: (-_sentence_score(sentences[i], i, field, role), i),
    )
    chosen: dict[int, str] = {}
    used = 0
    for i in order[: _MAX_SENTENCES[role] * 3]:
        short = squeeze(sentences[i])
        if chosen and used + len(short) + 1 > budget:
            continue
        chosen[i] = short
        used += len(short) + 1
        if len(chosen) >= _MAX_SENTENCES[role]:
            break
    felt = next((i for i in order[:50] if field.feeling(sentences[i])), None)
    if (
        felt is not None
        and felt not in chosen
        and not any(field.feeling(sentences[i]) for i in chosen)
    ):
        # The feeling is part of the memory: keep its best sentence even past the budget.
        chosen[felt] = squeeze(sentences[felt])
        while len(chosen) > _MAX_SENTENCES[role]:
            del chosen[max((i for i in chosen if i != felt), key=order.index)]
    sep = "。" if field.lang == "ja" else " "
    out = sep.join(chosen[i] for i in sorted(chosen))
    if len(out) > budget * 1.5 and len(sentences) <= 2:
        headline = _headline(field)
        if headline is not None and len(headline) < len(out):
            out = headline
    if len(out) > _MAX_BUDGET[role] * 1.5:
        out = _cut(out, int(_MAX_BUDGET[role] * 1.5))
    if not out or len(out) >= len(text):
        return text
    return out


def summarize_pair(trigger: str, content: str, segmenter: Segmenter) -> Compressed:
    """Level 1 → 2."""
    return Compressed(
        trigger=_compress_field(trigger, "trigger", segmenter),
        content=_compress_field(content, "content", segmenter),
    )


def _field_keywords(text: str, segmenter: Segmenter) -> str:
    text = clean(text, MAX_ANALYSED_CHARS)
    if not text:
        return PLACEHOLDER
    cased = nfkc(text)
    cands = keywords_ja(cased, segmenter) if _lang(text) == "ja" else keywords_en(cased)
    ranked = rank_keywords(cands.values(), 3)
    if not ranked:
        return _cut(text, 20)
    return ", ".join(ranked)


def extract_keywords_pair(trigger: str, content: str, segmenter: Segmenter) -> Compressed:
    """Level 2 → 3."""
    return Compressed(
        trigger=_field_keywords(trigger, segmenter),
        content=_field_keywords(content, segmenter),
    )
