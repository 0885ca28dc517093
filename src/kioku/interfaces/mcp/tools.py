"""What kioku offers over MCP: nine tools, two resources and a prompt, for both transports.

:func:`register` adds them to a server. Each one describes its work on a
:class:`~kioku.Kioku` and hands it to the server's runner, which knows whose memory the
call is for: the one open service of ``kioku mcp`` (stdio), or the owner of the key an
HTTP request carries (``kioku serve``). Tools that change memory say so (``writes``), so a
read-only key is refused before anything runs.
"""

# No ``from __future__ import annotations``: the SDK reads each tool's parameter annotations
# (types and descriptions) to build its input schema, and they name ``Field``, which is
# imported inside register with the rest of the SDK.

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar
from urllib.parse import unquote

from kioku.errors import MemoryNotFoundError
from kioku.integrations import tool_schemas as shared
from kioku.integrations.tool_schemas import INSTRUCTIONS
from kioku.interfaces.mcp import views
from kioku.interfaces.mcp.calls import CallError, Runner, Work, guarded

if TYPE_CHECKING:
    from mcp.server.fastmcp import FastMCP

    from kioku.service.kioku import Kioku

__all__ = ["INSTRUCTIONS", "register"]

PROTECT = (
    "Protect a memory (its id) from compression, archiving and deletion. Use it only when "
    "the user asks that something never be forgotten: protection is limited, and at the "
    "limit the error lists the protected memories the user could unprotect. Returns the "
    "memory as JSON."
)
FORGET = (
    "Erase a memory for good, with its relations; it cannot be undone. Only when the user "
    "asks to forget something. confirm must repeat the id of the memory to erase, exactly: "
    "anything else erases nothing and returns an error. A protected memory is not erased "
    "here. Returns JSON: the erased ids and any backups that still hold the memory."
)
PRIME_PROMPT = (
    "The memories kioku brings to mind before a message, as a user message to start the "
    "conversation with."
)

ID_HELP = shared.ID_HELP
F = TypeVar("F", bound=Callable[..., Any])
KINDS = Literal["episode", "knowledge", "procedure", "profile"]


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, default=str)


def _profile(kioku: "Kioku", person: str) -> dict[str, Any]:
    from kioku.core.serialize import memory_to_dict

    try:
        return memory_to_dict(kioku.profile(person))
    except MemoryNotFoundError:
        known = ", ".join(sorted(m.trigger for m in kioku.profiles())) or "none yet"
        raise CallError(f"no profile of {person!r}; the people kioku knows: {known}") from None


def _forget(kioku: "Kioku", memory_id: str, confirm: str) -> dict[str, Any]:
    if confirm != memory_id:
        raise CallError(
            f"nothing was erased: confirm must repeat the id of the memory to erase; call "
            f"forget again with confirm={memory_id!r} if memory {memory_id!r} is the one the "
            "user wants forgotten"
        )
    return views.erased(memory_id, kioku.erase(memory_id))


