"""The documented public surface: exactly these names, all importable, all documented."""

from __future__ import annotations

import kioku

EXPECTED = {
    "Config",
    "ConfigError",
    "Embedding",
    "Kind",
    "Kioku",
    "WorkingMemory",
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
}


def test_all_is_exactly_the_documented_surface() -> None:
    assert set(kioku.__all__) == EXPECTED
    assert len(kioku.__all__) == len(set(kioku.__all__))


def test_every_public_name_resolves_and_is_documented() -> None:
    for name in kioku.__all__:
        value = getattr(kioku, name)
        if name != "__version__":
            assert value.__doc__, f"kioku.{name} has no docstring"


def test_every_error_is_a_kioku_error() -> None:
    for name in kioku.__all__:
        value = getattr(kioku, name)
        if isinstance(value, type) and name.endswith("Error"):
            assert issubclass(value, kioku.KiokuError), name


def test_kioku_methods_are_documented() -> None:
    public = [n for n in dir(kioku.Kioku) if not n.startswith("_")]
    missing = [n for n in public if not getattr(kioku.Kioku, n).__doc__]
    assert missing == [], missing
