"""週次統合 (spec 001 週次統合パイプライン): the week's integration.

* knowledge/ 重複排除・マージ: current knowledge items at least ``duplicate_similarity`` alike
  are merged into one (the one most episodes support; with an LLM its text is rewritten to
  keep what all of them say) and the others archived;
* episodes/ 圧縮: full-text episodes whose importance fell below 0.3 are summarised;
* 週次パターン蒸留: tool sequences repeated in three or more sessions of the week's activity
  log become procedures (offline, the logged steps verbatim; with an LLM, written by it);
* 全knowledge矛盾スキャン: every current knowledge item against every other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Final

from kioku.core.consolidation.model import ProcedureCandidate, Source, Terms
from kioku.core.lifecycle.log import Event
from kioku.core.model import Kind, Memory
from kioku.ports.store import MemoryPatch
from kioku.service.consolidation.common import (
    LLM_SKIPPED,
    Action,
    Run,
    active_items,
    consolidator_of,
    knowledge_details,
    source_of,
    terms_of,
    with_sources,
)
from kioku.service.consolidation.conflicts import find_conflicts, resolve
from kioku.service.consolidation.policy import plan_low_importance
from kioku.service.consolidation.procedures import plan_procedures

if TYPE_CHECKING:
    from kioku.ports.consolidation import Consolidator, Nli
    from kioku.service.engine import Engine

__all__ = ["plan_weekly", "repeated_sequences"]

#: A sequence of tool uses is a pattern when this many sessions of the week repeat it.
PATTERN_SESSIONS: Final = 3
_MAX_STEPS: Final = 8


def plan_weekly(engine: Engine, moment: datetime, *, nli: Nli | None) -> list[Action]:
    terms = terms_of(engine)
    llm = consolidator_of(engine)
    knowledge = active_items(engine, Kind.KNOWLEDGE)
    actions = _merge_duplicates(engine, knowledge, llm=llm, terms=terms)
    merged = {mid for a in actions for mid in a.ids[1:]}
    actions += _reorganise(
        [m for m in knowledge if m.id not in merged and m.low_activity_since is not None],
        llm=llm,
        terms=terms,
    )
    merged |= {mid for a in actions if a.action == "merge_low" for mid in a.ids}
    if engine.config.lifecycle.policy == "retention":
        actions.append(
            Action(
                "compress_episodes",
                "old episodes are compressed by the nightly batch by spec 000's retention "
                "(lifecycle.policy = retention), so emotional ones last",
            )
        )
    else:
        actions += plan_low_importance(engine, moment)
    actions += _patterns(engine, moment, llm=llm, terms=terms)
    remaining = [m for m in knowledge if m.id not in merged]
    for conflict in find_conflicts([], remaining, llm=llm, nli=nli, terms=terms):
        actions.append(resolve(conflict, moment))
    return actions


def _merge_duplicates(
    engine: Engine, knowledge: Sequence[Memory], *, llm: Consolidator | None, terms: Terms
) -> list[Action]:
    from kioku.core.consolidation.similarity import near_duplicates

    by_id = {m.id: m for m in knowledge}
    groups = near_duplicates(
        [source_of(m) for m in knowledge], terms, engine.config.consolidation.duplicate_similarity
    )
    actions: list[Action] = []
    for group in groups:
        members = [by_id[i] for i in group]
        keep = max(
            members,
            key=lambda m: (len(knowledge_details(m).source_episodes), m.created, m.id),
        )
        others = [m for m in members if m.id != keep.id]
        text = llm.merge_texts([m.content for m in members]).strip() if llm else keep.content
        actions.append(_merge_into(keep, others, text or keep.content))
    return actions


def _merge_into(keep: Memory, others: Sequence[Memory], text: str) -> Action:
    def run(r: Run) -> None:
        store = r.engine.store
        fresh = store.get(keep.id)
        if fresh is None:
            return
        sources = [s for m in others for s in knowledge_details(m).source_episodes]
        details = with_sources(knowledge_details(fresh), sources)
        details = replace(details, merged_from=(*details.merged_from, *(m.id for m in others)))
        if text != fresh.content:
            store.save_version(fresh, r.moment)
            details = replace(details, version=details.version + 1)
        store.update(keep.id, MemoryPatch(content=text, details=details))
        for m in others:
            old = knowledge_details(m)
            store.update(
                m.id,
                MemoryPatch(
                    archived_at=r.moment,
                    details=replace(old, superseded_by=keep.id, valid_until=r.moment),
                ),
            )
            r.note(Event.MERGE, m.id, into=keep.id, reason="near-duplicate")

    return Action(
        "merge_duplicates",
        f"{len(others) + 1} near-duplicate items: kept {keep.id}, the others archived",
        (keep.id, *(m.id for m in others)),
        text,
        run,
    )


#: Spec 001 神経新生的再編: low-activation items at least this alike are merged by the LLM.
LOW_ALIKE: Final = 0.5


def _reorganise(low: Sequence[Memory], *, llm: Consolidator | None, terms: Terms) -> list[Action]:
    """Pairs of alike low-activation knowledge, merged into one new item by the LLM; both
    archived. Offline the step is reported as skipped: merging two different texts into one
    would be writing, and offline consolidation only lifts."""
    from kioku.core.consolidation.similarity import TermIndex

    if len(low) < 2:
        return []
    index = TermIndex(terms)
    for m in low:
        index.add(m.id, m.content)
    by_id = {m.id: m for m in low}
    pairs: list[tuple[Memory, Memory]] = []
    used: set[str] = set()
    for m in low:
        if m.id in used:
            continue
        for _, other in index.alike(m.content, LOW_ALIKE):
            if other != m.id and other not in used:
                pairs.append((m, by_id[other]))
                used.update((m.id, other))
                break
    if not pairs:
        return []
    if llm is None:
        return [
            Action(
                "skipped",
                f"merging {len(pairs)} pair(s) of alike low-activation items: {LLM_SKIPPED}",
            )
        ]
    from kioku.core.consolidation.model import Conflict
    from kioku.service.consolidation.conflicts import resolve

    actions = []
    for old, new in pairs:
        text = llm.merge_texts([old.content, new.content]).strip()
        if not text:
            continue
        action = resolve(
            Conflict(
                old.id,
                new.id,
                "merge",
                "alike low-activation items (spec 001 神経新生的再編)",
                merged_text=text,
            ),
            old.created,
        )
        action.action = "merge_low"
        actions.append(action)
    return actions


def repeated_sequences(
    sessions: dict[str, list[str]], min_sessions: int = PATTERN_SESSIONS
) -> list[tuple[tuple[str, ...], list[str]]]:
    """Runs of two or more steps that ``min_sessions`` sessions repeat, longest first, none
    contained in a longer one kept; each with the sessions that repeat it."""
    seen: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for session, steps in sessions.items():
        for size in range(2, min(_MAX_STEPS, len(steps)) + 1):
            for start in range(len(steps) - size + 1):
                seen[tuple(steps[start : start + size])].add(session)
    frequent = sorted(
        ((seq, sorted(ids)) for seq, ids in seen.items() if len(ids) >= min_sessions),
        key=lambda pair: (-len(pair[0]), pair[0]),
    )
    kept: list[tuple[tuple[str, ...], list[str]]] = []
    for seq, ids in frequent:
        if any(_contains(longer, seq) for longer, _ in kept):
            continue
        kept.append((seq, ids))
    return kept


def _contains(longer: tuple[str, ...], seq: tuple[str, ...]) -> bool:
    n = len(seq)
    return any(longer[i : i + n] == seq for i in range(len(longer) - n + 1))


def _patterns(
    engine: Engine, moment: datetime, *, llm: Consolidator | None, terms: Terms
) -> list[Action]:
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import read_events

    sessions: dict[str, list[str]] = defaultdict(list)
    times: dict[str, datetime] = {}
    for _, event in read_events(
        engine,
        since=moment - timedelta(days=7),
        until=moment,
        types=(EventType.TOOL_USE.value,),
    ):
        if event is None or not event.session_id:
            continue
        step = " ".join(f"{event.tool} {event.content or event.summary}".split())
        if step:
            sessions[event.session_id].append(step)
            times[event.session_id] = event.ts
    patterns = repeated_sequences(dict(sessions))
    if not patterns:
        return []
    candidates: list[ProcedureCandidate]
    sources = [
        Source(f"activity:{sid}", "\n".join(steps), times[sid]) for sid, steps in sessions.items()
    ]
    if llm is not None:
        candidates = llm.distil_procedures(sources)
    else:
        candidates = [
            ProcedureCandidate(
                title=f"{seq[0]} … {seq[-1]}"[:60],
                description=f"{seq[0]} … {seq[-1]}",
                steps=seq,
                sources=tuple(f"activity:{s}" for s in ids),
            )
            for seq, ids in patterns
        ]
    return plan_procedures(
        engine,
        candidates,
        active_items(engine, Kind.PROCEDURE),
        terms=terms,
        episodes=sources,
    )
