"""The one error hierarchy of kioku.

Every error kioku raises on purpose derives from :class:`KiokuError`. Each carries the
data a caller needs (the field, the value, what is allowed) and a ``hint`` that says how
to fix it, so interfaces can render one clear line without parsing messages.

``exit_code`` follows the CLI convention: 2 for bad input (usage, validation,
configuration), 1 for runtime failures (a locked or corrupt store, a missing memory).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kioku.records import Record

__all__ = [
    "ConfigError",
    "DuplicateIdError",
    "HomeNotFoundError",
    "KiokuError",
    "MemoryNotFoundError",
    "ProtectedCandidate",
    "ProtectedMemoryError",
    "ProtectionLimitError",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "ValidationError",
]


class KiokuError(Exception):
    """Root of every error kioku raises on purpose."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}; {self.hint}"
        return self.message


class ValidationError(KiokuError):
    """A value given for a memory field is not allowed."""

    exit_code = 2

    def __init__(self, field: str, value: object, allowed: str, *, hint: str | None = None) -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        super().__init__(f"{field} {value!r} is not allowed: expected {allowed}", hint=hint)


class ConfigError(KiokuError):
    """The configuration (file, environment or defaults override) is invalid."""

    exit_code = 2

    def __init__(
        self,
        key: str,
        value: object,
        allowed: str,
        *,
        source: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.key = key
        self.value = value
        self.allowed = allowed
        self.source = source
        super().__init__(
            self._describe(), hint=hint or "fix the value or remove the key to use the default"
        )

    def _describe(self) -> str:
        where = f" (from {self.source})" if self.source else ""
        return f"config key {self.key} = {self.value!r}{where} is invalid: expected {self.allowed}"

    def locate(self, source: str) -> None:
        """Say where the value came from (``file:...``, ``env:...``), for an error raised
        where that was not known (a provider checking its settings)."""
        if self.source is None:
            self.source = source
            self.message = self._describe()


class HomeNotFoundError(KiokuError):
    """A command that only reads was pointed at a home that holds no store (a mistyped
    ``--home``, or one never initialised): nothing is created there."""

    exit_code = 2

    def __init__(self, home: object) -> None:
        self.home = home
        super().__init__(
            f"no kioku store in {home} (it has no memories.db)",
            hint="check --home / KIOKU_HOME, or run `kioku init` to create a store there",
        )


class MemoryNotFoundError(KiokuError):
    """No memory has the given id (in the caller's scope)."""

    def __init__(self, memory_id: str) -> None:
        self.memory_id = memory_id
        super().__init__(
            f"no memory with id {memory_id!r}",
            hint="run `kioku list` to see the ids that exist",
        )


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProtectedCandidate(Record):
    """A protected memory that could be unprotected to make room."""

    id: str
    created: str
    trigger: str


class ProtectionLimitError(KiokuError):
    """Protecting one more memory would exceed ``protection.max_protected_memories``."""

    def __init__(self, limit: int, candidates: Sequence[ProtectedCandidate]) -> None:
        self.limit = limit
        self.candidates = tuple(candidates)
        listed = ", ".join(f"{c.id} [{c.created[:10]}] {c.trigger[:40]!r}" for c in self.candidates)
        super().__init__(
            f"the protected-memory limit ({limit}) is reached",
            hint=(
                "unprotect one of the oldest protected memories first "
                f"(`kioku unprotect ID`): {listed}"
                if listed
                else "raise protection.max_protected_memories in the config"
            ),
        )


class ProtectedMemoryError(KiokuError):
    """A protected memory was asked to be erased without saying so explicitly."""

    def __init__(self, memory_id: str) -> None:
        self.memory_id = memory_id
        super().__init__(
            f"memory {memory_id!r} is protected",
            hint=f"run `kioku unprotect {memory_id}` first, or pass --force to erase it anyway",
        )


class StoreError(KiokuError):
    """The store failed at runtime."""


class StoreLockedError(StoreError):
    """Another process held the database lock for longer than the busy timeout."""


class StoreCorruptError(StoreError):
    """The database file is not a kioku database or is damaged."""


class DuplicateIdError(StoreError):
    """A memory with this id already exists."""

    def __init__(self, memory_id: str) -> None:
        self.memory_id = memory_id
        super().__init__(f"a memory with id {memory_id!r} already exists")
