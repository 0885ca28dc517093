"""What a running server knows: its tenants and its limits."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from kioku.interfaces.http.tenants import Tenants

__all__ = ["DEFAULT_MAX_BODY_BYTES", "ServerState"]

#: The largest request body accepted, by default (1 MiB).
DEFAULT_MAX_BODY_BYTES: Final = 1 << 20


@dataclass(slots=True)
class ServerState:
    tenants: Tenants
    #: Every request needs a key (always so when listening beyond loopback).
    require_keys: bool = False
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    #: Signs the web UI's form tokens; random per server process.
    secret: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    #: Called once the server has stopped and closed the store.
    on_stop: Callable[[], None] | None = None
