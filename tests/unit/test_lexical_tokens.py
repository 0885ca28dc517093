"""The tokens of :mod:`.lexical_tokens` are FTS5's ``unicode61 remove_diacritics 2`` tokens."""

from __future__ import annotations

import sqlite3
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.store.sqlite.lexical_tokens import SAFE_RANGES, Tokenizer, is_safe


def _fts5(text: str) -> Counter[str]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(
            'CREATE VIRTUAL TABLE t USING fts5(x, tokenize = "unicode61 remove_diacritics 2")'
        )
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        conn.execute("INSERT INTO t (x) VALUES (?)", (text,))
        return Counter(str(row[0]) for row in conn.execute("SELECT term FROM v"))
    finally:
        conn.close()


_TOKENIZER = Tokenizer()
#: Safe characters, whitespace, and characters FTS5 splits at, folds or drops.
_CHARS = "ab z09寿司ラーメンたべ々\t\n\x1f\u3000-'.,!~_@AÉéｂＡ\u3099・ー’"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_CHARS, max_size=40))
def test_counts_equal_fts5(text: str) -> None:
    assert _TOKENIZER.counts(text) == _fts5(text)


def test_every_safe_character_is_one_unchanged_token() -> None:
    chars = [chr(c) for low, high in SAFE_RANGES for c in range(low, high + 1)]
    assert all(is_safe(c) for c in chars)
    assert _fts5(" ".join(chars)) == Counter(chars)
    assert _TOKENIZER._python_agrees()


def test_only_single_unchanged_tokens_are_safe() -> None:
    for term in ("coffee", "寿司", "x1"):
        assert is_safe(term)
    for term in ("", "don't", "Tokyo", "café", "e-mail", "two words", "ｂ", "か\u3099"):
        assert not is_safe(term)
