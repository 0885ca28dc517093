"""The concrete engine: one owner's store, configuration, clock, analyzer and embedder.

:class:`Runtime` opens a home (configuration from its file and the environment, checked now),
and opens the store, the analyzer and the embedder on first use. It satisfies
:class:`~kioku.service.engine.Engine`; the ``Kioku`` facade adds the use cases on top of it.
Only what opening and recall need is imported up front: Claude Code's hook opens one in a
fresh process on every prompt.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

from kioku.adapters.clock import SystemClock
from kioku.config import LoadedConfig, load_config
from kioku.config.schema import Config
from kioku.errors import ConfigError, HomeNotFoundError, KiokuError, ValidationError
from kioku.ports.store import Store
from kioku.service.engine import VectorModelNotes, warn
from kioku.service.home import DB_FILENAME, resolve_home, store_factory, uses_server

if TYPE_CHECKING:
    from kioku.core.usage import Usage
    from kioku.ports.analyzer import Analyzer
    from kioku.ports.clock import Clock
    from kioku.ports.embedder import Embedder

__all__ = ["Runtime"]


def _check_scope(loaded: LoadedConfig, name: str) -> None:
    """``scope.<name>`` of the configuration, checked as ``--user`` and ``--agent`` are: an id
    the store would refuse is a ConfigError naming where it came from, now rather than at the
    first write."""
    from kioku.core.validate import check_scope_id

    key = f"scope.{name}"
    value = getattr(loaded.config.scope, name)
    try:
        check_scope_id(key, value)
    except ValidationError as exc:
        source = loaded.sources.get(key, "default")
        raise ConfigError(
            key, value, exc.allowed, source=None if source == "default" else source
        ) from None


def _existing_only(home: Path, factory: Callable[[], Store]) -> Callable[[], Store]:
    """``factory``, refusing to create a database that does not exist yet."""

    def open_existing() -> Store:
        if not (home / DB_FILENAME).is_file():
            raise HomeNotFoundError(home)
        return factory()

    return open_existing


class Runtime:
    """One owner's (``user_id``/``agent_id``) parts on one store, opened lazily.

    Open it with :meth:`open` (a home directory) or build it on any Store. The store is
    opened on the first call that needs it, so invalid input fails before anything is
    created on disk.
    """

    def __init__(
        self,
        store: Store | Callable[[], Store],
        config: Config | None = None,
        *,
        clock: Clock | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        home: Path | None = None,
        config_sources: LoadedConfig | None = None,
        analyzer: Analyzer | None = None,
        embedder: Embedder | None = None,
        env: Mapping[str, str] | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config or Config()
        self._analyzer = analyzer
        self._embedder = embedder
        self.vector_notes = VectorModelNotes()
        self._env: Mapping[str, str] = os.environ if env is None else env
        self.on_warning = on_warning
        self.clock: Clock = clock or SystemClock()
        self.user_id = user_id or self.config.scope.user_id
        self.agent_id = agent_id or self.config.scope.agent_id
        self.home = home
        self.loaded_config = config_sources
        self._store: Store | None = None
        self._store_factory: Callable[[], Store] | None = None
        if isinstance(store, Store):
            self._store = store
        else:
            self._store_factory = store

    @classmethod
    def open(
        cls,
        home: str | os.PathLike[str] | None = None,
        *,
        config_path: str | os.PathLike[str] | None = None,
        clock: Clock | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        env: Mapping[str, str] | None = None,
        analyzer: Analyzer | None = None,
        embedder: Embedder | None = None,
        on_warning: Callable[[str], None] | None = None,
        create: bool = True,
        owner_bound: bool = False,
    ) -> Self:
        """Open the memory kept in ``home`` (default ``$KIOKU_HOME`` or ``~/.kioku``).

        The configuration is read from ``config_path`` or ``home/config.toml`` with
        ``KIOKU_*`` environment overrides; it is validated now. ``analyzer`` replaces the one
        the configuration names; ``on_warning`` hears about provider fallbacks. With
        ``create=False`` a home without a database raises HomeNotFoundError when the store
        is first needed, instead of creating an empty one. ``owner_bound``: the store is for
        ``user_id`` only (see :func:`~kioku.service.home.store_factory`).
        """
        environ = os.environ if env is None else env
        home_path = resolve_home(home, environ)
        loaded = load_config(
            home=home_path,
            path=Path(config_path) if config_path is not None else None,
            env=environ,
        )
        config = loaded.config
        if not user_id:
            _check_scope(loaded, "user_id")
        if not agent_id:
            _check_scope(loaded, "agent_id")
        factory = store_factory(home_path, config, user_id if owner_bound and user_id else None)
        if not create and not uses_server(config):
            factory = _existing_only(home_path, factory)
        return cls(
            factory,
            config,
            clock=clock,
            user_id=user_id,
            agent_id=agent_id,
            home=home_path,
            config_sources=loaded,
            analyzer=analyzer,
            embedder=embedder,
            env=environ,
            on_warning=on_warning,
        )

    @property
    def store(self) -> Store:
        """The store, opened on first use (creating the home and database if needed)."""
        if self._store is None:
            assert self._store_factory is not None
            self._store = self._store_factory()
        return self._store

    @property
    def analyzer(self) -> Analyzer:
        """The analyzer the configuration names (created on first use; a misconfigured
        provider raises ConfigError here)."""
        if self._analyzer is None:
            from kioku.adapters.analyzers import create_analyzer

            try:
                self._analyzer = create_analyzer(
                    self.config.llm, env=self._env, usage_sink=self, warn=self._warn
                )
            except ConfigError as exc:
                self._locate(exc)
                raise
        return self._analyzer

    @property
    def embedder(self) -> Embedder:
        """The embedder ``[embedding]`` names (created on first use)."""
        if self._embedder is None:
            from kioku.adapters.embedders import create_embedder

            try:
                self._embedder = create_embedder(
                    self.config.embedding, env=self._env, usage_sink=self
                )
            except ConfigError as exc:
                self._locate(exc)
                raise
        return self._embedder

    def _locate(self, exc: ConfigError) -> None:
        """Name the file or variable the faulty setting came from in ``exc``."""
        if self.loaded_config is not None:
            source = self.loaded_config.sources.get(exc.key, "default")
            if source != "default":
                exc.locate(source)

    def _warn(self, message: str) -> None:
        warn(self, message)

    def record_usage(self, usage: Usage) -> None:
        """Keep a provider call's token usage; trouble storing it is a warning, not an error."""
        try:
            self.store.record_usage(usage)
        except KiokuError as exc:
            self._warn(f"token usage was not recorded: {exc}")

    @property
    def db_path(self) -> Path | None:
        """The SQLite file of this home (None for a store given directly or on a server)."""
        if self.home is None or uses_server(self.config):
            return None
        return self.home / DB_FILENAME

    def close(self) -> None:
        """Close the store; the object can be opened again by using it."""
        if self._store is not None:
            self._store.close()
            self._store = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
