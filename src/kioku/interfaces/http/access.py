"""Who a request acts for: its API key, or the default owner on a server without keys.

A key comes as ``Authorization: Bearer kk_...`` (or, for the web UI's pages only, the
``kioku_key`` cookie its sign-in form sets; the API and MCP ignore it). When the store has
a live key, or the server listens beyond loopback, every request needs one. Without keys,
on loopback, requests act for the store's default owner with every right, and only when
addressed to a loopback host name, so a web page cannot reach the server through a
rebound DNS name.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Final

from kioku.errors import KiokuError
from kioku.interfaces.http.problems import Problem
from kioku.interfaces.http.tenants import RIGHTS_WRITE, Access

if TYPE_CHECKING:
    from starlette.requests import HTTPConnection

    from kioku.interfaces.http.tenants import Tenants

__all__ = ["KEY_COOKIE", "LOOPBACK_NAMES", "is_loopback", "resolve_access"]

KEY_COOKIE: Final = "kioku_key"
LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) stays on this machine."""
    name = host.strip().lower().strip("[]")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(conn: HTTPConnection) -> str:
    host = conn.headers.get("host", "")
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def presented_key(conn: HTTPConnection) -> str | None:
    """The key the request carries, if any."""
    header = conn.headers.get("authorization")
    if header is not None:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Problem(
                401,
                "unauthorized",
                "the Authorization header is not a bearer key",
                hint="send `Authorization: Bearer kk_...` with a key from `kioku keys create`",
            )
        return token.strip()
    if conn.url.path.startswith(("/v1", "/mcp")):
        return None  # the API and MCP take keys in the header only: no cookie rides along
    return conn.cookies.get(KEY_COOKIE) or None


def resolve_access(conn: HTTPConnection, tenants: Tenants, *, require_keys: bool) -> Access:
    """The access of a request; Problem 401 when it needs a key it lacks or has a bad one."""
    from kioku.service.keys import verify_key

    plain = presented_key(conn)
    if plain is None:
        if require_keys or tenants.keys_in_use():
            raise Problem(
                401,
                "unauthorized",
                "this server needs an API key",
                hint="send `Authorization: Bearer kk_...` with a key from `kioku keys create`",
            )
        if not is_loopback(_host_name(conn)):
            raise Problem(
                403,
                "forbidden",
                f"a server without API keys answers only loopback host names, not "
                f"{_host_name(conn)!r}",
                hint="open it as http://127.0.0.1:<port>/, or create keys with `kioku keys create`",
            )
        return Access(user_id=None, agent_id=None, rights=RIGHTS_WRITE)
    try:
        grant = tenants.keyring(lambda k: verify_key(k, plain, touch=False))
    except KiokuError as exc:
        raise Problem(401, "unauthorized", exc.message, hint=exc.hint) from None
    if tenants.due_touch(grant.key_id):
        tenants.keyring(lambda k: k.store.touch_key(grant.key_id, k.clock.now()))
    return Access(
        user_id=grant.user_id, agent_id=grant.agent_id, rights=grant.rights, key_id=grant.key_id
    )
