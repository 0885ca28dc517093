"""The kinds of memory beside the episode (spec 001, 長期記憶 and YAMLフロントマター; spec 003 §6).

Every kind is a :class:`~kioku.core.model.Memory` row in the same store and scope as episodes,
so search, explanation, protection and erasure treat them alike. What only one kind has lives
in its *details*, one of the records below, stored as JSON beside the row:

* ``knowledge``: a fact, lesson or policy (意味記憶) with spec 001's knowledge front matter
  (``source_episodes``, ``confidence``, ``auto_consolidated``, ``version``, ``supersedes`` /
  ``superseded_by``) and validity times: a superseded fact stays as history, valid until the
  moment it was replaced, and is never primed.
* ``procedure``: how to do something (手続き記憶) with the procedure front matter
  (``description``, ``steps``, ``success_count`` / ``failure_count`` and the confidence they
  give, ``version``, ``auto_distilled``); ``protected`` is the memory's own flag.
* ``profile``: one per person the store knows (対人記憶): preferences with how often they were
  said, personal facts with the episodes they came from, and how often each speaker mentioned
  the person (spec 003 §6's ``preferences`` and ``interaction_history``).

Pure data and the few rules that belong to it (the procedure confidence formula, how a
profile renders as text); no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from kioku.records import Record

__all__ = [
    "INITIAL_DISTILLED_CONFIDENCE",
    "INITIAL_WRITTEN_CONFIDENCE",
    "Details",
    "KnowledgeDetails",
    "Preference",
    "ProcedureDetails",
    "ProfileDetails",
    "ProfileFact",
    "procedure_confidence",
    "profile_text",
]

#: Spec 001 (成功/失敗追跡): a procedure distilled from episodes starts at 0.4.
INITIAL_DISTILLED_CONFIDENCE: Final = 0.4
#: A procedure written on purpose (by a person or an agent) starts at the front matter's 0.5.
INITIAL_WRITTEN_CONFIDENCE: Final = 0.5
#: Knowledge written on purpose; consolidation sets its own from validation (0.7 or 0.9).
INITIAL_KNOWLEDGE_CONFIDENCE: Final = 0.7


def procedure_confidence(success_count: int, failure_count: int, initial: float) -> float:
    """Spec 001: ``success / max(1, success + failure)``; the initial value until any outcome."""
    total = success_count + failure_count
    if total <= 0:
        return initial
    return success_count / max(1, total)


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class KnowledgeDetails(Record):
    """A knowledge item's front matter (created_at/updated_at are the memory's own times)."""

    confidence: float = INITIAL_KNOWLEDGE_CONFIDENCE
    source_episodes: tuple[str, ...] = ()
    auto_consolidated: bool = False
    version: int = 1
    supersedes: str | None = None
    superseded_by: str | None = None
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    #: The items a merge made this one from (spec 001 merge: both are archived).
    merged_from: tuple[str, ...] = ()
    #: Annotations, such as the condition under which this holds beside a fact that seems
    #: to contradict it (spec 001 coexist).
    notes: tuple[str, ...] = ()

    @property
    def superseded(self) -> bool:
        return self.superseded_by is not None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProcedureDetails(Record):
    """A procedure's front matter; the memory's trigger is its name, content its full text."""

    description: str
    steps: tuple[str, ...] = ()
    confidence: float = INITIAL_WRITTEN_CONFIDENCE
    success_count: int = 0
    failure_count: int = 0
    version: int = 1
    auto_distilled: bool = False
    source_episodes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Preference(Record):
    """Something a person likes (+1) or dislikes (-1), and how often they said so."""

    topic: str
    value: str
    polarity: int
    count: int = 1
    sources: tuple[str, ...] = ()
    last_said: datetime | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProfileFact(Record):
    """A personal fact (name, residence, occupation...) and the episodes that said it."""

    key: str
    value: str
    sources: tuple[str, ...] = ()
    confidence: float = 1.0
    first_said: datetime | None = None
    last_said: datetime | None = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProfileDetails(Record):
    """One person's profile: the memory's trigger is the person's name."""

    person: str
    aliases: tuple[str, ...] = ()
    preferences: tuple[Preference, ...] = ()
    facts: tuple[ProfileFact, ...] = ()
    #: (speaker, count): how many times each speaker mentioned this person.
    mentions: tuple[tuple[str, int], ...] = field(default=())


Details = KnowledgeDetails | ProcedureDetails | ProfileDetails


def profile_text(details: ProfileDetails) -> str:
    """The searchable text of a profile: its facts, then its preferences, most said first."""
    lines = [f"{fact.key}: {fact.value}" for fact in details.facts]
    ranked = sorted(details.preferences, key=lambda p: (-p.count, p.topic))
    likes = [p.value for p in ranked if p.polarity > 0]
    dislikes = [p.value for p in ranked if p.polarity < 0]
    if likes:
        lines.append("likes: " + ", ".join(likes))
    if dislikes:
        lines.append("dislikes: " + ", ".join(dislikes))
    return "\n".join(lines)
