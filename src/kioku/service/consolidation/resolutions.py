"""解決伝播 (spec 001): what a session reports resolved reaches every agent and knowledge.

Layer 1 is the ``issue_resolved`` event of the activity log (the session's finalization logs
it). Layer 2 is the registry here: the same items in the store, shared by every agent of one
owner. Layer 3 hands the items resolved since the last daily run to consolidation: with an LLM
they go into the extraction prompt; offline, a current knowledge item that says something
is still open and shares its subject with a resolved item is superseded by that item's words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.core.consolidation.model import Terms
from kioku.core.model import Memory
from kioku.ports.store_records import Resolution
from kioku.service.consolidation.common import Action, knowledge_details, normal_text
from kioku.service.consolidation.conflicts import resolve
from kioku.service.consolidation.knowledge import KnowledgePlan, new_knowledge, store_new

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["OPEN_CUES", "plan_resolution_updates", "record_resolutions", "resolved_between"]

#: Words of an item still open: what a resolution updates.
OPEN_CUES: Final = re.compile(
    r"\b(?:unresolved|still open|open issue|pending|outstanding|blocked|not (?:yet )?"
    r"(?:fixed|resolved|done|solved))\b|未解決|未対応|対応中|保留|調査中|まだ(?:直って|解決して)いない",
    re.IGNORECASE,
)
#: A resolved item updates knowledge at least this alike (they are about the same thing).
_ABOUT_THE_SAME: Final = 0.3


def record_resolutions(
    engine: Engine, items: Sequence[tuple[str, str, str | None]], at: datetime
) -> None:
    """Layer 2: ``(item, source memory id, session id)`` into the owner's shared registry."""
    if not items:
        return
    engine.store.add_resolutions(
        [
            Resolution(
                item=item,
                at=at,
                user_id=engine.user_id,
                agent_id=engine.agent_id,
                session_id=session,
                source=source,
            )
            for item, source, session in items
        ]
    )


def resolved_between(engine: Engine, start: datetime | None, end: datetime) -> list[Resolution]:
    """Layer 3: what any agent of the owner reported resolved in ``(start, end]``."""
    return [
        r
        for r in engine.store.resolutions(engine.user_id, since=start)
        if (start is None or r.at > start) and r.at <= end
    ]


def plan_resolution_updates(
    engine: Engine,
    resolutions: Sequence[Resolution],
    current: Sequence[Memory],
    plan: KnowledgePlan,
    *,
    terms: Terms,
) -> list[Action]:
    """Offline: each open knowledge item a resolved item is about is superseded by it."""
    from kioku.core.consolidation.model import Conflict
    from kioku.core.consolidation.similarity import term_similarity

    actions: list[Action] = []
    used: set[str] = set()
    for resolution in resolutions:
        text = " ".join(resolution.item.split())
        open_items = [
            m
            for m in current
            if m.id not in used
            and OPEN_CUES.search(m.content)
            and term_similarity(m.content, text, terms) >= _ABOUT_THE_SAME
        ]
        if not text or not open_items:
            continue
        target = max(open_items, key=lambda m: term_similarity(m.content, text, terms))
        used.add(target.id)
        same = [m for m in plan.new.values() if normal_text(m.content) == normal_text(text)]
        if same:  # the day's extraction lifted the same words: that item is the update
            memory = same[0]
        else:
            sources = [resolution.source] if resolution.source else []
            memory = new_knowledge(
                engine,
                target.trigger,
                text,
                sources,
                knowledge_details(target).confidence,
                resolution.at,
            )
            plan.new[memory.id] = memory
            actions.append(store_new(plan, memory.id))
            actions[-1].why = f"resolved by {resolution.agent_id} at {resolution.at.isoformat()}"
        conflict = Conflict(
            target.id,
            memory.id,
            "supersede",
            f"reported resolved: {text[:80]}",
        )
        actions.append(resolve(conflict, resolution.at))
    return actions
