"""The offline analyzer: kioku's default, with no network and no API key.

It reads a turn the way spec 000's LLM prompt asks (記憶生成 › LLMへの指示例): emotion
(intensity, valence, arousal, tags), category, keywords, trigger and content, and whether the user
asked for the memory to be protected. It also compresses memories (Level 1 → 2 summaries, Level
2 → 3 keywords) without a model. Everything is rule- and lexicon-based, deterministic and fast.
"""

from __future__ import annotations

import re
import threading
from typing import Final, Literal

from kioku.core.model import Valence
from kioku.ports.analyzer import Analysis, Compressed, Turn

from .arousal import score_arousal
from .category import choose_category
from .emotion import context_tags
from .intensity import score_intensity
from .keywords import Candidate, keywords_en, keywords_ja, rank_keywords
from .protect import is_protection_request
from .reader import Reading, read_text, shouting_words
from .summarize import extract_keywords_pair, gist_clean, shorten_clean, summarize_pair
from .tokenize_ja import FugashiSegmenter, ScriptSegmenter, Segmenter, default_segmenter
from .topics import names_close_one

__all__ = ["OfflineAnalyzer"]

_INTERROBANG: Final = re.compile(r"!\?|\?!")
EMPTY_TURN: Final = "(empty turn)"
NO_USER_TEXT: Final = "(no user message)"
TRIGGER_LIMIT: Final = 400
CONTENT_LIMIT: Final = 4000
MAX_KEYWORDS: Final = 5
# Lengths (characters) past which a calm text counts as long: roughly 10, 25 and 50 words.
_LONG_JA: Final = (40, 80, 160)
_LONG_EN: Final = (60, 150, 300)

SegmenterChoice = Literal["auto", "fugashi", "script"]


class OfflineAnalyzer:
    """Analyze turns and compress memories with lexicons and rules (Japanese and English).

    ``segmenter`` chooses the Japanese morphology: ``"auto"`` (fugashi + UniDic when installed,
    else the script-run fallback), ``"fugashi"`` (required) or ``"script"`` (always the fallback).
    fugashi is loaded on the first Japanese text, not at construction.
    """

    def __init__(self, segmenter: SegmenterChoice = "auto") -> None:
        if segmenter not in ("auto", "fugashi", "script"):
            raise ValueError(f"unknown segmenter {segmenter!r}: use auto, fugashi or script")
        self._choice: SegmenterChoice = segmenter
        self._segmenter: Segmenter | None = ScriptSegmenter() if segmenter == "script" else None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "offline"

    @property
    def segmenter_choice(self) -> SegmenterChoice:
        """The Japanese morphology asked for (``"auto"``, ``"fugashi"`` or ``"script"``)."""
        return self._choice

    @property
    def segmenter(self) -> Segmenter:
        """The Japanese segmenter in use (resolving ``auto`` loads fugashi if it can)."""
        if self._segmenter is None:
            with self._lock:
                if self._segmenter is None:
                    if self._choice == "fugashi":
                        seg = FugashiSegmenter()
                        seg.load()
                        self._segmenter = seg
                    else:
                        self._segmenter = default_segmenter()
        return self._segmenter

    def _seg_for(self, text: str) -> Segmenter:
        # Plain ASCII never needs Japanese morphology: do not load fugashi for it.
        if text.isascii() and self._segmenter is None:
            return ScriptSegmenter()
        return self.segmenter

    def read(self, text: str) -> Reading:
        """The full reading of one text (for tools and tests that want the details)."""
        return read_text(text, self._seg_for(text))

    def analyze(self, turn: Turn) -> Analysis:
        user = self.read(turn.user)
        assistant = (
            read_text(turn.assistant, self._seg_for(turn.assistant), feelings=False)
            if turn.assistant.strip()
            else None
        )
        emotion = user.emotion
        language = user.language if user.clean else (assistant.language if assistant else "other")
        known = shouting_words()
        long_limits = _LONG_EN if language == "en" else _LONG_JA
        acknowledgement = user.topics["ack"] >= 1 and len(user.clean) <= 16
        arousal = score_arousal(
            user.folded,
            list(user.words),
            emotion,
            known_words=known,
            acknowledgement=acknowledgement,
            length=len(user.clean),
            long_limits=long_limits,
        )
        topics = user.topics
        if assistant is not None:
            merged = dict(topics.scores)
            for topic, weight in assistant.topics.scores.items():
                merged[topic] = merged.get(topic, 0.0) + 0.5 * weight
            topics = type(topics)(merged, topics.cues + assistant.topics.cues)
        request = user.context.any_request
        intensity = score_intensity(
            emotion,
            arousal,
            topics,
            self_reference=user.self_reference,
            request=request,
            length=len(user.clean),
        )
        if not user.clean or language == "other":
            intensity = min(intensity, 20 if emotion.strength >= 1 else 10)
        category = choose_category(topics, intensity, emotion.strength, request)
        trigger, content = self._trigger_content(user, assistant)
        valence = emotion.valence
        tags = context_tags(
            emotion.tags,
            valence,
            affection=names_close_one(user.topics),
            resolve=user.topics["decision"] >= 1.5,
            surprise=_INTERROBANG.search(user.cased) is not None,
        )
        if not user.clean:
            valence, tags = Valence.NEUTRAL, ()
        return Analysis(
            intensity=intensity,
            valence=valence,
            arousal=arousal,
            tags=tags,
            category=category,
            keywords=self._keywords(user, assistant),
            trigger=trigger,
            content=content,
            protected=bool(user.clean) and is_protection_request(user.cased),
            language=language,
            analyzer=self.name,
        )

    def _trigger_content(self, user: Reading, assistant: Reading | None) -> tuple[str, str]:
        # Readings hold text that has been through clean() already.
        if assistant is not None and assistant.clean:
            trigger = shorten_clean(user.clean, TRIGGER_LIMIT) if user.clean else NO_USER_TEXT
            return trigger, shorten_clean(assistant.clean, CONTENT_LIMIT)
        if not user.clean:
            return EMPTY_TURN, EMPTY_TURN
        return gist_clean(user.clean), shorten_clean(user.clean, CONTENT_LIMIT)

    def _keywords(self, user: Reading, assistant: Reading | None) -> tuple[str, ...]:
        cands = self._candidates(user)
        if assistant is not None:
            for key, cand in self._candidates(assistant).items():
                if key in cands:
                    cands[key].count += 1
                else:
                    cand.score *= 0.8
                    cand.first += 100_000
                    cands[key] = cand
        return tuple(rank_keywords(cands.values(), MAX_KEYWORDS))

    def _candidates(self, reading: Reading) -> dict[str, Candidate]:
        if reading.language in ("ja", "mixed"):
            return keywords_ja(reading.cased, self.segmenter, reading.tokens)
        if reading.language == "en":
            return keywords_en(reading.cased, list(reading.words))
        return {}

    def summarize(self, trigger: str, content: str) -> Compressed:
        return summarize_pair(trigger, content, self._seg_for(trigger + content))

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        return extract_keywords_pair(trigger, content, self._seg_for(trigger + content))
