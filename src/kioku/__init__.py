"""kioku (記憶): long-term memory for LLM agents that remembers and forgets like people do.

The public surface is what ``__all__`` lists; everything else may change between versions.

    >>> from kioku import Kioku
    >>> with Kioku.open("/tmp/my-kioku") as memory:           # doctest: +SKIP
    ...     m = memory.remember("asked about MongoDB", "we chose JSON files",
    ...                         intensity=45, category="decision")
    ...     memory.explain(m).days_until_next_level
"""

from __future__ import annotations

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
from kioku.service.kioku import Kioku, Stats

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
    "__version__",
    "load_config",
]
