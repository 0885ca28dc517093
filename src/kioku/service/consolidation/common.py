"""What every consolidation step shares: its plan entries, the memories it reads, its log.

A step is planned first (every read, every LLM and NLI call) and applied after, inside the
period's one transaction: a plan is a list of :class:`Action`, each with what it would do and
why, and the function that does it. ``--dry-run`` prints the plan and runs none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from kioku.core.consolidation.model import Source, Terms
from kioku.core.kinds import KnowledgeDetails, ProcedureDetails
from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.model import Kind, Memory
from kioku.ports.store import MemoryFilter, Order

if TYPE_CHECKING:
    from kioku.ports.consolidation import Consolidator
    from kioku.service.engine import Engine

__all__ = [
    "LLM_EPISODES_PER_CALL",
    "LLM_SKIPPED",
    "Action",
    "Run",
    "active_items",
    "chunked",
    "consolidator_of",
    "is_current",
    "log_entry",
    "normal_text",
    "source_of",
    "stable_id",
    "terms_of",
]

#: What the report says of a step only an LLM can do, when none is configured.
LLM_SKIPPED: Final = "skipped: no LLM provider is configured (llm.provider = offline)"
_SHOWN_CHARS: Final = 240


@dataclass(slots=True)
class Action:
    """One change a consolidation run makes (or would make, in a dry run)."""

    action: str
    why: str
    ids: tuple[str, ...] = ()
    text: str = ""
    run: Callable[[Run], None] | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        shown = self.text if len(self.text) <= _SHOWN_CHARS else self.text[:_SHOWN_CHARS] + "…"
        out: dict[str, Any] = {"action": self.action, "why": self.why}
        if self.ids:
            out["ids"] = list(self.ids)
        if shown:
            out["text"] = shown
        return out


@dataclass(slots=True)
class Run:
    """A period's run as it is applied: the engine, its moment, and the log it writes."""

    engine: Engine
    moment: datetime
    period: str
    log: list[LogEntry] = field(default_factory=list)
    #: New items waiting to be stored together (one embedding call, one insert).
    pending: list[Memory] = field(default_factory=list)

    def note(self, event: Event, memory_id: str, **details: object) -> None:
        self.log.append(log_entry(self.engine, event, memory_id, self.moment, self.period, details))

    def add(self, memory: Memory) -> None:
        """Store ``memory`` with the next :meth:`flush` (before any action that reads it)."""
        self.pending.append(memory)

    def flush(self) -> None:
        """Validate, embed (in one call) and store every pending item."""
        if not self.pending:
            return
        from kioku.core.model import Embedding
        from kioku.core.validate import validate_memory
        from kioku.service.vectors import note_vector_model

        memories, self.pending = self.pending, []
        engine = self.engine
        embedder = engine.embedder
        vectors = embedder.embed([f"{m.trigger}\n{m.content}" for m in memories])
        ready = [
            replace(
                m,
                user_id=engine.user_id,
                agent_id=engine.agent_id,
                embedding=Embedding(embedder.model_id, tuple(float(x) for x in v.tolist())),
            )
            for m, v in zip(memories, vectors, strict=True)
        ]
        for memory in ready:
            validate_memory(memory, engine.config.categories)
        engine.store.add_many(ready)
        note_vector_model(engine, ready[0])


def log_entry(
    engine: Engine,
    event: Event,
    memory_id: str,
    at: datetime,
    period: str,
    details: dict[str, object],
) -> LogEntry:
    return LogEntry(
        event=event,
        memory_id=memory_id,
        at=at,
        user_id=engine.user_id,
        agent_id=engine.agent_id,
        batch_day=period[:10],
        details=details,
    )


#: Episodes given to the LLM in one request: its answer stays within ``llm.max_tokens``.
LLM_EPISODES_PER_CALL: Final = 20


def chunked(items: Sequence[Source], size: int = LLM_EPISODES_PER_CALL) -> list[list[Source]]:
    """``items`` in runs of at most ``size``, in order."""
    return [list(items[n : n + size]) for n in range(0, len(items), size)]


def stable_id(memory: Memory, *salt: str) -> Memory:
    """``memory`` with an id derived from what it is (kind, scope, text, ``salt``) instead of
    a random one: a period run again after a kill makes the same items with the same ids."""
    import hashlib

    from kioku.core.ids import SUFFIX_HEX, make_memory_id

    key = "\x00".join((memory.kind.value, memory.user_id, memory.agent_id, memory.content, *salt))
    suffix = hashlib.blake2b(key.encode(), digest_size=SUFFIX_HEX // 2).hexdigest()
    return replace(memory, id=make_memory_id(memory.created, suffix))


def terms_of(engine: Engine) -> Terms:
    """The store's lexical analyzer (Japanese and English content terms)."""
    from kioku.adapters.text.lexical import index_terms

    return index_terms


def consolidator_of(engine: Engine) -> Consolidator | None:
    """The LLM that consolidates, or None when the analyzer is the offline one."""
    from kioku.ports.consolidation import Consolidator

    analyzer = engine.analyzer
    return analyzer if isinstance(analyzer, Consolidator) else None


def source_of(memory: Memory) -> Source:
    """A memory as consolidation reads it: its text (trigger, then content) and its time."""
    trigger, content = memory.trigger.strip(), memory.content.strip()
    if memory.kind is Kind.EPISODE and trigger and content and trigger != content:
        text = f"{trigger}\n{content}"
    else:
        text = content or trigger
    return Source(memory.id, text, memory.created)


def is_current(memory: Memory) -> bool:
    """Not archived, and for knowledge not superseded: what may be primed."""
    if memory.archived:
        return False
    details = memory.details
    return not (isinstance(details, KnowledgeDetails) and details.superseded)


def active_items(engine: Engine, kind: Kind) -> list[Memory]:
    """Every current knowledge item or procedure of the engine's scope, oldest first."""
    flt = MemoryFilter(
        user_id=engine.user_id,
        agent_id=engine.agent_id,
        kind=kind.value,
        archived=False,
        order=Order.CREATED_ASC,
    )
    return [m for m in engine.store.iter(flt) if is_current(m)]


def normal_text(text: str) -> str:
    """What two texts compare by when asking whether they say the same words."""
    return " ".join(text.lower().split())


def with_sources(details: KnowledgeDetails, extra: Sequence[str]) -> KnowledgeDetails:
    """``details`` with ``extra`` source episodes added (no duplicates, order kept)."""
    merged = tuple(dict.fromkeys((*details.source_episodes, *extra)))
    return replace(details, source_episodes=merged)


def procedure_details(memory: Memory) -> ProcedureDetails:
    details = memory.details
    return details if isinstance(details, ProcedureDetails) else ProcedureDetails(memory.trigger)


def knowledge_details(memory: Memory) -> KnowledgeDetails:
    details = memory.details
    return details if isinstance(details, KnowledgeDetails) else KnowledgeDetails()
