"""Three-stage procedure matching of spec 001 (3段階マッチング（スキル注入）).

Priming channel D offers the procedures that fit the message. Spec 001 matches in three
stages, the first winning over the later ones:

1. **Bracket keyword**: the message names a keyword in square brackets, ``[deploy]`` (or
   full-width ``［デプロイ］``), and the keyword occurs in the procedure's description.
   Both sides are NFKC-normalised and case-folded; the keyword is matched as a substring,
   which also works for Japanese. Score: the share of the message's bracket keywords the
   description contains.
2. **Content words**: the message and the description share content words (the caller
   extracts them with its analyzer). Score: ``|message ∩ description| / |description|``,
   the share of the procedure's own words the message mentions, so a procedure described
   in a few precise words ranks above one whose long description merely touches the
   topic. A match needs at least one shared word and ``score ≥ min_overlap``.
3. **Similarity**: the fallback, for procedures matched by neither stage above: the
   caller's vector similarity for the procedure is at least ``min_similarity``.

Matches are ordered by stage, then by score (highest first), then by id, and cut to
``limit``. Each carries a short English reason for logs and explanations.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from kioku.errors import ValidationError
from kioku.records import Record

__all__ = [
    "ProcedureCandidate",
    "ProcedureMatch",
    "bracket_keywords",
    "match_procedures",
]

_BRACKETED: Final = re.compile(r"\[([^\[\]]+)\]")


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProcedureCandidate(Record):
    """A stored procedure as matching sees it: its id, description and content words."""

    id: str
    description: str
    terms: frozenset[str]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProcedureMatch(Record):
    """One procedure that fits the message: by which stage (1–3), how well, and why."""

    id: str
    stage: int
    score: float
    reason: str


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().strip()


def bracket_keywords(message: str) -> list[str]:
    """The ``[keyword]``s of ``message`` (``［］`` too), folded, once each, in order."""
    found: dict[str, None] = {}
    for raw in _BRACKETED.findall(unicodedata.normalize("NFKC", message)):
        keyword = _fold(raw)
        if keyword:
            found.setdefault(keyword)
    return list(found)


def match_procedures(
    message: str,
    message_terms: frozenset[str],
    candidates: Iterable[ProcedureCandidate],
    similarities: Mapping[str, float] | None = None,
    *,
    limit: int = 3,
    min_overlap: float = 0.34,
    min_similarity: float = 0.55,
) -> list[ProcedureMatch]:
    """The procedures that fit ``message``, best first (see the module docstring).

    ``similarities`` maps candidate ids to the caller's vector similarity; ids it does not
    name are not considered in stage 3. A candidate id that occurs more than once is
    reported once, with its best match.
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ValidationError("limit", limit, "an integer of 0 or more")
    if not (math.isfinite(min_overlap) and 0.0 <= min_overlap <= 1.0):
        raise ValidationError("min_overlap", min_overlap, "a number from 0 to 1")
    if not math.isfinite(min_similarity):
        raise ValidationError("min_similarity", min_similarity, "a finite number")
    similarities = similarities or {}
    for cid, value in similarities.items():
        if not math.isfinite(value):
            raise ValidationError(f"similarity of {cid!r}", value, "a finite number")

    keywords = bracket_keywords(message)
    words = {_fold(t) for t in message_terms} - {""}
    best: dict[str, ProcedureMatch] = {}
    for candidate in candidates:
        match = (
            _by_keyword(candidate, keywords)
            or _by_overlap(candidate, words, min_overlap)
            or _by_similarity(candidate, similarities, min_similarity)
        )
        if match is not None:
            held = best.get(match.id)
            if held is None or _order(match) < _order(held):
                best[match.id] = match
    return sorted(best.values(), key=_order)[:limit]


def _order(match: ProcedureMatch) -> tuple[int, float, str]:
    return match.stage, -match.score, match.id


def _by_keyword(candidate: ProcedureCandidate, keywords: list[str]) -> ProcedureMatch | None:
    if not keywords:
        return None
    description = _fold(candidate.description)
    hits = [k for k in keywords if k in description]
    if not hits:
        return None
    shown = ", ".join(f"[{k}]" for k in hits)
    return ProcedureMatch(candidate.id, 1, len(hits) / len(keywords), f"{shown} in description")


def _by_overlap(
    candidate: ProcedureCandidate, words: set[str], min_overlap: float
) -> ProcedureMatch | None:
    terms = {_fold(t) for t in candidate.terms} - {""}
    shared = len(terms & words)
    if not shared:
        return None
    score = shared / len(terms)
    if score < min_overlap:
        return None
    noun = "word" if len(terms) == 1 else "words"
    return ProcedureMatch(candidate.id, 2, score, f"{shared} of {len(terms)} {noun} shared")


def _by_similarity(
    candidate: ProcedureCandidate, similarities: Mapping[str, float], min_similarity: float
) -> ProcedureMatch | None:
    similarity = similarities.get(candidate.id)
    if similarity is None or similarity < min_similarity:
        return None
    return ProcedureMatch(candidate.id, 3, float(similarity), f"similar ({similarity:.2f})")
