"""kioku's deliberate-recall tools for any OpenAI-compatible function-calling client.

The schemas come from the one definition the MCP server uses
(:mod:`kioku.integrations.tool_schemas`), so both offer the same tools with the same
names, descriptions and parameters::

    from openai import OpenAI
    from kioku import Kioku
    from kioku.integrations import openai_tools

    with Kioku.open() as kioku:
        messages = [{"role": "system", "content": openai_tools.INSTRUCTIONS}, ...]
        reply = OpenAI().chat.completions.create(
            model=..., messages=messages, tools=openai_tools.chat_tools()
        ).choices[0].message
        messages.append(reply)
        messages += openai_tools.answers(kioku, reply.tool_calls or [])

Nothing here imports ``openai``: a tool call is read by its fields (``id``,
``function.name``, ``function.arguments``), from the SDK's objects or from plain dicts, so
any client that speaks the same JSON works. Every answer is JSON text; a call that cannot
run answers ``{"error": ...}`` with the problem and the fix, for the model to read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kioku.integrations.tool_schemas import INSTRUCTIONS, TOOLS, ToolSpec, call, spec

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = ["INSTRUCTIONS", "answer", "answers", "chat_tools", "response_tools"]


def _chosen(names: Sequence[str] | None, writes: bool) -> list[ToolSpec]:
    tools = [spec(name) for name in names] if names is not None else list(TOOLS.values())
    return [tool for tool in tools if writes or not tool.writes]


def chat_tools(names: Sequence[str] | None = None, *, writes: bool = True) -> list[dict[str, Any]]:
    """The ``tools=`` of a Chat Completions request: every deliberate-recall tool (or those
    ``names``), without the ones that change memory when ``writes`` is false."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters(),
            },
        }
        for tool in _chosen(names, writes)
    ]


def response_tools(
    names: Sequence[str] | None = None, *, writes: bool = True
) -> list[dict[str, Any]]:
    """The same tools in the Responses API's shape (name and parameters at the top)."""
    return [
        {
            "type": "function",
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters(),
        }
        for tool in _chosen(names, writes)
    ]


def _field(item: object, name: str) -> Any:
    if isinstance(item, Mapping):
        return item.get(name)
    return getattr(item, name, None)


def answer(kioku: Kioku, tool_call: object, *, read_only: bool = False) -> dict[str, Any]:
    """The ``tool`` message that answers one Chat Completions tool call: kioku's JSON answer
    (or ``{"error": ...}``). ``read_only`` refuses the tools that change memory."""
    function = _field(tool_call, "function")
    name = _field(function, "name")
    content = call(kioku, name, _field(function, "arguments"), read_only=read_only)
    return {"role": "tool", "tool_call_id": _field(tool_call, "id"), "content": content}


def answers(
    kioku: Kioku, tool_calls: Iterable[object], *, read_only: bool = False
) -> list[dict[str, Any]]:
    """The ``tool`` messages that answer every call of an assistant message, in order."""
    return [answer(kioku, item, read_only=read_only) for item in tool_calls]
