"""What the use cases need from the engine they run on: the :class:`Engine` protocol.

The capability modules (``remember``, ``recall``, ``lifecycle``, ``erasure``, ``context``,
``inspection``) are functions of an ``Engine``; they never import the ``Kioku`` facade, which
satisfies the protocol (through :class:`~kioku.service.runtime.Runtime`) and delegates each of
its methods to one of them. So the facade depends on the capabilities and never the other way
round, and a capability can be run on any engine (a throwaway one in ``simulate``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from kioku.config.schema import Config
    from kioku.ports.analyzer import Analyzer
    from kioku.ports.clock import Clock
    from kioku.ports.embedder import Embedder
    from kioku.ports.store import Store

__all__ = ["Engine", "VectorModelNotes", "warn"]


@dataclass(slots=True)
class VectorModelNotes:
    """What an engine has noted about the model of the stored vectors, so the state row that
    names it is written and checked at most once per engine."""

    #: The state row names the model of the vectors this engine writes.
    recorded: bool = False
    #: The warning that stored vectors come from another model was given.
    warned: bool = False


class Engine(Protocol):
    """One owner's memory on one store, with the parts the use cases work with.

    The store, analyzer and embedder are opened on first use; ``on_warning`` hears what a
    use case lets go of without failing (a provider fallback, a cache not prepared).
    """

    config: Config
    clock: Clock
    user_id: str
    agent_id: str
    home: Path | None
    on_warning: Callable[[str], None] | None
    vector_notes: VectorModelNotes

    @property
    def store(self) -> Store: ...

    @property
    def analyzer(self) -> Analyzer: ...

    @property
    def embedder(self) -> Embedder: ...

    @property
    def db_path(self) -> Path | None: ...


def warn(engine: Engine, message: str) -> None:
    """Tell the engine's ``on_warning`` (if any) about ``message``."""
    if engine.on_warning is not None:
        engine.on_warning(message)
