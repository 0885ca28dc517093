"""Reading a model's answer: find the JSON object, check every field, build the result.

Models wrap JSON in code fences, put a sentence before it, or think aloud in ``<think>`` blocks;
all of that is tolerated. The values are not: integers must be 0–100, the valence one of three,
the category one of spec 000's four, trigger and content non-empty text, keywords a list of
strings. Emotional tags outside the spec's 23 are dropped rather than failing the answer.
Anything else raises :class:`InvalidOutputError`, whose ``reason`` never quotes the model's text.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from kioku.core.language import detect_language
from kioku.core.model import ALL_TAGS, SPEC_CATEGORIES, Valence
from kioku.ports.analyzer import Analysis, Compressed, Turn

__all__ = [
    "InvalidOutputError",
    "extract_json_object",
    "parse_analysis",
    "parse_compressed",
    "parse_keywords",
]

MAX_KEYWORDS: Final = 5
MAX_FIELD_KEYWORDS: Final = 5
#: Longer texts are cut here rather than refused (a Level 1 memory is at most a few thousand).
MAX_TRIGGER_CHARS: Final = 2000
MAX_CONTENT_CHARS: Final = 8000
MAX_KEYWORD_CHARS: Final = 80

_THINK: Final = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.DOTALL | re.IGNORECASE)
_FENCE: Final = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_KEYWORD_SPLIT: Final = re.compile(r"\s*[,、，;；\n]\s*")


class InvalidOutputError(ValueError):
    """The model's answer is not usable; ``reason`` says why in a few words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def extract_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (whole text, a code fence, or after some prose)."""
    cleaned = _THINK.sub("", text).strip()
    if not cleaned:
        raise InvalidOutputError("the answer was empty")
    candidates = [cleaned, *(m.group(1).strip() for m in _FENCE.finditer(cleaned))]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    decoder = json.JSONDecoder()
    start = cleaned.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(cleaned, start)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        start = cleaned.find("{", start + 1)
    raise InvalidOutputError("no JSON object in the answer")


def _score(data: dict[str, Any], key: str) -> int:
    if key not in data:
        raise InvalidOutputError(f"{key} is missing")
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidOutputError(f"{key} is not an integer")
    if isinstance(value, float):
        if not value.is_integer():
            raise InvalidOutputError(f"{key} is not an integer")
        value = int(value)
    if not 0 <= value <= 100:
        raise InvalidOutputError(f"{key} is outside 0-100")
    return value


def _word(data: dict[str, Any], key: str, allowed: tuple[str, ...]) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise InvalidOutputError(f"{key} is missing or not a string")
    word = value.strip().lower()
    if word not in allowed:
        raise InvalidOutputError(f"{key} is not one of {', '.join(allowed)}")
    return word


def _text(data: dict[str, Any], key: str, limit: int) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise InvalidOutputError(f"{key} is missing or not a string")
    text = value.strip()
    if not text:
        raise InvalidOutputError(f"{key} is empty")
    return text[:limit].rstrip()


def _strings(data: dict[str, Any], key: str, *, required: bool) -> list[str]:
    if key not in data or data[key] is None:
        if required:
            raise InvalidOutputError(f"{key} is missing")
        return []
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidOutputError(f"{key} is not a list of strings")
    return [v.strip() for v in value if v.strip()]


def _unique(items: list[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    kept: list[str] = []
    for item in items:
        key = item.casefold()
        if item and key not in seen:
            seen.add(key)
            kept.append(item)
    return tuple(kept)


def parse_analysis(text: str, *, turn: Turn, analyzer: str) -> Analysis:
    """Validate an analysis answer; ``language`` comes from the turn, ``analyzer`` is the name."""
    data = extract_json_object(text)
    intensity = _score(data, "emotional_intensity")
    valence = Valence(_word(data, "emotional_valence", tuple(v.value for v in Valence)))
    arousal = _score(data, "emotional_arousal")
    tags = _unique(
        [
            t.lower()
            for t in _strings(data, "emotional_tags", required=False)
            if t.lower() in ALL_TAGS
        ]
    )
    category = _word(data, "category", SPEC_CATEGORIES)
    keywords = _unique(
        [k[:MAX_KEYWORD_CHARS].strip() for k in _strings(data, "keywords", required=True)]
    )[:MAX_KEYWORDS]
    trigger = _text(data, "trigger", MAX_TRIGGER_CHARS)
    content = _text(data, "content", MAX_CONTENT_CHARS)
    protected = data.get("protected", False)
    if protected is None:
        protected = False
    if not isinstance(protected, bool):
        raise InvalidOutputError("protected is not true or false")
    language = detect_language(f"{turn.user}\n{turn.assistant}")
    return Analysis(
        intensity=intensity,
        valence=valence,
        arousal=arousal,
        tags=tags,
        category=category,
        keywords=keywords,
        trigger=trigger,
        content=content,
        protected=protected,
        language=language,
        analyzer=analyzer,
    )


def parse_compressed(text: str) -> Compressed:
    """Validate a Level 1 → 2 summary answer: ``{"trigger", "content"}``, both non-empty."""
    data = extract_json_object(text)
    return Compressed(
        trigger=_text(data, "trigger", MAX_TRIGGER_CHARS),
        content=_text(data, "content", MAX_CONTENT_CHARS),
    )


def _keyword_field(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        words = [v.strip() for v in value]
    elif isinstance(value, str):
        words = _KEYWORD_SPLIT.split(value.strip())
    else:
        raise InvalidOutputError(f"{key} is missing or not a string")
    kept = _unique([w[:MAX_KEYWORD_CHARS].strip() for w in words if w.strip()])
    if not kept:
        raise InvalidOutputError(f"{key} has no keywords")
    return ", ".join(kept[:MAX_FIELD_KEYWORDS])


def parse_keywords(text: str) -> Compressed:
    """Validate a Level 2 → 3 answer: comma-separated keywords (a list is accepted too)."""
    data = extract_json_object(text)
    return Compressed(
        trigger=_keyword_field(data, "trigger"), content=_keyword_field(data, "content")
    )
