"""One open service per owner scope, used by one request at a time.

A :class:`~kioku.Kioku` is synchronous and serves one owner (user and agent). The server
keeps one per scope it has seen, each with its own lock, and runs every call in a worker
thread: requests for one owner take turns, requests for different owners run side by
side on their own connections to the store, whose transactions keep them apart.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeVar

import anyio.to_thread

from kioku.records import Record

if TYPE_CHECKING:
    from kioku.service.kioku import Kioku

__all__ = ["RIGHTS_READ", "RIGHTS_WRITE", "Access", "Tenants"]

T = TypeVar("T")

RIGHTS_READ: Final = "read"
RIGHTS_WRITE: Final = "read-write"
#: How often a key's "last used" time is written, at most.
_TOUCH_EVERY_S: Final = 60.0


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Access(Record):
    """Who a request acts for: an owner scope and the rights on it.

    ``user_id``/``agent_id`` None means the store's configured default owner (a server
    without keys, on loopback). ``key_id`` names the key presented, if any.
    """

    user_id: str | None
    agent_id: str | None
    rights: str
    key_id: str | None = None

    @property
    def can_write(self) -> bool:
        return self.rights == RIGHTS_WRITE

    @property
    def scope(self) -> tuple[str | None, str | None]:
        return (self.user_id, self.agent_id)


class Tenants:
    """The open services of the owners a server has seen, opened on first use."""

    def __init__(self, open_kioku: Callable[[str | None, str | None], Kioku]) -> None:
        self._open = open_kioku
        self._guard = threading.Lock()
        self._open_ones: dict[tuple[str | None, str | None], tuple[Kioku, threading.Lock]] = {}
        self._touched: dict[str, float] = {}
        self._keyring: Kioku | None = None
        self._keyring_lock = threading.Lock()

    def _get(self, scope: tuple[str | None, str | None]) -> tuple[Kioku, threading.Lock]:
        with self._guard:
            found = self._open_ones.get(scope)
            if found is None:
                found = (self._open(*scope), threading.Lock())
                self._open_ones[scope] = found
            return found

    def call_sync(self, access: Access | None, work: Callable[[Kioku], T]) -> T:
        """``work(kioku)`` for ``access``'s owner (the default owner for None), in turn."""
        kioku, lock = self._get((None, None) if access is None else access.scope)
        with lock:
            return work(kioku)

    async def call(self, access: Access | None, work: Callable[[Kioku], T]) -> T:
        """:meth:`call_sync` in a worker thread, so the event loop goes on serving."""
        return await anyio.to_thread.run_sync(self.call_sync, access, work)

    def keyring(self, work: Callable[[Kioku], T]) -> T:
        """``work`` on the service that checks keys (its own connection and turn)."""
        with self._keyring_lock:
            if self._keyring is None:
                self._keyring = self._open(None, None)
            return work(self._keyring)

    def keys_in_use(self) -> bool:
        """Whether the store has a live API key."""
        return bool(self.keyring(lambda k: k.store.keys()))

    def due_touch(self, key_id: str) -> bool:
        """Whether the key's "last used" time is due to be written (once a minute)."""
        now = time.monotonic()
        with self._guard:
            last = self._touched.get(key_id)
            if last is not None and now - last < _TOUCH_EVERY_S:
                return False
            self._touched[key_id] = now
            return True

    def close(self) -> None:
        with self._guard:
            open_ones = list(self._open_ones.values())
            self._open_ones.clear()
        with self._keyring_lock:
            if self._keyring is not None:
                open_ones.append((self._keyring, threading.Lock()))
                self._keyring = None
        for kioku, lock in open_ones:
            with lock:
                kioku.close()
