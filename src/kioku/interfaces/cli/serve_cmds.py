"""``kioku serve``: the HTTP API, MCP over HTTP and the web UI on one port."""

from __future__ import annotations

import importlib.util

import click

from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS"]


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port, printed at start).",
)
@click.option(
    "--require-keys",
    is_flag=True,
    help="Need an API key on every request, even on loopback (always so beyond loopback).",
)
@click.option(
    "--max-body",
    "max_body",
    type=click.IntRange(1024, 64 << 20),
    default=1 << 20,
    show_default=True,
    help="The largest request body accepted, in bytes.",
)
@click.option("--no-ui", is_flag=True, help="Serve the API and MCP only, not the web UI.")
@click.pass_obj
def serve_cmd(
    state: CliState, host: str, port: int, require_keys: bool, max_body: int, no_ui: bool
) -> None:
    """Serve this memory over HTTP: the web UI at /, the JSON API at /v1, MCP at /mcp.

    It listens on loopback (127.0.0.1) unless --host says otherwise. Listening beyond
    loopback needs API keys (`kioku keys create`), and then every request must carry one
    (`Authorization: Bearer kk_...`); each key sees only its own owner's memories. Without
    keys, on loopback, the server acts for the default owner of this store.

    \b
      kioku serve                     # then open http://127.0.0.1:8765/
      kioku serve --host 0.0.0.0      # needs keys

    Needs the server extra: pip install 'kioku[server]'. See docs/server.md.
    """
    if importlib.util.find_spec("fastapi") is None or importlib.util.find_spec("uvicorn") is None:
        raise click.ClickException(
            "kioku serve needs the server extra, which is not installed: "
            "pip install 'kioku[server]'"
        )
    from kioku.interfaces.http.serving import run_server

    run_server(
        state,
        host=host,
        port=port,
        require_keys=require_keys,
        max_body_bytes=max_body,
        ui=not no_ui,
    )


COMMANDS = (serve_cmd,)
