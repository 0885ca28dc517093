"""``Kioku``: the one orchestrator. Interfaces call it; it calls the ports."""

from __future__ import annotations

import builtins
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal, Self, overload

from kioku.adapters.clock import SystemClock
from kioku.config import LoadedConfig, load_config
from kioku.config.schema import Config
from kioku.core.model import Embedding, Level, Memory
from kioku.errors import (
    ConfigError,
    DuplicateIdError,
    HomeNotFoundError,
    KiokuError,
    MemoryNotFoundError,
    ProtectionLimitError,
    ValidationError,
)
from kioku.ports.erasure import ErasedSourceError
from kioku.ports.store import MemoryFilter, MemoryPatch, Order, Store
from kioku.records import Record
from kioku.service.home import DB_FILENAME, resolve_home, store_factory
from kioku.service.recall import RecallResult, run_recall

# Only what opening and recall need is imported up front: Claude Code's hook opens a Kioku
# in a fresh process on every prompt. The rest is imported by the methods that use it.
if TYPE_CHECKING:
    from kioku.core.cost import CostReport
    from kioku.core.explain import RetentionExplanation
    from kioku.core.lifecycle.log import LogEntry
    from kioku.ports.analyzer import Analysis, Analyzer, Compressed
    from kioku.ports.clock import Clock
    from kioku.ports.embedder import Embedder
    from kioku.ports.erasure import BackupRecord
    from kioku.ports.store import IntegrityReport, StoreStats
    from kioku.ports.usage import Usage
    from kioku.service.batch import BatchReport
    from kioku.service.erasure import ErasurePlan, ErasureReport
    from kioku.service.turns import RememberedTurn

__all__ = ["DB_FILENAME", "Kioku", "Stats", "resolve_home"]

_ID_ATTEMPTS = 8
#: The state row naming the model of the newest vectors.
VECTOR_MODEL_KEY = "embedding_model"


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


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Stats(Record):
    """Counts for one owner scope, plus the store's size and the protection cap."""

    store: StoreStats
    max_protected: int
    user_id: str
    agent_id: str


