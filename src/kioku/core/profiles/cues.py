"""Whether an utterance may say something about its speaker: a cheap gate before paid extraction.

Asking an LLM for the profile claims of every turn would cost a call per turn, and most turns
("can you fix this test?", 「ありがとう」) state nothing about the speaker. :func:`has_profile_cue`
says whether a text holds a first-person word (English I, I'm, my, me, we, our...; Japanese
私, 僕, 俺, わたし, うち, 自分...) or, because Japanese leaves the subject out
(「大阪に住んでいます」), one of the words profile statements are made with (好き, 嫌い, 住,
出身, 働, アレルギー...). It errs on the side of yes: a cue only lets the extractor look, and
the extractor decides. Pure; reads the first :data:`~kioku.core.profiles.SCAN_LIMIT`
characters, as extraction does.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from kioku.core.profiles.extract import SCAN_LIMIT

__all__ = ["JA_PROFILE_WORDS", "has_profile_cue"]

#: English first-person words, whole words in any case ("i like", "I'm", "my", "we're").
_EN_FIRST_PERSON: Final = re.compile(
    r"(?<![a-z0-9])(?:i|im|ive|me|my|mine|myself|we|us|our|ours|ourselves)(?![a-z0-9])",
    re.IGNORECASE,
)
#: Japanese first-person words (written anywhere: Japanese has no spaces between words).
_JA_FIRST_PERSON: Final = ("私", "僕", "俺", "わたし", "あたし", "わたくし", "うち", "自分", "ぼく")
#: Words Japanese profile statements are made with, subject or not: likes and dislikes, home
#: and origin, work, allergies, pets, hobbies.
JA_PROFILE_WORDS: Final = (
    "好き",
    "嫌い",
    "苦手",
    "住",
    "出身",
    "生まれ",
    "育ち",
    "働",
    "勤め",
    "勤務",
    "アレルギー",
    "飼",
    "趣味",
)


def has_profile_cue(text: str) -> bool:
    """True when ``text`` has a first-person word or a Japanese profile word.

    Full-width letters count (NFKC), so do curly apostrophes ("I’m"). Never raises; a blank
    text has no cue.
    """
    if not text or not text.strip():
        return False
    head = unicodedata.normalize("NFKC", text[:SCAN_LIMIT])
    if _EN_FIRST_PERSON.search(head):
        return True
    return any(word in head for word in (*_JA_FIRST_PERSON, *JA_PROFILE_WORDS))
