"""The tokens SQLite's FTS5 ``unicode61 remove_diacritics 2`` tokenizer makes of a text.

The lexical cache (:mod:`.lexical_cache`) scores BM25 as FTS5 does, so it must see exactly
the tokens FTS5 indexed. kioku's terms are nearly always lower-case ASCII words and Japanese
words, which that tokenizer keeps whole and unchanged: a text made only of such words,
whitespace and ASCII punctuation (as in "you've") is split in Python. Any other text
(capitals, accents, other scripts and symbols) is tokenized by FTS5 itself, in a private
in-memory table.

Which characters are kept whole and unchanged depends on the Unicode tables of the running
SQLite, so :class:`Tokenizer` checks every character of :data:`SAFE` and
:data:`PUNCTUATION` against FTS5 once before it takes the Python path; if any fails, FTS5
tokenizes every text.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections import Counter
from typing import Final

__all__ = ["SAFE", "SAFE_RANGES", "Tokenizer", "is_safe"]

#: Characters FTS5's ``unicode61 remove_diacritics 2`` treats as parts of words and leaves
#: as they are: ASCII digits and small letters, kana (without the separate sound marks and
#: the middle dot), the iteration marks 々 and 〆 and the CJK ideographs.
SAFE_RANGES: Final = (
    (0x30, 0x39),
    (0x61, 0x7A),
    (0x3005, 0x3006),
    (0x3041, 0x3096),
    (0x309D, 0x309F),
    (0x30A1, 0x30FA),
    (0x30FC, 0x30FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
)
SAFE: Final = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in SAFE_RANGES)
#: ASCII punctuation, which that tokenizer only ever splits at ("you've": "you", "ve").
PUNCTUATION: Final = "".join(chr(c) for c in range(0x21, 0x7F) if not chr(c).isalnum())
_SAFE_WORDS: Final = re.compile(f"[{SAFE}\\s{re.escape(PUNCTUATION)}]*")
_SAFE_WORD: Final = re.compile(f"[{SAFE}]+")
_TOKENIZE: Final = 'tokenize = "unicode61 remove_diacritics 2"'


def is_safe(term: str) -> bool:
    """Whether FTS5 indexes ``term`` as exactly one token, ``term`` itself."""
    return _SAFE_WORD.fullmatch(term) is not None


class Tokenizer:
    """Token counts of texts as the lexical index's tokenizer makes them (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._python: bool | None = None  # whether the Python path agrees with FTS5

    def counts(self, text: str) -> Counter[str]:
        """How often each token occurs in ``text``."""
        if _SAFE_WORDS.fullmatch(text) is not None and self._python_agrees():
            return Counter(_SAFE_WORD.findall(text))
        return self._fts5(text)

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            conn.execute(f"CREATE VIRTUAL TABLE words USING fts5(text, {_TOKENIZE})")
            conn.execute("CREATE VIRTUAL TABLE words_seen USING fts5vocab(words, 'instance')")
            self._conn = conn
        return self._conn

    def _fts5(self, text: str) -> Counter[str]:
        with self._lock:
            conn = self._connection()
            conn.execute("DELETE FROM words")
            conn.execute("INSERT INTO words (rowid, text) VALUES (1, ?)", (text,))
            return Counter(str(row[0]) for row in conn.execute("SELECT term FROM words_seen"))

    def _python_agrees(self) -> bool:
        """Once: whether FTS5 keeps every character of :data:`SAFE` whole and unchanged and
        splits at every character of :data:`PUNCTUATION`."""
        if self._python is None:
            chars = [chr(c) for lo, hi in SAFE_RANGES for c in range(lo, hi + 1)]
            text = " ".join(chars) + " " + "".join(f"x{mark}" for mark in PUNCTUATION) + "x"
            with self._lock:
                conn = self._connection()
                conn.execute("DELETE FROM words")
                conn.execute("INSERT INTO words (rowid, text) VALUES (1, ?)", (text,))
                seen = [
                    str(row[0])
                    for row in conn.execute("SELECT term FROM words_seen ORDER BY offset")
                ]
                conn.execute("DELETE FROM words")
            self._python = seen == chars + ["x"] * (len(PUNCTUATION) + 1)
        return self._python