class Kioku:
    """Long-term memory for one owner (``user_id``/``agent_id``) on one store.

    Open it with :meth:`open` (a home directory) or build it on any Store. The store is
    opened lazily, on the first call that needs it, so invalid input fails before
    anything is created on disk.
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
        self._vector_model_checked = False
        self._vector_model_warned = False
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

    # -- lifecycle -------------------------------------------------------------------------

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
    ) -> Kioku:
        """Open the memory kept in ``home`` (default ``$KIOKU_HOME`` or ``~/.kioku``).

        The configuration is read from ``config_path`` or ``home/config.toml`` with
        ``KIOKU_*`` environment overrides; it is validated now. ``analyzer`` replaces the one
        the configuration names; ``on_warning`` hears about provider fallbacks. With
        ``create=False`` a home without a database raises HomeNotFoundError when the store
        is first needed, instead of creating an empty one.
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
        factory = store_factory(home_path, config)
        if not create:
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

    def _embed(self, memory: Memory) -> Memory:
        """The memory with a vector of its trigger and content, unless it has one already."""
        if memory.embedding is not None:
            return memory
        vector = self.embedder.embed([f"{memory.trigger}\n{memory.content}"])[0]
        return replace(memory, embedding=Embedding(self.embedder.model_id, tuple(vector.tolist())))

    def _note_vector_model(self, memory: Memory) -> None:
        """Remember which model the newest vectors come from (one state row), so a change of
        embedding model is noticed cheaply at recall time."""
        if memory.embedding is not None and not self._vector_model_checked:
            if self.store.get_state(VECTOR_MODEL_KEY) != memory.embedding.model:
                self.store.set_state(VECTOR_MODEL_KEY, memory.embedding.model)
            self._vector_model_checked = True

    def _check_vector_model(self) -> None:
        """Warn once when stored vectors come from another model than the configured one."""
        if self._vector_model_warned:
            return
        stored = self.store.get_state(VECTOR_MODEL_KEY)
        if stored is not None and stored != self.embedder.model_id:
            self._vector_model_warned = True
            self._warn(
                f"memories were embedded with {stored}, but [embedding] now gives "
                f"{self.embedder.model_id}; vector search only compares vectors of one model, "
                "so until you run `kioku reembed` older memories are found by lexical search only"
            )

    def _warn(self, message: str) -> None:
        if self.on_warning is not None:
            self.on_warning(message)

    def record_usage(self, usage: Usage) -> None:
        """Keep a provider call's token usage; trouble storing it is a warning, not an error."""
        try:
            self.store.record_usage(usage)
        except KiokuError as exc:
            self._warn(f"token usage was not recorded: {exc}")

    @property
    def db_path(self) -> Path | None:
        """The SQLite file of this home (None for a store given directly)."""
        return None if self.home is None else self.home / DB_FILENAME

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

    # -- remembering -----------------------------------------------------------------------

    @overload
    def remember(self, memory: Memory, /) -> Memory: ...

    @overload
    def remember(
        self,
        trigger: str,
        content: str,
        /,
        *,
        intensity: int,
        category: str,
        valence: str = "neutral",
        arousal: int = 50,
        tags: Iterable[str] = (),
        keywords: Iterable[str] = (),
        protected: bool = False,
        at: datetime | None = None,
        session_id: str | None = None,
        source_ids: Iterable[str] = (),
        source_timestamps: Iterable[datetime] = (),
        kind: str = "episodic",
    ) -> Memory: ...

    def remember(
        self,
        trigger: str | Memory,
        content: str | None = None,
        /,
        *,
        intensity: int | None = None,
        category: str | None = None,
        valence: str = "neutral",
        arousal: int = 50,
        tags: Iterable[str] = (),
        keywords: Iterable[str] = (),
        protected: bool = False,
        at: datetime | None = None,
        session_id: str | None = None,
        source_ids: Iterable[str] = (),
        source_timestamps: Iterable[datetime] = (),
        kind: str = "episodic",
    ) -> Memory:
        """Store a new memory and return it as stored.

        Either a fully specified :class:`Memory` (kept as given, owned by this scope; an
        empty id gets a fresh one), or trigger/content plus emotion fields, from which the
        spec's initial values are derived (see :func:`kioku.service.drafts.build_memory`).
        """
        if isinstance(trigger, Memory):
            return self._insert(trigger, generated_id=not trigger.id)
        if content is None or intensity is None or category is None:
            raise TypeError("remember(trigger, content, intensity=..., category=...) is required")
        import secrets

        from kioku.service.drafts import MemoryDraft, build_memory
        from kioku.service.turns import check_provenance

        now = self.clock.now()
        at, session_id, sources, stamps = check_provenance(
            now, at, session_id, source_ids, source_timestamps
        )
        draft = MemoryDraft(
            trigger=trigger,
            content=content,
            intensity=intensity,
            category=category,
            valence=valence,
            arousal=arousal,
            tags=tags,
            keywords=keywords,
            protected=protected,
            created=at,
            session_id=session_id,
            source_ids=sources,
            source_timestamps=stamps,
            kind=kind,
        )
        memory = build_memory(
            draft,
            config=self.config,
            now=now,
            id_suffix=secrets.token_hex(4),
            user_id=self.user_id,
            agent_id=self.agent_id,
        )
        return self._insert(memory, generated_id=True)

    def analyze(self, user: str, assistant: str = "") -> Analysis:
        """What the analyzer understands of a turn, without storing anything."""
        from kioku.ports.analyzer import Turn

        return self.analyzer.analyze(Turn(user=user, assistant=assistant))

    def compress(self, trigger: str, content: str, level: int) -> Compressed:
        """The text a memory would have at ``level`` (2: summary, 3: keywords), not stored."""
        if level == Level.SUMMARY:
            return self.analyzer.summarize(trigger, content)
        if level == Level.TRACE:
            return self.analyzer.extract_keywords(trigger, content)
        raise ValueError(f"compression goes to level 2 or 3, not {level}")

    def remember_turn(
        self,
        user: str,
        assistant: str = "",
        *,
        at: datetime | None = None,
        session_id: str | None = None,
        source_ids: Iterable[str] = (),
        source_timestamps: Iterable[datetime] = (),
    ) -> RememberedTurn:
        """Analyze one turn (user input + assistant reply) and store it as one memory.

        Returns ``(memory, analysis)``; its ``known`` is True when the turn was already
        stored (an exact duplicate, see :mod:`kioku.service.turns`), and the memory is then
        the one stored before. A turn with no text on either side, an ``at`` before 1970
        or more than a day ahead, or a blank session or source id raises ValidationError.

        The turn is never lost: a failing LLM provider falls back to the offline analyzer,
        and a turn that asks to be remembered while the protected-memory cap is reached is
        stored unprotected, with a warning.
        """
        import secrets

        from kioku.core.validate import check_turn
        from kioku.ports.analyzer import Turn
        from kioku.service.drafts import build_memory
        from kioku.service.recall import SessionMood, session_key
        from kioku.service.turns import RememberedTurn, check_provenance, draft_from_analysis

        user, assistant = check_turn(user, assistant)
        now = self.clock.now()
        at, session_id, sources, stamps = check_provenance(
            now, at, session_id, source_ids, source_timestamps
        )
        # Provider fallbacks reach ``on_warning`` through the analyzer's own callback and are
        # listed in ``analysis.warnings``.
        analysis = self.analyzer.analyze(Turn(user=user, assistant=assistant, at=at))
        draft = draft_from_analysis(
            analysis,
            at=at,
            session_id=session_id,
            source_ids=sources,
            source_timestamps=stamps,
        )
        memory = build_memory(
            draft,
            config=self.config,
            now=now,
            id_suffix=secrets.token_hex(4),
            user_id=self.user_id,
            agent_id=self.agent_id,
        )
        try:
            stored, known = self._insert(memory, generated_id=True, dedupe=True)
        except ProtectionLimitError as exc:
            self._warn(f"stored without protection: {exc}")
            unprotected = replace(memory, protected=False)
            stored, known = self._insert(unprotected, generated_id=True, dedupe=True)
        if session_id:
            self.store.set_state(session_key(session_id), SessionMood.of(stored).to_json())
        return RememberedTurn(stored, analysis, known=known)

    @overload
    def _insert(self, memory: Memory, *, generated_id: bool) -> Memory: ...

    @overload
    def _insert(
        self, memory: Memory, *, generated_id: bool, dedupe: Literal[True]
    ) -> tuple[Memory, bool]: ...

    def _insert(
        self, memory: Memory, *, generated_id: bool, dedupe: bool = False
    ) -> Memory | tuple[Memory, bool]:
        """Validate, embed and store ``memory``. With ``dedupe``, an exact duplicate already
        stored (checked in the same transaction) is returned instead, as ``(memory, True)``."""
        import secrets

        from kioku.core.ids import make_memory_id
        from kioku.core.validate import validate_memory
        from kioku.service.turns import find_duplicate

        if generated_id and not memory.id:
            memory = replace(memory, id=make_memory_id(memory.created, secrets.token_hex(4)))
        memory = replace(memory, user_id=self.user_id, agent_id=self.agent_id)
        validate_memory(memory, self.config.categories)
        memory = self._embed(memory)
        for _ in range(_ID_ATTEMPTS):
            try:
                with self.store.atomic():
                    if dedupe:
                        existing = find_duplicate(self.store, memory)
                        if existing is not None:
                            return existing, True
                    if memory.protected:
                        self._check_protection_room()
                    try:
                        self.store.add(memory)
                    except ErasedSourceError:
                        if not dedupe:
                            raise
                        return memory, True  # an erased turn: known, and never stored again
                    self._note_vector_model(memory)
                return (memory, False) if dedupe else memory
            except DuplicateIdError:
                if not generated_id:
                    raise
                memory = replace(memory, id=make_memory_id(memory.created, secrets.token_hex(4)))
        raise DuplicateIdError(memory.id)

    # -- reading ---------------------------------------------------------------------------

    def _scoped(self, **criteria: object) -> MemoryFilter:
        return MemoryFilter(user_id=self.user_id, agent_id=self.agent_id, **criteria)  # type: ignore[arg-type]

    def get(self, memory_id: str) -> Memory:
        """The memory with this id in this scope; MemoryNotFoundError otherwise."""
        memory = self.store.get(memory_id)
        if memory is None or memory.user_id != self.user_id or memory.agent_id != self.agent_id:
            raise MemoryNotFoundError(memory_id)
        return memory

    def list(
        self,
        *,
        level: int | Iterable[int] | None = None,
        category: str | Iterable[str] | None = None,
        archived: bool | None = False,
        protected: bool | None = None,
        kind: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        order: Order = Order.CREATED_DESC,
    ) -> list[Memory]:
        """Memories of this scope, newest first. Archived ones only with ``archived=True``
        (or ``None`` for both)."""
        levels = (level,) if isinstance(level, int) else (tuple(level) if level else None)
        cats = (category,) if isinstance(category, str) else (tuple(category) if category else None)
        if levels and Level.ARCHIVED in levels and archived is False:
            archived = None
        return self.store.list(
            self._scoped(
                levels=levels,
                categories=cats,
                archived=archived,
                protected=protected,
                kind=kind,
                session_id=session_id,
                limit=limit,
                offset=offset,
                order=order,
            )
        )

    def count(self, *, archived: bool | None = None) -> int:
        """How many memories this scope has (only archived, only active, or all for None)."""
        return self.store.count(self._scoped(archived=archived))

    def explain(self, memory: Memory | str) -> RetentionExplanation:
        """Why the memory has its score and level, and when it will fade if never recalled."""
        from kioku.core.explain import explain_retention

        mem = self.get(memory) if isinstance(memory, str) else memory
        referencing = self.store.referencing(mem.id)
        return explain_retention(mem, self.config, self.clock.now(), referencing)

    def stats(self) -> Stats:
        """Counts per level and category, protection and the store size, for this scope."""
        return Stats(
            store=self.store.stats(self.user_id, self.agent_id),
            max_protected=self.config.protection.max_protected_memories,
            user_id=self.user_id,
            agent_id=self.agent_id,
        )

    def cost(self, since: datetime | None = None) -> CostReport:
        """Token usage of paid providers and its cost at the configured prices."""
        from kioku.core.cost import Prices, cost_report

        prices = Prices(
            llm_input=self.config.llm.input_price_per_mtok,
            llm_output=self.config.llm.output_price_per_mtok,
            embedding=self.config.embedding.price_per_mtok,
        )
        return cost_report(self.store.usage_totals(since), prices, self.clock.now())

    def recall(
        self,
        query: str,
        *,
        top_k: int | None = None,
        session_id: str | None = None,
        mark: bool = True,
        at: datetime | None = None,
    ) -> RecallResult:
        """The memories that matter for ``query``, ranked, with the ``<memories>`` block.

        Recalled memories are marked for reinforcement at the next batch and archived ones
        asked to be revived, unless ``mark=False``. With ``session_id`` the session's current
        emotion (the last memory remembered or recalled in it) adds emotional resonance.
        ``at`` recalls as of another moment (recency is measured from it). A ``session_id``
        that is not a storable id (blank, too long, control characters) raises ValidationError.
        """
        if session_id:
            from kioku.core.validate import check_provenance_id

            check_provenance_id("session_id", session_id)
        self._check_vector_model()
        return run_recall(
            store=self.store,
            embedder=self.embedder,
            config=self.config,
            scope=self._scoped(),
            query=query,
            now=at or self.clock.now(),
            top_k=top_k,
            session_id=session_id,
            mark=mark,
        )

    def leave_traces(
        self, result: RecallResult, *, session_id: str | None = None, at: datetime | None = None
    ) -> None:
        """Mark a recall made with ``mark=False`` as if it had been made with ``mark=True``
        (a server answers first and writes the marks after)."""
        from kioku.service.recall import leave_traces

        leave_traces(self.store, result, session_id, at or self.clock.now())

    def known_source_ids(self) -> set[str]:
        """Every provenance source id of this scope's memories (for idempotent imports); ``in``
        is also True for the source ids of erased memories, which are never stored again."""
        from kioku.service.erasure import known_source_ids

        return known_source_ids(self.store, self._scoped(archived=None))

    def reembed(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Give every memory of this scope a vector of the current embedder (those with another
        model's vector or none); returns how many changed. Vectors are never mixed: recall
        only compares vectors of the current model."""
        model = self.embedder.model_id
        todo = [
            m
            for m in self.store.iter(self._scoped(archived=None))
            if m.embedding is None or m.embedding.model != model
        ]
        batch = 256
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            vectors = self.embedder.embed([f"{m.trigger}\n{m.content}" for m in chunk])
            with self.store.atomic():
                for memory, vector in zip(chunk, vectors, strict=True):
                    self.store.update(
                        memory.id,
                        MemoryPatch(embedding=Embedding(model, tuple(vector.tolist()))),
                    )
            if progress is not None:
                progress(min(start + batch, len(todo)), len(todo))
        self.store.set_state(VECTOR_MODEL_KEY, model)
        self._vector_model_warned = False
        return len(todo)

    # -- protection and erasure --------------------------------------------------------------

    def _check_protection_room(self) -> None:
        from kioku.service.protection import require_protection_room

        require_protection_room(
            self.store, self._scoped(), self.config.protection.max_protected_memories
        )

    def protect(self, memory_id: str) -> Memory:
        """Protect a memory from compression, archiving and deletion (保護記憶).

        At ``protection.max_protected_memories`` this refuses with a ProtectionLimitError
        that lists the oldest protected memories: unprotect one of them, then retry.
        """
        with self.store.atomic():
            memory = self.get(memory_id)
            if memory.protected:
                return memory
            self._check_protection_room()
            self.store.update(memory_id, MemoryPatch(protected=True))
        return self.get(memory_id)

    def unprotect(self, memory_id: str) -> Memory:
        """Remove a memory's protection; it fades like any other from the next batch."""
        with self.store.atomic():
            memory = self.get(memory_id)
            if memory.protected:
                self.store.update(memory_id, MemoryPatch(protected=False))
        return self.get(memory_id)

    def forget(self, memory_id: str, *, force: bool = False) -> Memory:
        """Erase a memory with every relation to or from it; see :meth:`erase`.

        A protected memory is erased only with ``force=True``. Returns the erased memory.
        """
        report = self.erase(memory_id, force=force)
        assert report.memory is not None
        return report.memory

    def erase(self, memory_id: str, *, force: bool = False) -> ErasureReport:
        """Erase a memory with every relation to or from it, keep a tombstone of its source
        ids (no import stores that turn again), audit it and scrub the store's files; the
        report names the backups that still hold it (:mod:`kioku.service.erasure`)."""
        from kioku.service.erasure import forget_memory

        return forget_memory(self, memory_id, force=force)

    def plan_erasure(self, user_id: str | None = None) -> ErasurePlan:
        """What :meth:`erase_user` would delete for ``user_id`` (default this scope's user,
        every agent): counts, never text, and the confirmation token it needs."""
        from kioku.service.erasure import plan_erasure

        return plan_erasure(self, self.user_id if user_id is None else user_id)

    def erase_user(self, user_id: str, token: str) -> ErasureReport:
        """Erase everything of ``user_id`` (spec 003 §9.1), given the token of
        :meth:`plan_erasure` for exactly the memories there are now."""
        from kioku.service.erasure import erase_user

        return erase_user(self, user_id, token)

    # -- the nightly batch -----------------------------------------------------------------

    def batch(
        self,
        *,
        now: datetime | None = None,
        dry_run: bool = False,
        progress: Callable[[str, int, int], None] | None = None,
        auto: bool = False,
    ) -> BatchReport:
        """Apply every due daily batch up to ``now`` (see :mod:`kioku.service.batch`).

        A second batch started while one runs returns at once with status
        ``already_running``; ``dry_run`` plans the next due day and writes nothing. ``auto``
        (the scheduler's and the overdue fallback's batch) catches up at most
        ``batch.max_auto_catch_up_days`` days; a ``now`` before the last batch day does nothing.
        """
        from kioku.service.batch import run_batches

        lock = None if self.home is None else self.home / "batch.lock"
        report = run_batches(
            self, now=now, dry_run=dry_run, progress=progress, lock_path=lock, auto=auto
        )
        if report.status == "done":
            self.warm_vector_cache()
        return report

    def warm_vector_cache(self) -> None:
        """Build the vector cache of the configured model now, after writes, so that the next
        process (a hook answering a prompt) finds its file ready rather than rebuilding it.
        Best-effort: trouble is a warning, the cache is rebuilt at the next search anyway."""
        probe = [1.0] + [0.0] * (self.embedder.dim - 1)
        try:
            self.store.vector_search(self.embedder.model_id, probe, self._scoped(), 1)
        except KiokuError as exc:
            self._warn(f"the vector cache was not prepared: {exc}")

    def lifecycle_log(
        self,
        *,
        memory_id: str | None = None,
        since: datetime | None = None,
        events: Sequence[str] | None = None,
        limit: int | None = None,
        all_scopes: bool = False,
    ) -> builtins.list[LogEntry]:
        """Lifecycle log rows of this scope (or every scope), oldest first."""
        return self.store.read_log(
            memory_id=memory_id,
            user_id=None if all_scopes else self.user_id,
            agent_id=None if all_scopes else self.agent_id,
            since=since,
            events=events,
            limit=limit,
        )

    # -- maintenance -----------------------------------------------------------------------

    def check(self) -> IntegrityReport:
        """Integrity, schema version and file permissions of the store."""
        return self.store.check_integrity()

    def backup(self, target: Path, *, overwrite: bool = False) -> BackupRecord:
        """Write a consistent copy of the store to ``target``, safe while others write (see
        :func:`kioku.service.backups.backup` for the checks on ``target`` the CLI makes)."""
        return self.store.backup(target, overwrite=overwrite)
