"""kioku's configuration: frozen data read once, at the edge.

``load_config(home=...)`` applies defaults, then ``config.toml`` (or an explicit TOML/JSON
file), then ``KIOKU_<SECTION>__<KEY>`` environment overrides, validates the result into a
frozen :class:`Config` and records where every value came from. Importing this package
reads nothing and imports only the standard library.
"""

from __future__ import annotations

from kioku.config.loader import LoadedConfig, load_config
from kioku.config.render import config_to_dict, config_to_toml, default_config_toml
from kioku.config.schema import Config

TYPE_CHECKING = False
if TYPE_CHECKING:
    from kioku.config.validate import validate_config


def __getattr__(name: str) -> object:
    # the validator is imported on first use: loading a default configuration never needs it
    if name == "validate_config":
        from kioku.config.validate import validate_config

        return validate_config
    raise AttributeError(f"module 'kioku.config' has no attribute {name!r}")


__all__ = [
    "Config",
    "LoadedConfig",
    "config_to_dict",
    "config_to_toml",
    "default_config_toml",
    "load_config",
    "validate_config",
]
