"""Procedural or semantic: how the day's episodes are sorted before consolidation.

Spec 001 (手続きコンテンツ分類) sorts episodes with regular expressions: text that says how to
do something (手順, 設定方法, コマンド, ワークフロー, ...) feeds procedures, the rest feeds
knowledge. :data:`PROCEDURAL_PATTERNS` are the twelve patterns, each in Japanese and English;
an episode is procedural when two of them match or when it lays out ordered steps.
:func:`split_sentences` cuts Japanese and English text into sentences (always substrings of the
input), and :func:`ordered_steps` finds the steps themselves, which extraction reuses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = [
    "PROCEDURAL_PATTERNS",
    "Steps",
    "classify_sentences",
    "is_procedural",
    "ordered_steps",
    "procedural_score",
    "split_sentences",
]

_FLAGS: Final = re.IGNORECASE | re.MULTILINE

#: A step marker at the start of a line: "1." "2)" "①" "ステップ1" "step 2:" "- " "* " "・".
_NUMBERED: Final = (
    r"(?:\d{1,2}[.)）](?=\s)|\d{1,2}[．、]|[①-⑳]|(?:ステップ|step)\s*\d{1,2}\s*[:：.)）]?)"
)
_BULLET: Final = r"(?:[-*•・](?=\s)|[・•])"
_LINE_MARKER = re.compile(
    r"^[ \t\u3000]*(?:(" + _NUMBERED + r")|" + _BULLET + r")[ \t\u3000]*", _FLAGS
)
#: Inline numbering: "1. build 2. push" or "①テスト ②ビルド" inside one line.
_INLINE_MARKER = re.compile(r"(?:^|(?<=\s)|(?<=[:：]))(\d{1,2})[.)）]\s+|([①-⑳])\s*", _FLAGS)
#: Words that order steps; a sequence starts with "first"/まず and goes on with the rest.
_SEQ_START = re.compile(
    r"\b(?:first(?:ly)?|to begin(?: with)?)\b[,:]?\s*|まず(?:は)?[、,]?", _FLAGS
)
_SEQ_NEXT = re.compile(
    r"\b(?:then|next|after that|afterwards|finally|lastly|last of all)\b[,:]?\s*"
    r"|(?:次に|それから|その後|続いて|最後に)[、,]?",
    _FLAGS,
)
#: Where a sentence ends, for the last step of an inline sequence.
_SENTENCE_END = re.compile(r"[。！？!?\n]|\.(?=\s|$)")
_PARAGRAPH = re.compile(r"\n[ \t\u3000]*\n")
_MAX_STEP: Final = 300
_CLAUSE_BREAKS: Final = frozenset(".!?:;,()[]\n-\"'")
#: A step told as something someone did ("First I went ..., then we ate") is a story.
_NARRATIVE = re.compile(r"^(?:i|we|he|she|they|my|our)\b", re.IGNORECASE)
#: What may trail a step and is not part of it.
_STEP_TAIL = re.compile(r"(?:[\s,，、;；:：]|\band\b|\bthen\b)+$", re.IGNORECASE)

PROCEDURAL_PATTERNS: Final[tuple[re.Pattern[str], ...]] = tuple(
    re.compile(p, _FLAGS)
    for p in (
        # 1. steps, procedure, instructions / 手順, 段取り
        r"\b(?:steps?|procedures?|instructions?)\b|手順|段取り",
        # 2. how to / やり方, 設定方法, 方法, 仕方
        r"\bhow\s+to\b|やり方|方法|仕方|手引き",
        # 3. commands, `run ...` and inline code / コマンド
        r"\bcommands?\b|コマンド|(?<![Aa] )(?<!the )\brun\s+[`'\"]?[\w./-]+|`[^`\n]+`",
        # 4. workflow, pipeline / ワークフロー, パイプライン
        r"\bwork\s?flows?\b|\bpipelines?\b|ワークフロー|パイプライン",
        # 5. numbered or bulleted step lines, "step 2" / ステップ1, ①
        r"^[ \t]*(?:\d{1,2}[.)）]\s+\S|[-*•・]\s*\S)|\bstep\s*\d+\b|ステップ\s*\d+|[①-⑳]",
        # 6. ordered sequences: first ... then ... / まず ... 次に ...
        r"\bfirst(?:ly)?\b.{0,200}?\b(?:then|next|after that|finally)\b"
        r"|まず.{0,200}?(?:次に|それから|その後|最後に)",
        # 7. install, set up / インストール, セットアップ, 導入
        r"\binstall(?:s|ed|ing|ation)?\b|\bset\s?up\b|インストール|セットアップ|導入",
        # 8. deploy, release / デプロイ, リリース
        r"\bdeploy\w*|\breleas(?:e|es|ed|ing)\b|デプロイ|リリース",
        # 9. configure, config, settings / 設定, 構成
        r"\bconfig\w*|\bsettings?\b|設定|構成",
        # 10. shell prompts and code fences: "$ make", ">>> ", "```"
        r"^[ \t]*(?:\$|%|>>>|PS>)[ \t]+\S|```|~~~",
        # 11. execute / 実行
        r"\bexecut\w*|実行",
        # 12. checklists, recipes / チェックリスト, レシピ
        r"\bcheck\s?lists?\b|\brecipes?\b|チェックリスト|レシピ",
    )
)

#: Words before a full stop that do not end a sentence ("e.g.", "Mr.", "No. 5").
_ABBREVIATIONS: Final = frozenset(
    "e.g i.e etc vs mr mrs ms dr prof st jr sr no fig approx cf al inc ltd co".split()
)
_BREAK = re.compile(r"[。！？]+[」』）)\"']*|[.!?]+[\"')\]」』]*(?=\s)|\n")
_WORD_BEFORE = re.compile(r"(\S+)$")


@dataclass(frozen=True, slots=True)
class Steps:
    """Ordered steps found in a text: each step's ``(start, end)`` span, and where the text
    that introduces them ends (``lead``: the steps start after it)."""

    spans: tuple[tuple[int, int], ...]
    lead: int
    kind: str


#: Words one of the patterns needs (lower case): a text with none of them, and none of the
#: characters that mark steps, prompts or code, matches no pattern (checked in microseconds).
_NEEDED: Final = (
    "step procedure instruction how command run work flow pipeline first install setup set up "
    "deploy releas config setting execut check recipe 手順 段取り やり方 方法 仕方 手引き "
    "コマンド ワークフロー パイプライン まず ステップ インストール セットアップ 導入 "
    "デプロイ リリース 設定 構成 実行 チェックリスト レシピ"
).split()
_MARKS: Final = frozenset("0123456789-*•・$%>`~①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳")


def _may_match(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _NEEDED) or not _MARKS.isdisjoint(text)


def procedural_score(text: str) -> int:
    """How many of the :data:`PROCEDURAL_PATTERNS` match ``text``."""
    if not _may_match(text):
        return 0
    return sum(1 for pattern in PROCEDURAL_PATTERNS if pattern.search(text))


def is_procedural(text: str) -> bool:
    """Whether ``text`` says how to do something: two patterns match, or it lays out at least
    two ordered steps (numbered lines, or a first ... then sequence that is not a story)."""
    if procedural_score(text) >= 2:
        return True
    found = ordered_steps(text)
    return found is not None and found.kind != "bullets"


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, in order, each a substring of ``text``.

    Japanese ends a sentence at 。！？; English at . ! ? before whitespace, except after an
    abbreviation ("e.g.", "Mr."), an initial or a step number ("1."). A line break always
    ends one, so list items are sentences of their own.
    """
    out: list[str] = []
    start = 0
    for match in _BREAK.finditer(text):
        if match.group(0).startswith(".") and _keeps_going(text, start, match.start()):
            continue
        _add(out, text[start : match.end()])
        start = match.end()
    _add(out, text[start:])
    return out


