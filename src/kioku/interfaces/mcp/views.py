"""What the MCP tools answer: plain JSON-ready dicts built from the service's results.

Memory text is always the value of a field (``trigger``, ``content``, ``block``...), never
free text around it, so a client reads it as data. Nothing here imports the MCP SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kioku.core.serialize import memory_to_dict

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.ports.analyzer import Analysis
    from kioku.service.deliberate.search import Found, Read, SearchResult
    from kioku.service.erasure.erasure import ErasureReport
    from kioku.service.kioku import Kioku
    from kioku.service.priming.prime import Priming
    from kioku.service.remember.turns import RememberedTurn

__all__ = [
    "brief",
    "erased",
    "explained",
    "primed",
    "read",
    "remembered",
    "searched",
]

#: The fields of a memory an answer about a change carries (read_memory gives them all).
_BRIEF = (
    "id",
    "kind",
    "created",
    "current_level",
    "level_name",
    "archived_at",
    "protected",
    "trigger",
    "content",
    "details",
)


def brief(memory: Memory) -> dict[str, Any]:
    """The memory's id, kind, level, protection, text and kind details."""
    full = memory_to_dict(memory)
    return {key: full[key] for key in _BRIEF}


def _found(item: Found) -> dict[str, Any]:
    memory = item.memory
    return {
        "id": memory.id,
        "kind": memory.kind.value,
        "score": round(item.score, 4),
        "matched_in": list(item.matched_in) or ["vector"],
        "level": memory.current_level,
        "archived": memory.archived,
        "superseded": item.superseded,
        "protected": memory.protected,
        "created": memory_to_dict(memory)["created"],
        "trigger": memory.trigger,
        "content": memory.content,
    }


def searched(result: SearchResult) -> dict[str, Any]:
    """Search results, best first, and the matching turns of the mid-term tier."""
    return {
        "query": result.query,
        "kinds": list(result.kinds),
        "include_archive": result.include_archive,
        "count": len(result.items),
        "results": [_found(item) for item in result.items],
        "midterm": [
            {
                "thread_id": hit.thread_id,
                "turn": hit.turn,
                "score": round(hit.score, 4),
                "created": hit.created.isoformat(),
                "expires": hit.expires.isoformat(),
            }
            for hit in result.midterm
        ],
    }


def read(result: Read) -> dict[str, Any]:
    """Every field of the memory, with its text from before compression when one is kept."""
    data = memory_to_dict(result.memory)
    original = result.original
    data["original"] = (
        None if original is None else {"trigger": original.trigger, "content": original.content}
    )
    return data


def _analysis(analysis: Analysis) -> dict[str, Any]:
    return {
        "category": analysis.category,
        "emotional_intensity": analysis.intensity,
        "emotional_valence": analysis.valence.value,
        "emotional_arousal": analysis.arousal,
        "emotional_tags": list(analysis.tags),
        "keywords": list(analysis.keywords),
        "protected": analysis.protected,
        "language": analysis.language,
        "analyzer": analysis.analyzer,
    }


def remembered(turn: RememberedTurn) -> dict[str, Any]:
    """The stored turn, how it was understood, and whether it had been stored before."""
    return {
        "id": turn.memory.id,
        "already_known": turn.known,
        "memory": brief(turn.memory),
        "analysis": _analysis(turn.analysis),
    }


def primed(priming: Priming) -> dict[str, Any]:
    """The priming block, the ids of what it holds, and which channel brought each."""
    from kioku.service.priming.prime import TITLES

    return {
        "message_type": priming.message_type.value,
        "block": priming.block,
        "chars": len(priming.block),
        "memory_ids": list(dict.fromkeys(priming.memory_ids)),
        "channels": [
            {
                "channel": fill.channel.letter,
                "name": TITLES[fill.channel],
                "memory_ids": list(fill.memory_ids),
            }
            for fill in priming.channels
            if fill.memory_ids or fill.lines
        ],
    }


def explained(kioku: Kioku, memory_id: str) -> dict[str, Any]:
    """Why a memory is as it is: an episode's retention score, level and fading forecast;
    for the other kinds, their lifecycle, details and history."""
    from kioku.core.model import Kind

    memory = kioku.get(memory_id)
    data: dict[str, Any] = {"id": memory.id, "kind": memory.kind.value}
    if memory.kind is Kind.EPISODE:
        from kioku.core.serialize import explanation_to_dict

        data["retention"] = explanation_to_dict(kioku.explain(memory))
        return data
    from kioku.core.kinds_explain import kind_explanation

    data["explanation"] = kind_explanation(memory)
    data["history"] = kioku.history(memory.id)
    return data


def erased(memory_id: str, report: ErasureReport) -> dict[str, Any]:
    """What forgetting a memory removed, and the backups that still hold it."""
    return {
        "forgotten": memory_id,
        "erased": report.erased,
        "memory_ids": list(report.memory_ids),
        "backups_containing": [b.to_dict() for b in report.backups],
    }
