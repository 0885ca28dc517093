"""Japanese segmentation: fugashi + UniDic when installed, a script-run segmenter otherwise.

Both return the same :class:`Token` shape, with offsets into the text they were given, so
everything downstream works with either. fugashi is imported lazily, on first use, and one tagger
is shared by the whole process.
"""

from __future__ import annotations

import importlib
import re
import threading
from dataclasses import dataclass
from typing import Final, Protocol

__all__ = [
    "FugashiSegmenter",
    "ScriptSegmenter",
    "Segmenter",
    "Token",
    "default_segmenter",
    "fugashi_available",
]

#: Coarse parts of speech used downstream.
NOUN: Final = "noun"
PROPN: Final = "propn"
NUM: Final = "num"
VERB: Final = "verb"
ADJ: Final = "adj"
ADV: Final = "adv"
PRON: Final = "pron"
PARTICLE: Final = "particle"
AUX: Final = "aux"
AFFIX: Final = "affix"
SYMBOL: Final = "symbol"
OTHER: Final = "other"

_POS_MAP: Final = {
    "名詞": NOUN,
    "代名詞": PRON,
    "動詞": VERB,
    "形容詞": ADJ,
    "形状詞": ADJ,
    "副詞": ADV,
    "連体詞": ADV,
    "接続詞": PARTICLE,
    "感動詞": OTHER,
    "助詞": PARTICLE,
    "助動詞": AUX,
    "接頭辞": AFFIX,
    "接尾辞": AFFIX,
    "補助記号": SYMBOL,
    "記号": SYMBOL,
    "空白": SYMBOL,
}


@dataclass(frozen=True, slots=True)
class Token:
    """One morpheme (or script run) with its offset in the segmented text."""

    surface: str
    start: int
    pos: str
    #: Finer detail: for nouns ``sahen`` (する-verb noun), ``adverbial``, ``suffix`` or ``""``.
    detail: str = ""

    @property
    def end(self) -> int:
        return self.start + len(self.surface)


class Segmenter(Protocol):
    """Splits Japanese text into tokens."""

    @property
    def name(self) -> str: ...

    def __call__(self, text: str) -> list[Token]: ...


def _char_class(ch: str) -> str:
    o = ord(ch)
    if 0x3041 <= o <= 0x309F:
        return "hira"
    if 0x30A0 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF:
        return "kata"
    if 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or o in (0x3005, 0x3006):
        return "kanji"
    if ch.isascii() and (ch.isalnum() or ch in "_+#"):
        return "digit" if ch.isdigit() else "latin"
    if ch.isspace():
        return "space"
    if ch.isalpha():
        return "alpha"
    return "symbol"


_RUN_POS: Final = {
    "kanji": NOUN,
    "kata": NOUN,
    "latin": NOUN,
    "alpha": NOUN,
    "digit": NUM,
    "hira": OTHER,
    "symbol": SYMBOL,
}


_PARTICLE_START: Final = frozenset("のはがをにとでもへやかなだ")
#: Lone surrogates (text decoded from JSON escapes like "\\ud800"): MeCab takes UTF-8, which
#: cannot hold them, so each is read as U+FFFD, one character for one (offsets still hold).
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


class ScriptSegmenter:
    """Fallback: runs of kanji, katakana, Latin letters, digits, hiragana and symbols.

    No dictionary is needed. Kanji, katakana and Latin runs stand in for nouns; hiragana runs
    carry the grammar and are never keywords.
    """

    name = "script"

    def __call__(self, text: str) -> list[Token]:
        tokens: list[Token] = []
        n = len(text)
        i = 0
        while i < n:
            cls = _char_class(text[i])
            j = i + 1
            if cls == "symbol":
                # Symbols are single tokens so that lexicon matches can start anywhere among them.
                pass
            else:
                while j < n:
                    nxt = _char_class(text[j])
                    same = nxt == cls or (cls == "kata" and text[j] == "ー")
                    if same or (cls == "latin" and nxt == "digit"):
                        j += 1
                    elif cls == "latin" and text[j] in ".-" and j + 1 < n:
                        if _char_class(text[j + 1]) in ("latin", "digit"):
                            j += 1
                        else:
                            break
                    else:
                        break
            if cls != "space":
                pos = _RUN_POS.get(cls, OTHER)
                # One kanji followed by okurigana (受けた, 思う) is a verb or adjective stem.
                if (
                    cls == "kanji"
                    and j - i == 1
                    and j < n
                    and _char_class(text[j]) == "hira"
                    and text[j] not in _PARTICLE_START
                ):
                    pos = OTHER
                tokens.append(Token(text[i:j], i, pos))
            i = j
        return tokens


