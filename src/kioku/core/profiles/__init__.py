"""User-profile claims lifted from conversation turns (spec 003 §6, ユーザープロファイル管理).

:func:`extract_profile_claims` reads one utterance and returns what the speaker states about
themselves: preferences (likes and dislikes, with a polarity) and facts from a closed set of
keys (:data:`FACT_KEYS`). It is offline and pure: regular expressions over the first
:data:`SCAN_LIMIT` characters, English and Japanese patterns both run on every text.

Precision comes first, because a wrong fact in a profile is worse than a missing one. Only
statements the speaker makes about themselves, in the present, count. Questions,
hypotheticals and conditionals, what others like or do, negated facts, quoted speech, past
states that are over ("I used to ...", 「昔は〜だった」) and values that run on too long yield
nothing.
"""

from __future__ import annotations

import unicodedata

from kioku.core.profiles.extract import (
    FACT_KEYS,
    SCAN_LIMIT,
    ClaimKind,
    ProfileClaim,
    clean_value,
    normalise_topic,
    prepare,
)

__all__ = [
    "FACT_KEYS",
    "SCAN_LIMIT",
    "ClaimKind",
    "ProfileClaim",
    "extract_profile_claims",
    "normalise_topic",
]


def extract_profile_claims(text: str, *, speaker: str | None = None) -> list[ProfileClaim]:
    """The profile claims ``speaker`` makes about themselves in ``text``, in text order.

    Each (kind, key, value, polarity) is returned once, with its most confident evidence.
    Never raises on any string; a blank text yields an empty list.
    """
    if not text or not text.strip():
        return []
    # The patterns take a tenth of a second to compile: only a command that reads turns
    # pays for them, not every command that merely names a claim's type.
    from kioku.core.profiles.extract_en import scan as scan_en
    from kioku.core.profiles.extract_ja import scan as scan_ja

    scanned = prepare(text)
    best: dict[tuple[str, str, str, int], tuple[int, ProfileClaim]] = {}
    for kind, key, raw, polarity, start, end, confidence in scan_en(scanned) + scan_ja(scanned):
        value = clean_value(raw)
        if kind == "preference":
            key = normalise_topic(value)
        evidence = text[start:end].strip()
        if not value or not key or not evidence:
            continue
        claim = ProfileClaim(
            kind="preference" if kind == "preference" else "fact",
            key=key,
            value=value,
            polarity=polarity,
            evidence=evidence,
            confidence=confidence,
            speaker=speaker,
        )
        ident = (kind, key, unicodedata.normalize("NFKC", value).casefold(), polarity)
        held = best.get(ident)
        if held is None or held[1].confidence < confidence:
            best[ident] = (start if held is None else held[0], claim)
    return [claim for _, claim in sorted(best.values(), key=lambda pair: pair[0])]