def register(app: "FastMCP[Any]", runner: Runner) -> None:
    """Add kioku's tools, resources and prompt to ``app``; ``runner`` runs their work."""
    from mcp.server.fastmcp.prompts.base import Message, UserMessage
    from mcp.types import ToolAnnotations
    from pydantic import Field

    async def run(work: Work, *, writes: bool = False) -> dict[str, Any]:
        # The context of the request being served (the SDK keeps it for the task).
        return await runner(app.get_context(), guarded(work), writes=writes)

    reading = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
    recalling = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)
    writing = ToolAnnotations(
        readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
    )
    erasing = ToolAnnotations(readOnlyHint=False, destructiveHint=True, openWorldHint=False)

    effects = {"reading": reading, "recalling": recalling, "writing": writing}

    def offered(spec: shared.ToolSpec) -> Callable[[F], F]:
        """Register a function as the MCP face of the shared tool ``spec``."""
        register_fn = app.tool(
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=effects[spec.effect],
        )

        def decorate(fn: F) -> F:
            register_fn(fn)
            return fn

        return decorate

    async def shared_call(spec: shared.ToolSpec, **arguments: Any) -> dict[str, Any]:
        given = {name: value for name, value in arguments.items() if value is not None}
        return await run(lambda k: spec.work(k, given), writes=spec.writes)

    search = shared.SEARCH_MEMORY

    @offered(search)
    async def search_memory(
        query: Annotated[str, Field(description=search.param("query").description)],
        kinds: Annotated[
            list[KINDS] | KINDS | None, Field(description=search.param("kinds").description)
        ] = None,
        top_k: Annotated[int, Field(description=search.param("top_k").description)] = 10,
        include_archive: Annotated[
            bool, Field(description=search.param("include_archive").description)
        ] = True,
    ) -> dict[str, Any]:
        return await shared_call(
            search, query=query, kinds=kinds, top_k=top_k, include_archive=include_archive
        )

    @offered(shared.READ_MEMORY)
    async def read_memory(id: Annotated[str, Field(description=ID_HELP)]) -> dict[str, Any]:
        return await shared_call(shared.READ_MEMORY, id=id)

    write = shared.WRITE_MEMORY

    @offered(write)
    async def write_memory(
        kind: Annotated[
            Literal["episode", "knowledge", "procedure"],
            Field(description=write.param("kind").description),
        ],
        text: Annotated[str, Field(description=write.param("text").description)],
        title: Annotated[str, Field(description=write.param("title").description)] = "",
        description: Annotated[str, Field(description=write.param("description").description)] = "",
        steps: Annotated[
            list[str] | None, Field(description=write.param("steps").description)
        ] = None,
        protected: Annotated[bool, Field(description=write.param("protected").description)] = False,
    ) -> dict[str, Any]:
        return await shared_call(
            write,
            kind=kind,
            text=text,
            title=title,
            description=description,
            steps=steps,
            protected=protected,
        )

    outcome = shared.REPORT_OUTCOME

    @offered(outcome)
    async def report_procedure_outcome(
        id: Annotated[str, Field(description=ID_HELP)],
        success: Annotated[bool, Field(description=outcome.param("success").description)],
    ) -> dict[str, Any]:
        return await shared_call(outcome, id=id, success=success)

    turn = shared.REMEMBER_TURN

    @offered(turn)
    async def remember_turn(
        user: Annotated[str, Field(description=turn.param("user").description)],
        assistant: Annotated[str, Field(description=turn.param("assistant").description)] = "",
        session_id: Annotated[
            str | None, Field(description=turn.param("session_id").description)
        ] = None,
    ) -> dict[str, Any]:
        return await shared_call(turn, user=user, assistant=assistant, session_id=session_id)

    priming = shared.PRIME

    @offered(priming)
    async def prime(
        message: Annotated[str, Field(description=priming.param("message").description)],
        session_id: Annotated[
            str | None, Field(description=priming.param("session_id").description)
        ] = None,
    ) -> dict[str, Any]:
        return await shared_call(priming, message=message, session_id=session_id)

    @offered(shared.EXPLAIN)
    async def explain(id: Annotated[str, Field(description=ID_HELP)]) -> dict[str, Any]:
        return await shared_call(shared.EXPLAIN, id=id)

    @app.tool(title="Protect a memory", description=PROTECT, annotations=writing)
    async def protect(id: Annotated[str, Field(description=ID_HELP)]) -> dict[str, Any]:
        return await run(lambda k: views.brief(k.protect(id)), writes=True)

    @app.tool(title="Forget a memory", description=FORGET, annotations=erasing)
    async def forget(
        id: Annotated[str, Field(description=ID_HELP)],
        confirm: Annotated[str, Field(description="The same id again, to confirm the erasure.")],
    ) -> dict[str, Any]:
        return await run(lambda k: _forget(k, id, confirm), writes=True)

    @app.resource(
        "kioku://memory/{id}",
        name="memory",
        description="A memory as JSON, every field (reading it does not count as a recall).",
        mime_type="application/json",
    )
    async def memory_resource(id: str) -> str:
        memory_id = unquote(id)
        return _dumps(await run(lambda k: views.read(k.read_memory(memory_id, mark=False))))

    @app.resource(
        "kioku://profile/{person}",
        name="profile",
        description="What kioku knows about a person (name or alias), as JSON.",
        mime_type="application/json",
    )
    async def profile_resource(person: str) -> str:
        name = unquote(person)
        return _dumps(await run(lambda k: _profile(k, name)))

    @app.prompt(name="prime_conversation", title="Prime a conversation", description=PRIME_PROMPT)
    async def prime_conversation(
        message: Annotated[str, Field(description="The message about to be answered.")],
    ) -> list[Message]:
        block = (await run(lambda k: views.primed(k.prime(message))))["block"]
        return [UserMessage(block or "(kioku has no memories to bring to mind for this.)")]
