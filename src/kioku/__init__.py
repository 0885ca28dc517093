"""kioku (記憶): long-term memory for LLM agents that remembers and forgets like people do.

The public surface is what ``__all__`` lists; everything else may change between versions.

    >>> from kioku import Kioku
    >>> with Kioku.open("/tmp/my-kioku") as memory:           # doctest: +SKIP
    ...     m = memory.remember("asked about MongoDB", "we chose JSON files",
    ...                         intensity=45, category="decision")
    ...     memory.explain(m).days_until_next_level
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing itself costs a hook ~15 ms of imports
if TYPE_CHECKING:
    from typing import Any

    from kioku.config import Config, LoadedConfig, load_config
    from kioku.core.explain import RetentionExplanation
    from kioku.core.model import Embedding, Kind, Level, Memory, Relation, RelationType, Valence
    from kioku.errors import (
        ConfigError,
        KiokuError,
        MemoryNotFoundError,
        ProtectedMemoryError,
        ProtectionLimitError,
        StoreCorruptError,
        StoreError,
        StoreLockedError,
        ValidationError,
    )
    from kioku.service.context.working_memory import WorkingMemory
    from kioku.service.inspection.reports import Stats
    from kioku.service.kioku import Kioku

#: Where each public name lives. They are imported on first use, so a program that needs only
#: a small part of kioku (a Claude Code hook asking the warm daemon) never loads numpy.
_EXPORTS = {
    **dict.fromkeys(("Config", "LoadedConfig", "load_config"), "kioku.config"),
    "RetentionExplanation": "kioku.core.explain",
    **dict.fromkeys(
        ("Embedding", "Kind", "Level", "Memory", "Relation", "RelationType", "Valence"),
        "kioku.core.model",
    ),
    **dict.fromkeys(
        (
            "ConfigError",
            "KiokuError",
            "MemoryNotFoundError",
            "ProtectedMemoryError",
            "ProtectionLimitError",
            "StoreCorruptError",
            "StoreError",
            "StoreLockedError",
            "ValidationError",
        ),
        "kioku.errors",
    ),
    "Kioku": "kioku.service.kioku",
    "Stats": "kioku.service.inspection.reports",
    "WorkingMemory": "kioku.service.context.working_memory",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'kioku' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


__version__ = "0.1.0"

__all__ = [
    "Config",
    "ConfigError",
    "Embedding",
    "Kind",
    "Kioku",
    "KiokuError",
    "Level",
    "LoadedConfig",
    "Memory",
    "MemoryNotFoundError",
    "ProtectedMemoryError",
    "ProtectionLimitError",
    "Relation",
    "RelationType",
    "RetentionExplanation",
    "Stats",
    "StoreCorruptError",
    "StoreError",
    "StoreLockedError",
    "Valence",
    "ValidationError",
    "WorkingMemory",
    "__version__",
    "load_config",
]
