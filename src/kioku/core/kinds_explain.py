"""Why a knowledge item, procedure or profile is as it is (``kioku show``, ``explain``).

Episodes are explained by spec 000's retention (:mod:`kioku.core.explain`). The other kinds
do not fade by it: they are primed by spreading activation (spec 001) and kept, updated or
pruned by consolidation. This says so, and what their details mean.
"""

from __future__ import annotations

from typing import Any

from kioku.core.kinds import KnowledgeDetails, ProcedureDetails, ProfileDetails
from kioku.core.model import Kind, Memory
from kioku.core.timefmt import format_ts

__all__ = ["kind_explanation"]


def kind_explanation(memory: Memory) -> dict[str, Any]:
    """A plain dict: ``lifecycle`` (one sentence) and ``facts`` (label → value)."""
    details = memory.details
    facts: dict[str, Any] = {}
    if memory.kind is Kind.KNOWLEDGE:
        k = details if isinstance(details, KnowledgeDetails) else KnowledgeDetails()
        lifecycle = (
            "knowledge does not fade with spec 000's retention; priming ranks it by spreading "
            "activation (similarity + 0.2·0.5^(age/30) + 0.1·log(1+recalls))"
        )
        if k.superseded:
            lifecycle = f"superseded by {k.superseded_by}: kept as history, never primed"
        facts = {
            "confidence": k.confidence,
            "version": k.version,
            "source episodes": list(k.source_episodes),
            "auto consolidated": k.auto_consolidated,
            "supersedes": k.supersedes,
            "superseded by": k.superseded_by,
            "valid from": None if k.valid_from is None else format_ts(k.valid_from),
            "valid until": None if k.valid_until is None else format_ts(k.valid_until),
        }
    elif memory.kind is Kind.PROCEDURE:
        p = details if isinstance(details, ProcedureDetails) else ProcedureDetails(memory.trigger)
        lifecycle = (
            "a procedure is primed when a message matches its description ([keyword], shared "
            "words, then vectors); confidence = successes / max(1, successes + failures)"
        )
        facts = {
            "confidence": p.confidence,
            "successes": p.success_count,
            "failures": p.failure_count,
            "version": p.version,
            "auto distilled": p.auto_distilled,
            "steps": len(p.steps),
        }
    elif memory.kind is Kind.PROFILE:
        f = details if isinstance(details, ProfileDetails) else ProfileDetails(memory.trigger)
        lifecycle = (
            "a profile is primed when its person is the sender (channel A); personal facts "
            "do not fade: they change only when the person says otherwise or you edit them"
        )
        facts = {
            "facts": {x.key: f"{x.value} (from {len(x.sources)} episode(s))" for x in f.facts},
            "preferences": [
                f"{'likes' if x.polarity > 0 else 'dislikes'} {x.value} ×{x.count}"
                for x in f.preferences
            ],
            "mentions": dict(f.mentions),
        }
    else:
        lifecycle = "an episode fades by spec 000's retention (see the retention section)"
    return {"kind": memory.kind.value, "lifecycle": lifecycle, "facts": facts}
