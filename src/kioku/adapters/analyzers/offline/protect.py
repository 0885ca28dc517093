"""Explicit requests to remember (保護記憶): 「これは覚えておいて」「忘れないで」, "remember this".

Only requests count. Questions about memory (「覚えてる？」, "do you remember"), the speaker's own
forgetting (「忘れてた」, "I forgot") and the opposite request (「忘れて」) do not.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["is_protection_request", "protection_clauses"]

# Japanese, on NFKC text. Each pattern is a request form of 覚える/忘れる/記憶/記録/メモ.
_JA: Final = re.compile(
    r"覚え(?:て(?:お|と)い|とい|ておけ|とけ|てて(?:ほしい|欲しい|ね|ください|くれ|もらえ)"
    r"|て(?:ください|くれ|ほしい|欲しい|ね|もらえ|いただけ|てね)|直して|ておくように)"
    r"|忘れ(?:ないで(?=\s*$|[ねよ!。、.,)]|ください|下さい|ほしい|欲しい|くれ|もらえ|おいて|いて)"
    r"|ないでね|るな(?!ら)|んな(?:よ|[!。]|\s*$)|ないように(?:して|ね|!|。|\s*$)|ずに(?:いて|おいて))"
    r"|(?:記憶|記録|メモ|保存|登録)(?:して(?:おいて|おけ|ください|ほしい|欲しい|ね|て|もらえ|くれ)"
    r"|しといて|しておいて|しとけ)"
    r"|メモっ(?:といて|ておいて|て(?=\s*$|[ねよ!。]))"
    r"|(?:記憶|記録|メモ)(?:に残して|しておいてほしい)"
    r"|(?:重要|大事|大切)だから(?:覚え|記憶|忘れ|メモ)"
    r"|頭に入れて(?:おいて|ね|ください)"
)

# English, on lower-cased NFKC text.
_EN: Final = re.compile(
    r"(?:^|[.!?,;:]\s*|\bplease\s+|\band\s+|\bjust\s+|\balso\s+|\bso\s+)"
    r"(?:remember|memori[sz]e)(?:\s+(?:this|that|it|these|my|me|the|to|for)\b|\s*[:\-])"
    r"(?!\s+(?:time|day|night|one|guy|song|movie|when)\b)"
    r"|\bplease\s+(?:remember|memori[sz]e|note|keep in mind|don't forget|do not forget)\b"
    r"|(?:^|[.!?,;:]\s*|\bplease\s+|\band\s+|\bbut\s+|\bso\s+)(?:don't|do not|never) forget\b"
    r"(?!\s+(?:about it|it)\b)"
    r"|\bmake (?:a )?note of\b|\bnote (?:this|that|it) down\b|\bwrite (?:this|that|it) down\b"
    r"|\bkeep (?:this|that|it) in mind\b|\bkeep in mind\b|\bcommit (?:this|that|it) to memory\b"
    r"|\bfor future reference\b|\b(?:save|store|record) (?:this|that) (?:for|in your memory)\b"
    r"|\bimportant\b[^.!?]{0,30}\b(?:keep|remember|save|store) (?:it|this|that)\b"
    r"|\b(?:never|don't|do not) let me forget\b|\bremember for (?:next time|later|the future)\b"
)
_EN_QUESTION: Final = re.compile(r"\b(?:do|did|can|could|would|will) you (?:remember|recall)\b")
_EN_EXPLICIT: Final = re.compile(r"\b(?:don't|do not) forget\b|\bplease remember\b")
#: The first characters of every request form in :data:`_JA`: text without any of them
#: cannot match it.
_JA_FIRST: Final = re.compile("[覚忘記メ保登重大頭]")


def _may_ask_en(low: str) -> bool:
    """False only when :data:`_EN` cannot match ``low``: each of its alternatives needs one of
    these strings (checking them is much quicker than trying the pattern)."""
    return (
        "remember" in low
        or "memor" in low
        or "please" in low
        or "forget" in low
        or "note of" in low
        or " down" in low
        or "in mind" in low
        or "future reference" in low
        or "save th" in low
        or "store th" in low
        or "record th" in low
        or ("important" in low and ("keep " in low or "save " in low or "store " in low))
    )


#: Where the clause of a request to remember ends (:func:`protection_clauses`).
_CLAUSE_END: Final = re.compile(r"[、。，,.;；:：!！?？\n]")


def protection_clauses(text: str) -> tuple[tuple[int, int], ...]:
    """Where ``text`` (NFKC, lower-case) explicitly asks to remember: each request's clause,
    from its first character to the next punctuation or the end. What such a request asks for
    is no task: 「これは覚えておいて：来週の木曜は母の誕生日」 tells a fact."""
    spans: list[tuple[int, int]] = []
    if not text.isascii() and _JA_FIRST.search(text):
        spans.extend((m.start(), m.end()) for m in _JA.finditer(text))
    low = text.replace("’", "'")
    if _may_ask_en(low):
        spans.extend((m.start(), m.end()) for m in _EN.finditer(low))
    clauses = []
    for start, end in spans:
        stop = _CLAUSE_END.search(text, end)
        clauses.append((start, len(text) if stop is None else stop.start()))
    return tuple(clauses)


def is_protection_request(nfkc_text: str) -> bool:
    """True when the user explicitly asks for this to be remembered."""
    if not nfkc_text.isascii() and _JA_FIRST.search(nfkc_text) and _JA.search(nfkc_text):
        return True
    low = nfkc_text.lower().replace("’", "'")
    if not _may_ask_en(low) or not _EN.search(low):
        return False
    # "Do you remember this?" asks about memory; it is not a request.
    return not (_EN_QUESTION.search(low) and "?" in low and not _EN_EXPLICIT.search(low))
