"""``kioku mcp``: serve this memory to agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import click

from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS"]


@click.command("mcp")
@click.pass_obj
def mcp_cmd(state: CliState) -> None:
    """Serve this memory to agents over MCP, on stdin and stdout.

    An MCP client (Claude Code, Claude Desktop, Cursor...) starts it and talks to it; it
    stops when the client closes the connection. The global --home, --user and --agent
    options choose whose memory it serves. Tools: search_memory, read_memory, write_memory,
    report_procedure_outcome, remember_turn, prime, explain, protect, forget. Resources:
    kioku://memory/{id}, kioku://profile/{person}. Prompt: prime_conversation.

    \b
      claude mcp add kioku -- kioku --home ~/.kioku mcp

    Needs the MCP SDK: pip install 'kioku[server]'. See docs/mcp.md.
    """
    if importlib.util.find_spec("mcp") is None:
        raise click.ClickException(
            "kioku mcp needs the MCP SDK, which is not installed: pip install 'kioku[server]'"
        )
    from kioku.interfaces.mcp.server import serve
    from kioku.service.kioku import Kioku

    def open_kioku(on_warning: Callable[[str], None]) -> Kioku:
        def warn(message: str) -> None:
            click.echo(f"kioku: warning: {message}", err=True)  # the client's log
            on_warning(message)

        return state.open(on_warning=warn, create=True)

    serve(open_kioku)


COMMANDS = (mcp_cmd,)