def _keeps_going(text: str, start: int, stop: int) -> bool:
    """Whether the full stop at ``stop`` is part of the sentence rather than its end: after an
    abbreviation, an initial ("J. Smith"), or a step number ("1. build 2. push")."""
    word = _WORD_BEFORE.search(text, start, stop)
    if word is None:
        return False
    token = word.group(1).lower().lstrip("(\"'")
    if token in _ABBREVIATIONS:
        return True
    if len(token) == 1 and token.isalpha() and text[word.start()].isupper():
        return True
    if not (token.isdigit() and len(token) <= 2):
        return False
    before = text[start : word.start()].rstrip()
    after = text[stop + 1 :].lstrip()[:1]
    return not before or before.endswith((":", "：")) or (after.isalpha() and after.islower())


def _add(out: list[str], piece: str) -> None:
    piece = piece.strip()
    if piece:
        out.append(piece)


def classify_sentences(text: str) -> tuple[list[str], list[str]]:
    """The sentences of ``text`` split into (procedural, semantic), order kept.

    In a procedural text a sentence is procedural when one pattern matches it or it is one of
    the steps; in any other text only a sentence that is procedural by itself is.
    """
    procedural: list[str] = []
    semantic: list[str] = []
    whole = is_procedural(text)
    steps = ordered_steps(text) if whole else None
    spans = steps.spans if steps is not None else ()
    cursor = 0
    for sentence in split_sentences(text):
        at = text.find(sentence, cursor)
        end = at + len(sentence)
        cursor = end
        in_steps = any(s < end and at < e for s, e in spans)
        if is_procedural(sentence) or (whole and (in_steps or procedural_score(sentence) >= 1)):
            procedural.append(sentence)
        else:
            semantic.append(sentence)
    return procedural, semantic


