"""The unit working memory works on: one chat message, a role and its text (spec 002 §6.1).

Roles are free text; ``user``, ``assistant``, ``system`` and ``tool`` have a meaning for
importance scoring (:mod:`kioku.core.context.importance`), any other role is scored as neutral.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Message"]


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation history."""

    role: str
    content: str
