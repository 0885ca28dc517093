"""Folding what a person says about themselves into their profile (spec 003 §6).

Pure: a profile's details and some claims in, new details out. A preference said again
counts once more and remembers the episode; a like that becomes a dislike (or back) takes the
new polarity and starts counting again. A fact said again gains a source; a fact with a new
value (moved from Osaka to Tokyo) replaces the old one; the episodes that said either stay
searchable, so what changed and when can still be found on purpose.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Final

from kioku.core.kinds import Preference, ProfileDetails, ProfileFact
from kioku.core.profiles.extract import ProfileClaim

__all__ = ["MAX_SOURCES", "count_mention", "merge_claims", "same_value"]

#: Sources kept per fact or preference (the newest).
MAX_SOURCES: Final = 20


def same_value(a: str, b: str) -> bool:
    return unicodedata.normalize("NFKC", a).casefold().strip() == (
        unicodedata.normalize("NFKC", b).casefold().strip()
    )


def _sources(old: Sequence[str], new: str | None) -> tuple[str, ...]:
    merged = list(old)
    if new and new not in merged:
        merged.append(new)
    return tuple(merged[-MAX_SOURCES:])


def merge_claims(
    details: ProfileDetails,
    claims: Sequence[ProfileClaim],
    source_id: str | None,
    at: datetime,
) -> ProfileDetails:
    """``details`` with ``claims`` folded in (said at ``at``, in the episode ``source_id``)."""
    prefs = {p.topic: p for p in details.preferences}
    facts = {f.key: f for f in details.facts}
    for claim in claims:
        if claim.kind == "preference":
            old = prefs.get(claim.key)
            if old is None or old.polarity != claim.polarity:
                prefs[claim.key] = Preference(
                    claim.key, claim.value, claim.polarity, 1, _sources((), source_id), at
                )
            else:
                prefs[claim.key] = replace(
                    old, count=old.count + 1, sources=_sources(old.sources, source_id), last_said=at
                )
            continue
        held = facts.get(claim.key)
        if held is not None and same_value(held.value, claim.value):
            facts[claim.key] = replace(
                held,
                sources=_sources(held.sources, source_id),
                confidence=max(held.confidence, claim.confidence),
                last_said=at,
            )
        else:
            facts[claim.key] = ProfileFact(
                claim.key, claim.value, _sources((), source_id), claim.confidence, at, at
            )
    return replace(
        details,
        preferences=tuple(sorted(prefs.values(), key=lambda p: p.topic)),
        facts=tuple(sorted(facts.values(), key=lambda f: f.key)),
    )


def count_mention(details: ProfileDetails, speaker: str) -> ProfileDetails:
    """One more mention of this person by ``speaker``."""
    counts = dict(details.mentions)
    counts[speaker] = counts.get(speaker, 0) + 1
    return replace(details, mentions=tuple(sorted(counts.items())))