class _Tagger(Protocol):
    def parse(self, text: str) -> str: ...


class FugashiSegmenter:
    """Morphological analysis with fugashi (MeCab) and the UniDic dictionary."""

    name = "fugashi"

    def __init__(self) -> None:
        self._tagger: _Tagger | None = None
        self._lock = threading.Lock()

    def load(self) -> _Tagger:
        """Import fugashi and load the dictionary (once); raises when either is missing."""
        with self._lock:
            if self._tagger is None:
                # Lazy: fugashi and its dictionary load only when Japanese text is first seen.
                fugashi = importlib.import_module("fugashi")
                tagger: _Tagger = fugashi.Tagger()
                self._tagger = tagger
            return self._tagger

    def __call__(self, text: str) -> list[Token]:
        tagger = self._tagger or self.load()
        # parse() is much faster than walking node objects; offsets are found again in the text.
        flat = _SURROGATE.sub("\ufffd", text.replace("\n", " ").replace("\t", " "))
        output = tagger.parse(flat)
        tokens: list[Token] = []
        offset = 0
        kinds = _KINDS
        for line in output.split("\n"):
            fields = line.split("\t", 5)  # surface … part of speech; the rest is not read
            if len(fields) < 5:
                continue
            surface = fields[0]
            start = flat.find(surface, offset)
            if start < 0:
                continue
            offset = start + len(surface)
            key = (fields[4], surface)
            kind = kinds.get(key)
            if kind is None:
                if len(kinds) >= _KINDS_LIMIT:
                    kinds.clear()
                kind = kinds[key] = _kind(fields[4], surface)
            tokens.append(Token(surface, start, kind[0], kind[1]))
        return tokens


#: :func:`_kind` by (UniDic part of speech, surface); cleared when it grows past the limit.
_KINDS: dict[tuple[str, str], tuple[str, str]] = {}
_KINDS_LIMIT: Final = 50_000


def _kind(unidic_pos: str, surface: str) -> tuple[str, str]:
    """The coarse part of speech and detail of a morpheme from UniDic's ``名詞-普通名詞-一般``."""
    pos = unidic_pos.split("-")
    pos1 = pos[0]
    pos2 = pos[1] if len(pos) > 1 else ""
    pos3 = pos[2] if len(pos) > 2 else ""
    return _map_unidic(pos1, pos2, pos3, surface)


def _map_unidic(pos1: str, pos2: str, pos3: str, surface: str) -> tuple[str, str]:
    coarse = _POS_MAP.get(pos1, OTHER)
    if pos1 == "空白":
        return SYMBOL, "space"
    if coarse == NOUN:
        if pos2 == "固有名詞":
            return PROPN, pos3
        if pos2 == "数詞":
            return NUM, ""
        if pos3 == "サ変可能" or pos3 == "サ変形状詞可能":
            return NOUN, "sahen"
        if pos3 == "副詞可能" or pos3 == "助数詞可能":
            return NOUN, "adverbial"
        if surface.isascii() and any(c.isalpha() for c in surface):
            return NOUN, "latin"
        return NOUN, ""
    if coarse == AFFIX:
        if pos1 == "接尾辞" and pos2 == "名詞的":
            return AFFIX, "noun_suffix"
        return AFFIX, "prefix" if pos1 == "接頭辞" else "suffix"
    if pos2 == "非自立可能":
        return coarse, "nonindependent"
    if pos1 == "助詞" and pos2 == "接続助詞":
        return coarse, "conj"
    return coarse, ""


_DEFAULT_LOCK = threading.Lock()
_DEFAULT: list[Segmenter] = []


def fugashi_available() -> bool:
    """True when fugashi and a UniDic dictionary can be loaded (loads them once if so)."""
    return default_segmenter().name == FugashiSegmenter.name


def default_segmenter() -> Segmenter:
    """The shared fugashi segmenter, or the script segmenter when fugashi cannot be loaded."""
    with _DEFAULT_LOCK:
        if not _DEFAULT:
            seg: Segmenter
            try:
                fug = FugashiSegmenter()
                fug.load()
                seg = fug
            except Exception:  # ImportError, or MeCab failing to find a dictionary
                seg = ScriptSegmenter()
            _DEFAULT.append(seg)
        return _DEFAULT[0]
