"""A backend for Anthropic's memory tool (``memory_20250818``) that keeps its files in kioku.

Pass :class:`KiokuMemoryTool` to the ``anthropic`` SDK's tool runner, and the model's
``/memories`` files become kioku's knowledge, procedures and profiles
(:mod:`kioku.integrations.anthropic_files` describes the tree)::

    import anthropic
    from kioku import Kioku
    from kioku.integrations.anthropic_memory import KiokuMemoryTool

    with Kioku.open() as kioku:
        runner = anthropic.Anthropic().beta.messages.tool_runner(
            model=..., max_tokens=1024, messages=[...], tools=[KiokuMemoryTool(kioku)]
        )
        for message in runner:
            ...

:class:`AsyncKiokuMemoryTool` is the same for ``AsyncAnthropic``'s tool runner. This module
needs the ``anthropic`` extra (``pip install 'kioku[anthropic]'``); nothing
else in kioku imports it. A command that cannot be done comes back to the model as an
error result whose text names the problem and the fix; other errors are raised.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from kioku.integrations.anthropic_files import MemoryFiles, MemoryToolError

if TYPE_CHECKING:
    from anthropic.types.beta import BetaCacheControlEphemeralParam

    from kioku.service.kioku import Kioku

__all__ = [
    "COMMANDS",
    "AsyncKiokuMemoryTool",
    "KiokuMemoryTool",
    "MemoryFiles",
    "MemoryToolError",
]

COMMANDS = ("view", "create", "str_replace", "insert", "delete", "rename")
_NO_CLEAR = "kioku does not clear all memory at once: delete the files one by one"


def _check_command(input: object) -> None:
    command = input.get("command") if isinstance(input, dict) else None
    if command not in COMMANDS:
        raise ToolError(f"unknown memory command {command!r}: send one of {', '.join(COMMANDS)}")


def _answer(work: Callable[[], str]) -> str:
    try:
        return work()
    except MemoryToolError as exc:
        raise ToolError(str(exc)) from None


class KiokuMemoryTool(BetaAbstractMemoryTool):
    """The memory tool, on the memories of an open :class:`~kioku.Kioku`.

    Its calls use ``kioku`` from the thread that runs the tools (the synchronous tool
    runner's), one at a time; ``files`` gives the same commands without the SDK.
    """

    def __init__(
        self, kioku: Kioku, *, cache_control: BetaCacheControlEphemeralParam | None = None
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.files = MemoryFiles(kioku)

    def call(self, input: object) -> Any:
        """Run one command the model sent (an unknown one is refused, naming the six)."""
        _check_command(input)
        return super().call(input)

    @staticmethod
    def _answer(work: Callable[[], str]) -> str:
        return _answer(work)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return self._answer(lambda: self.files.view(command.path, command.view_range))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return self._answer(lambda: self.files.create(command.path, command.file_text))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return self._answer(
            lambda: self.files.str_replace(command.path, command.old_str, command.new_str)
        )

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return self._answer(
            lambda: self.files.insert(command.path, command.insert_line, command.insert_text)
        )

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return self._answer(lambda: self.files.delete(command.path))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return self._answer(lambda: self.files.rename(command.old_path, command.new_path))

    def clear_all_memory(self) -> Any:
        raise ToolError(_NO_CLEAR)


class AsyncKiokuMemoryTool(BetaAsyncAbstractMemoryTool):
    """The memory tool for ``AsyncAnthropic``'s tool runner, on an open :class:`~kioku.Kioku`.

    Each command runs on the event loop's thread without awaiting, as ``kioku mcp`` runs
    its tools: commands run one at a time and ``kioku`` is used from one thread only.
    """

    def __init__(
        self, kioku: Kioku, *, cache_control: BetaCacheControlEphemeralParam | None = None
    ) -> None:
        super().__init__(cache_control=cache_control)
        self.files = MemoryFiles(kioku)

    async def call(self, input: object) -> Any:
        """Run one command the model sent (an unknown one is refused, naming the six)."""
        _check_command(input)
        return await super().call(input)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return _answer(lambda: self.files.view(command.path, command.view_range))

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return _answer(lambda: self.files.create(command.path, command.file_text))

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return _answer(
            lambda: self.files.str_replace(command.path, command.old_str, command.new_str)
        )

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return _answer(
            lambda: self.files.insert(command.path, command.insert_line, command.insert_text)
        )

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return _answer(lambda: self.files.delete(command.path))

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return _answer(lambda: self.files.rename(command.old_path, command.new_path))

    async def clear_all_memory(self) -> Any:
        raise ToolError(_NO_CLEAR)
