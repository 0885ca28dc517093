"""Finding Japanese emotion words in normalised text, with negation and degree words.

The scan is a greedy longest match from left to right over the lexicon's stems. A match must
start (and, for nouns and phrases, end) on a morpheme boundary when fugashi is available, so 愛
does not fire inside 愛知 and やった not inside やったら. Degree words (すごく, ちょっと) scale the
next emotion word within a few characters; a degree word with nothing to modify counts as a word
itself when the lexicon knows it (「まあまあかな」, 「すごい！」).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Final

from .hits import Hit
from .lexicon import Entry, JaLexicon
from .negation_ja import (
    ADJ_INFLECTION,
    PERMISSION_WORDS,
    conditional_after,
    conditional_before,
    is_negated,
    permission_before,
)

__all__ = ["RawHit", "match_japanese"]

_VERB_FORMS: Final = frozenset({"v1", "v5a", "v5i", "v5e", "v5te"})
#: A degree word reaches an emotion word at most this many characters later.
_DEGREE_REACH: Final = 6
_CLAUSE_STOP: Final = frozenset("。!?、,.\n」)")
_OWN_ENDING: Final = frozenset("いくかけ")
_KANA_OR_KANJI_AFTER_STEM_OK: Final = ADJ_INFLECTION | frozenset("ー~っ")
# A positive word followed by のに is an expectation that was let down: 楽しみにしてたのに.
_NONI: Final = "のに"
# 「もう」 before an unpleasant word: the speaker has had enough.
_ENOUGH_ALREADY: Final = frozenset({"もう"})
#: Tears (泣いた, 泣きそう, 涙) are being moved, not sadness, when the rest of the turn is kind or
#: glad: 「見送ってくれて、ちょっと泣きそうになった」, 「サプライズしてくれて、泣いちゃった」.
#: Trembling there is excitement, not fear (「一位でゴールした。手が震えた」).
_TEARS: Final = frozenset({"泣く", "泣ける", "泣きそう", "涙", "泣いた", "震える"})
_TREMBLING: Final = "震える"
_MOVED_SHARE: Final = 0.6


@dataclass(frozen=True, slots=True)
class RawHit:
    """A lexicon match before clause weighting."""

    hit: Hit
    end: int
    topical: bool
    hypothetical: bool
    #: Emoji, kaomoji, laughter: offsets are approximate and clause weighting does not apply.
    expressive: bool = False


class _Heads:
    """The words and degree words of one lexicon by their first character: the longest one's
    length, and every length there is (longest first)."""

    def __init__(self, lex: JaLexicon) -> None:
        self.lex = lex
        self.word_lengths = _lengths_by_head(lex.words)
        self.modifier_lengths = _lengths_by_head(lex.modifiers)
        self.words = {head: lengths[0] for head, lengths in self.word_lengths.items()}
        self.modifiers = {head: lengths[0] for head, lengths in self.modifier_lengths.items()}
        chars = sorted({*self.word_lengths, *self.modifier_lengths, *_CLAUSE_STOP})
        #: A character that ends a clause or starts a word or degree word.
        self.interesting = re.compile("[" + "".join(re.escape(c) for c in chars) + "]")


def _lengths_by_head(keys: Collection[str]) -> dict[str, tuple[int, ...]]:
    """First character → the lengths of the keys that start with it, longest first."""
    lengths: dict[str, set[int]] = {}
    for key in keys:
        if key:
            lengths.setdefault(key[0], set()).add(len(key))
    return {head: tuple(sorted(ls, reverse=True)) for head, ls in lengths.items()}


#: The heads of the lexicon last used (in practice there is one).
_LAST_HEADS: list[_Heads] = []


def _heads(lex: JaLexicon) -> _Heads:
    if _LAST_HEADS and _LAST_HEADS[0].lex is lex:
        return _LAST_HEADS[0]
    heads = _Heads(lex)
    _LAST_HEADS[:] = [heads]
    return heads


def _adj_stem_ok(text: str, end: int) -> bool:
    if end >= len(text):
        return True
    ch = text[end]
    if ch in _KANA_OR_KANJI_AFTER_STEM_OK:
        return True
    o = ord(ch)
    return not (0x3040 <= o <= 0x30FF or 0x4E00 <= o <= 0x9FFF)


def _longest(
    text: str,
    i: int,
    table: Collection[str],
    max_len: int,
    ends: Collection[int] | None,
    need_end: bool,
) -> int:
    """The longest key of ``table`` at ``i``, of at most ``max_len`` characters."""
    return _longest_of(text, i, table, range(max_len, 0, -1), ends, need_end)


def _longest_of(
    text: str,
    i: int,
    table: Collection[str],
    lengths: Sequence[int],
    ends: Collection[int] | None,
    need_end: bool,
) -> int:
    """The longest key of ``table`` at ``i`` (``lengths``: the keys' lengths, longest first)."""
    room = len(text) - i
    for length in lengths:
        if length > room:
            continue
        if text[i : i + length] in table and (not need_end or ends is None or (i + length) in ends):
            return length
    return 0


def _lex_match(
    text: str, i: int, lex: JaLexicon, ends: Collection[int] | None, max_len: int
) -> tuple[int, Entry, str] | None:
    """The longest lexicon word at ``i`` that fits there, of at most ``max_len`` characters."""
    return _lex_match_of(text, i, lex, ends, range(max_len, 0, -1))


def _lex_match_of(
    text: str, i: int, lex: JaLexicon, ends: Collection[int] | None, lengths: Sequence[int]
) -> tuple[int, Entry, str] | None:
    """:func:`_lex_match` trying only ``lengths`` (longest first)."""
    room = len(text) - i
    for length in lengths:
        if length > room:
            continue
        found = lex.words.get(text[i : i + length])
        if found is None:
            continue
        entry, form = found
        end = i + length
        if form == "adj":
            fits = _adj_stem_ok(text, end)
            # An inflection (い, く, か, け) belongs to the adjective's own morpheme: when
            # a morpheme starts there, the stem is a chance sequence
            # (no 痛い in 「していたイベント」).
            if fits and ends is not None and end in ends and text[end : end + 1] in _OWN_ENDING:
                fits = False
        elif form in ("na", "plain"):
            fits = ends is None or end in ends
        else:
            fits = form not in _VERB_FORMS or length > 1
        if fits:
            return length, entry, form
    return None


def _make_hit(
    text: str,
    start: int,
    end: int,
    entry: Entry,
    form: str,
    degree: float,
    degree_word: str = "",
) -> RawHit:
    negated = form != "plain" and is_negated(text, end, form)
    score = entry.score * degree
    if entry.term in PERMISSION_WORDS and permission_before(text, start):
        score *= 0.1
    tags = entry.tags
    if negated:
        if score > 0:
            score, tags = -0.75 * score, ("sadness",)
        else:
            score, tags = -0.35 * score, ()
    elif score > 0 and _NONI in text[end : end + 8].split("、")[0]:
        score, tags = -0.6 * score, ("sadness", "frustration")
    if degree_word in _ENOUGH_ALREADY and score < 0 and "resignation" not in tags:
        tags = (*tags[:2], "resignation")  # もう疲れた, もう限界: had enough
    hypothetical = conditional_after(text, end, form) or (
        score > 0 and conditional_before(text, start)
    )
    hit = Hit(entry.term, start, score, entry.arousal, tags, negated, degree)
    return RawHit(hit, end, entry.topical, hypothetical)


def match_japanese(
    text: str,
    lex: JaLexicon,
    starts: Collection[int] | None = None,
    ends: Collection[int] | None = None,
) -> list[RawHit]:
    """Emotion hits in normalised text; ``starts``/``ends`` are allowed word boundaries."""
    hits: list[RawHit] = []
    n = len(text)
    heads = _heads(lex)
    pending: tuple[float, int, int, tuple[int, Entry, str] | None] | None = None
    i = 0

    def flush() -> None:
        nonlocal pending
        if pending is not None and pending[3] is not None:
            length, entry, form = pending[3]
            hits.append(_make_hit(text, pending[1], pending[1] + length, entry, form, 1.0))
        pending = None

    interesting = heads.interesting
    while i < n:
        # Nothing happens at a character that ends no clause and starts no word or degree word,
        # but for a pending degree word going stale: flush() below, or at the end, sees to that
        # just as well (no hit is added in between).
        found_at = interesting.search(text, i)
        if found_at is None:
            break
        i = found_at.start()
        ch = text[i]
        if ch in _CLAUSE_STOP:
            flush()
            i += 1
            continue
        if starts is not None and i not in starts:
            i += 1
            continue
        # Only keys that start with this character can match here.
        word_lengths = heads.word_lengths.get(ch)
        modifier_lengths = heads.modifier_lengths.get(ch)
        lex_found = _lex_match_of(text, i, lex, ends, word_lengths) if word_lengths else None
        mod_len = (
            _longest_of(text, i, lex.modifiers, modifier_lengths, ends, True)
            if modifier_lengths
            else 0
        )
        lex_len = lex_found[0] if lex_found else 0
        if mod_len and mod_len >= lex_len:
            flush()
            word = text[i : i + mod_len]
            own = lex_found if lex_found and lex_found[0] == mod_len else None
            if own is None and lex_found and lex_found[2] == "adj" and lex_found[0] < mod_len:
                own = lex_found  # すごい is listed by its stem すご: 「このボリュームはすごい」
            if own is None and word in lex.words:
                entry, form = lex.words[word]
                own = (mod_len, entry, form)
            pending = (lex.modifiers[word], i, i + mod_len, own)
            i += mod_len
            continue
        if lex_found is not None:
            length, entry, form = lex_found
            degree = 1.0
            degree_word = ""
            if pending is not None and i - pending[2] <= _DEGREE_REACH:
                degree = pending[0]
                degree_word = text[pending[1] : pending[2]]
                pending = None
            else:
                flush()
            hits.append(_make_hit(text, i, i + length, entry, form, degree, degree_word))
            i += length
            continue
        if pending is not None and i - pending[2] > _DEGREE_REACH:
            flush()
        i += 1
    flush()
    return _moved_tears(hits)


def _moved_tears(hits: list[RawHit]) -> list[RawHit]:
    """Tears in a turn whose other words are glad or grateful read as being moved."""
    tears = [r for r in hits if r.hit.term in _TEARS and r.hit.score < 0 and not r.hit.negated]
    if not tears:
        return hits
    rest = [r.hit.score for r in hits if r.hit.term not in _TEARS and not r.hypothetical]
    glad = sum(x for x in rest if x > 0)
    if glad < 1.0 or glad <= -sum(x for x in rest if x < 0):
        return hits
    grateful = any("gratitude" in r.hit.tags for r in hits)
    tags = ("joy", "gratitude") if grateful else ("joy",)
    out: list[RawHit] = []
    for raw in hits:
        if raw in tears:
            how = ("excitement", "joy") if raw.hit.term == _TREMBLING else tags
            moved = replace(raw.hit, score=-_MOVED_SHARE * raw.hit.score, tags=how)
            raw = replace(raw, hit=moved)
        out.append(raw)
    return out
