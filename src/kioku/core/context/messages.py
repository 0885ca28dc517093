"""The unit working memory works on: one chat message, a role and its text (spec 002 §6.1).

Roles are free text; ``user``, ``assistant``, ``system`` and ``tool`` have a meaning for
importance scoring (:mod:`kioku.core.context.importance`), any other role is scored as neutral.
:func:`messages_from_json` reads the usual chat formats into messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kioku.errors import ValidationError

__all__ = ["Message", "messages_from_json"]


@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation history."""

    role: str
    content: str


def messages_from_json(data: object) -> list[Message]:
    """Messages from parsed JSON: a list of ``{"role", "content"}`` objects. Content may be a
    string or a list of blocks (``{"type": "text", "text": ...}``; other blocks are shown by
    their type). ValidationError names the first bad item."""
    if isinstance(data, Mapping) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if not isinstance(data, list):
        raise ValidationError(
            "messages",
            type(data).__name__,
            'a JSON list of {"role": ..., "content": ...} objects',
            hint='or an object with a "messages" list',
        )
    out: list[Message] = []
    for i, item in enumerate(data):
        if not isinstance(item, Mapping):
            raise ValidationError(f"messages[{i}]", item, 'an object {"role": ..., "content": ...}')
        role = item.get("role")
        if not isinstance(role, str) or not role.strip():
            raise ValidationError(f"messages[{i}].role", role, "a non-empty string such as 'user'")
        out.append(Message(role.strip(), _content_text(item.get("content"), i)))
    return out


def _content_text(content: object, i: int) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
                elif isinstance(block.get("content"), str):
                    parts.append(f"[Tool: {block['content']}]")
                else:
                    parts.append(f"[{block.get('type', 'block')}]")
        return "\n".join(parts)
    raise ValidationError(f"messages[{i}].content", content, "a string or a list of content blocks")
