"""Start the server: check the address against the keys, bind, and run uvicorn."""

from __future__ import annotations

import socket
import sys
from typing import TYPE_CHECKING

import click

from kioku.errors import KiokuError
from kioku.interfaces.http.access import is_loopback
from kioku.interfaces.http.settings import ServerState
from kioku.interfaces.http.tenants import Tenants

if TYPE_CHECKING:
    from kioku.interfaces.cli.state import CliState
    from kioku.service.kioku import Kioku

__all__ = ["ServeError", "bind", "run_server"]


class ServeError(KiokuError):
    """The server cannot start as asked."""

    exit_code = 2


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port``; ServeError when it cannot be had."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ServeError(
            f"cannot listen on {host!r}: {exc.strerror}", hint="give an address or host name"
        ) from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ServeError(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            hint="choose another --port (0 picks a free one)",
        ) from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


def run_server(
    cli: CliState,
    *,
    host: str,
    port: int,
    require_keys: bool,
    max_body_bytes: int,
    ui: bool,
) -> None:
    """Serve ``cli``'s store until interrupted."""
    import uvicorn

    from kioku.interfaces.http.app import create_app

    def warn(message: str) -> None:
        click.echo(f"kioku: warning: {message}", err=True)

    def open_kioku(user_id: str | None, agent_id: str | None) -> Kioku:
        if user_id is None and agent_id is None:
            return cli.open(on_warning=warn, create=True)
        from kioku.service.kioku import Kioku

        return Kioku.open(
            cli.home_arg,
            config_path=cli.config_path,
            user_id=user_id,
            agent_id=agent_id,
            on_warning=warn,
            create=True,
            owner_bound=True,  # with [store] row_security, the server enforces the owner too
        )

    tenants = Tenants(open_kioku)
    local = is_loopback(host)
    try:
        has_keys = tenants.keys_in_use()
    except BaseException:
        tenants.close()
        raise
    if not local and not has_keys:
        tenants.close()
        raise ServeError(
            f"refusing to listen on {host!r} without API keys: anyone who can reach it "
            "could read and erase every memory",
            hint="create a key with `kioku keys create NAME --key-user USER`, "
            "or listen on 127.0.0.1",
        )
    state = ServerState(
        tenants=tenants,
        require_keys=require_keys or not local,
        max_body_bytes=max_body_bytes,
        on_stop=lambda: click.echo("kioku: server stopped; the store is closed", err=True),
    )
    sock = bind(host, port)
    url = _url(sock)
    auth = "API keys required" if state.require_keys or has_keys else "no API keys: loopback only"
    click.echo(
        f"kioku: serving {cli.home} at {url} ({auth})\n"
        f"  web UI   {url}\n"
        f"  JSON API {url}v1/  (OpenAPI: {url}v1/openapi.json)\n"
        f"  MCP      {url}mcp\n"
        "  Ctrl-C stops it."
    )
    sys.stdout.flush()
    app = create_app(state, ui=ui)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
