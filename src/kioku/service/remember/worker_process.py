"""What a worker process of an import runs (see :mod:`kioku.service.remember.workers`).

A worker builds its own engine once, with the analyzer and embedder the importing process's
configuration makes and a store it refuses to open, then prepares the slices of turns it is
sent, in order, until it is told to stop or the importing process is gone. Each memory is
built with a placeholder id; the importing process draws the real one.
"""

from __future__ import annotations

import copyreg
import io
import os
import pickle
import signal
import threading
from dataclasses import dataclass, fields
from datetime import datetime
from multiprocessing import parent_process
from multiprocessing.connection import Connection, wait
from queue import SimpleQueue
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Protocol

from kioku.errors import KiokuError
from kioku.service.remember.storing import PreparedTurn, prepare_turn

if TYPE_CHECKING:
    from kioku.config.schema import Config
    from kioku.service.engine import Engine

__all__ = [
    "PLACEHOLDER",
    "ImportedTurn",
    "Item",
    "config_bytes",
    "prepare_imported",
    "prepare_item",
    "prepare_slice",
    "serve",
]

#: The id suffix of a memory built in a worker; its real one is drawn by the importing process.
PLACEHOLDER: Final = "00000000"


class _Inbox(Protocol):
    def get(self) -> list[Item] | None: ...


@dataclass(frozen=True, slots=True)
class Item:
    """One turn handed to a worker, with the moment it is prepared at."""

    user: str
    assistant: str
    at: datetime | None
    session_id: str | None
    source_id: str | None
    now: datetime


class ImportedTurn(Protocol):
    """A turn of an import as it is prepared (an ``ImportTurn``, or an :class:`Item`)."""

    @property
    def user(self) -> str: ...
    @property
    def assistant(self) -> str: ...
    @property
    def at(self) -> datetime | None: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def source_id(self) -> str | None: ...


def prepare_imported(
    engine: Engine,
    turn: ImportedTurn,
    *,
    now: datetime | None = None,
    id_suffix: str | None = None,
) -> PreparedTurn:
    """``turn`` prepared as :func:`~.storing.prepare_turn` prepares a turn of an import: at
    its time (if it has one), with its source id."""
    return prepare_turn(
        engine,
        turn.user,
        turn.assistant,
        at=turn.at,
        session_id=turn.session_id,
        source_ids=[turn.source_id] if turn.source_id is not None else [],
        source_timestamps=[turn.at] if turn.at is not None else [],
        now=now,
        id_suffix=id_suffix,
    )


def prepare_item(engine: Engine, item: Item, id_suffix: str | None) -> PreparedTurn:
    """``item`` prepared at the moment the importing process gave it."""
    return prepare_imported(engine, item, now=item.now, id_suffix=id_suffix)


def _proxy(items: dict[str, Any]) -> MappingProxyType[str, Any]:
    return MappingProxyType(items)


def _reduce_proxy(proxy: MappingProxyType[str, Any]) -> tuple[Any, tuple[dict[str, Any]]]:
    return _proxy, (dict(proxy),)


def config_bytes(config: Config) -> bytes:
    """``config`` pickled (its category table is a read-only mapping, which pickle alone
    cannot write)."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, MappingProxyType: _reduce_proxy}
    pickler.dump(config)
    return buffer.getvalue()


def _layout(cls: type) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """The field names of a slotted dataclass and the slots that hold them."""
    found = _LAYOUTS.get(cls)
    if found is None:
        names = tuple(f.name for f in fields(cls))
        found = _LAYOUTS[cls] = (names, tuple(getattr(cls, name) for name in names))
    return found


_LAYOUTS: dict[type, tuple[tuple[str, ...], tuple[Any, ...]]] = {}


def _rebuild(cls: type, values: tuple[object, ...]) -> object:
    """A record as it was pickled: its fields set slot by slot, as unpickling a frozen
    slotted dataclass does, without looking its fields up again for every one."""
    record: object = object.__new__(cls)
    for slot, value in zip(_layout(cls)[1], values, strict=True):
        slot.__set__(record, value)
    return record


def _reduce_record(record: object) -> tuple[Any, tuple[type, tuple[object, ...]]]:
    cls = type(record)
    return _rebuild, (cls, tuple([getattr(record, name) for name in _layout(cls)[0]]))


def _fast_records() -> None:
    """Send the records of a prepared turn by their fields: the importing process, which
    reads them while it stores, rebuilds each in half the time the default takes."""
    from multiprocessing.reduction import ForkingPickler

    from kioku.core.model import Embedding, Memory
    from kioku.core.profiles import ProfileClaim
    from kioku.ports.analyzer import Analysis

    for cls in (PreparedTurn, Memory, Embedding, Analysis, ProfileClaim):
        ForkingPickler.register(cls, _reduce_record)


class _NoStoreError(KiokuError):
    """A worker preparing turns asked for the store."""


def _no_store() -> Any:
    raise _NoStoreError("a worker process preparing turns never opens the store")


def _end_with(sentinel: int) -> None:
    """End this worker when the importing process is gone (killed: nobody stops it)."""
    wait([sentinel])
    os._exit(1)


def serve(
    inbox: _Inbox,
    outbox: Connection,
    config: bytes,
    user_id: str,
    agent_id: str,
) -> None:
    """A worker's life: its engine made, ``None`` sent when it is ready, then each slice
    from ``inbox`` answered on ``outbox`` (:func:`prepare_slice`), until ``None`` arrives."""
    from kioku.service.runtime import Runtime

    # Ctrl-C reaches every process of the terminal's group: the importing process handles
    # it and stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _fast_records()
    parent = parent_process()
    if parent is not None:
        threading.Thread(target=_end_with, args=(parent.sentinel,), daemon=True).start()
    settings = pickle.loads(config)  # noqa: S301 - pickled by the importing process
    engine = Runtime(_no_store, settings, user_id=user_id, agent_id=agent_id, env={})
    # Answers are sent by a thread of their own: the importing process reads them when it is
    # not storing, and a worker that waited for that with a full pipe would stand idle.
    answers: SimpleQueue[object] = SimpleQueue()
    sender = threading.Thread(target=_send_all, args=(answers, outbox), daemon=True)
    sender.start()
    answers.put(None)  # ready
    while (items := inbox.get()) is not None:
        answers.put(prepare_slice(engine, items))
    answers.put(_END)
    sender.join()


#: Put on a worker's queue of answers when it stops.
_END: Final = object()


def _send_all(answers: SimpleQueue[object], outbox: Connection) -> None:
    while (answer := answers.get()) is not _END:
        outbox.send(answer)


def prepare_slice(engine: Engine, items: list[Item]) -> list[PreparedTurn]:
    """``items`` prepared in order with the placeholder id, up to the first that fails (the
    importing process prepares that one again when its turn comes, which raises its error
    after the batches before it are stored)."""
    done: list[PreparedTurn] = []
    for item in items:
        try:
            done.append(prepare_item(engine, item, PLACEHOLDER))
        except Exception:
            break
    return done