def ordered_steps(text: str) -> Steps | None:
    """The first run of at least two steps in ``text``: marked lines ("1.", "①", "- "),
    inline numbering ("1. build 2. push"), or a first/then (まず/次に) sequence."""
    return _line_steps(text) or _inline_steps(text) or _sequence_steps(text)


def _line_steps(text: str) -> Steps | None:
    """Consecutive lines that start with a step marker (blank lines may separate them)."""
    block: list[tuple[int, int]] = []
    numbered = True
    lead = 0
    pos = 0
    for line in text.splitlines(keepends=True):
        begin, pos = pos, pos + len(line)
        body = line.rstrip("\r\n")
        marker = _LINE_MARKER.match(body)
        if marker is not None and marker.end() < len(body.rstrip()):
            if not block:
                lead = begin
            block.append(_trim(text, begin + marker.end(), begin + len(body)))
            numbered = numbered and marker.group(1) is not None
        elif body.strip():
            if len(block) >= 2:
                break
            block = []
            numbered = True
    if len(block) < 2:
        return None
    return Steps(tuple(block), lead, "lines" if numbered else "bullets")


def _inline_steps(text: str) -> Steps | None:
    """Numbers counting up from 1 (or ①) inside one line: "To deploy: 1. build 2. push"."""
    run: list[re.Match[str]] = []
    for match in _INLINE_MARKER.finditer(text):
        number = int(match.group(1)) if match.group(1) else ord(match.group(2)) - ord("①") + 1
        follows = bool(run) and number == len(run) + 1
        if follows and "\n" not in text[run[-1].end() : match.start()]:
            run.append(match)
        elif len(run) >= 2:
            break
        else:
            run = [match] if number == 1 else []
    if len(run) < 2:
        return None
    return _spans(text, run, "inline")


def _sequence_steps(text: str) -> Steps | None:
    """A "first ..., then ..., finally ..." (まず…、次に…、最後に…) sequence: "first" opens a
    clause, the markers follow within one paragraph, and no step is told as a story."""
    start = next((m for m in _SEQ_START.finditer(text) if _opens_clause(text, m.start())), None)
    if start is None:
        return None
    markers = [start]
    for following in _SEQ_NEXT.finditer(text, start.end()):
        between = text[markers[-1].end() : following.start()]
        if _PARAGRAPH.search(between) or len(between) > _MAX_STEP:
            break
        markers.append(following)
    found = _spans(text, markers, "sequence") if len(markers) >= 2 else None
    if found is None or any(_NARRATIVE.match(text[s:e]) for s, e in found.spans):
        return None
    return found


def _opens_clause(text: str, at: int) -> bool:
    """Whether position ``at`` starts the text, a line or a clause (after punctuation)."""
    before = text[:at].rstrip(" \t\u3000")
    return not before or before[-1] in _CLAUSE_BREAKS or not before[-1].isascii()


def _spans(text: str, markers: list[re.Match[str]], kind: str) -> Steps | None:
    """Steps between successive markers; the last one runs to the end of its sentence."""
    spans: list[tuple[int, int]] = []
    for i, marker in enumerate(markers):
        if i + 1 < len(markers):
            stop = markers[i + 1].start()
        else:
            end = _SENTENCE_END.search(text, marker.end())
            stop = end.start() if end is not None else len(text)
        span = _trim(text, marker.end(), stop)
        if span[0] < span[1]:
            spans.append(span)
    if len(spans) < 2:
        return None
    return Steps(tuple(spans), markers[0].start(), kind)


def _trim(text: str, start: int, stop: int) -> tuple[int, int]:
    """``(start, stop)`` without surrounding whitespace, separators, a trailing "and" or
    "then", or a closing full stop."""
    while start < stop and text[start].isspace():
        start += 1
    while True:
        tail = _STEP_TAIL.search(text, start, stop)
        if tail is not None and tail.start() < stop:
            stop = tail.start()
        elif stop > start and text[stop - 1] in "。.":
            stop -= 1
        else:
            return start, stop
