"""Read the configuration once, at the edge: defaults → the file → the environment.

The file is TOML (``config.toml``), or JSON when its name ends in ``.json`` so the spec's
``config.json`` loads unchanged. Environment overrides are ``KIOKU_<SECTION>__<KEY>``
variables (names case-insensitive, ``__`` between levels), e.g.
``KIOKU_LEVELS__LEVEL1_THRESHOLD=60`` or ``KIOKU_RETENTION__DECAY_BY_CATEGORY__WORK__MAX=0.93``.
A value is read as a TOML value when it parses as one (``60``, ``0.93``, ``true``,
``"text"``) and as plain text otherwise; text keys always take the text as written.
``KIOKU_STORE_URL`` is a short name for ``KIOKU_STORE__URL`` (the PostgreSQL server), and
``KIOKU_STORE_READ_URL`` for ``KIOKU_STORE__READ_URL`` (its read replica).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from kioku.config.render import config_to_dict
from kioku.config.schema import Config
from kioku.errors import ConfigError
from kioku.records import Record

__all__ = ["DEFAULT_CONFIG_FILENAME", "ENV_PREFIX", "LoadedConfig", "load_config"]

DEFAULT_CONFIG_FILENAME = "config.toml"
ENV_PREFIX = "KIOKU_"
_FILE_KEY = "config_file"
#: Single-underscore names that are overrides too: variable → dotted key.
_ALIASES = {
    "KIOKU_STORE_URL": ("store", "url"),
    "KIOKU_STORE_READ_URL": ("store", "read_url"),
}
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def _toml() -> Any:
    """``tomllib``, imported when a file or an override needs it (a hook with neither
    does not pay for it)."""
    import tomllib

    return tomllib


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class LoadedConfig(Record):
    """The validated configuration and where each of its values came from."""

    config: Config
    #: The file actually read, or ``None`` when only defaults and the environment apply.
    path: Path | None
    #: Every dotted key → ``"default"``, ``"file:<path>"`` or ``"env:<VAR>"``.
    sources: Mapping[str, str]


def load_config(
    *, home: Path, path: Path | None = None, env: Mapping[str, str] | None = None
) -> LoadedConfig:
    """Load defaults, then ``path`` (or ``home/config.toml`` if it exists), then ``env``.

    ``env`` defaults to ``os.environ``. Raises :class:`~kioku.errors.ConfigError` for a
    missing explicit ``path``, an unreadable or malformed file, or an invalid value.
    """
    environ: Mapping[str, str] = os.environ if env is None else env
    file_path, raw = _read_file(home, path)
    origins: dict[str, str] = {}
    if file_path is not None:
        origins.update(dict.fromkeys(_leaf_keys(raw), f"file:{file_path}"))
    for parts, value, var in _env_overrides(environ):
        _assign(raw, parts, value)
        origins.update(dict.fromkeys(_leaf_keys(value, ".".join(parts)), f"env:{var}"))

    def source_of(key: str) -> str:
        if key in origins:
            return origins[key]
        parts = key.split(".")
        for i in range(len(parts) - 1, 0, -1):
            ancestor = ".".join(parts[:i])
            if ancestor in origins:
                return origins[ancestor]
        below = next((k for k in origins if k.startswith(key + ".")), None)
        return origins[below] if below else "default"

    if raw:
        from kioku.config.validate import validate_config

        config = validate_config(raw, source_of)
    else:
        config = Config()  # nothing set: the defaults, valid by construction (and tested so)
    sources = {key: origins.get(key, "default") for key in _leaf_keys(config_to_dict(config))}
    return LoadedConfig(config, file_path, MappingProxyType(sources))


# -- the file -------------------------------------------------------------------------------


def _read_file(home: Path, path: Path | None) -> tuple[Path | None, dict[str, Any]]:
    if path is None:
        path = home / DEFAULT_CONFIG_FILENAME
        if not path.exists():
            return None, {}
    elif not path.exists():
        raise ConfigError(
            _FILE_KEY,
            str(path),
            "an existing TOML file (or JSON, when the name ends in .json)",
            hint="check the path, or leave it out to use defaults",
        )
    source = f"file:{path}"
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        hint = exc.strerror or str(exc)
        raise ConfigError(
            _FILE_KEY, str(path), "a readable file", source=source, hint=hint
        ) from exc
    except UnicodeDecodeError as exc:
        hint = f"byte {exc.start} is not UTF-8: {exc.reason}"
        raise ConfigError(_FILE_KEY, str(path), "UTF-8 text", source=source, hint=hint) from exc
    if path.suffix.lower() == ".json":
        return path, _parse_json(text, path)
    return path, _parse_toml(text, path)


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return _toml().loads(text)  # type: ignore[no-any-return]
    except RecursionError:
        raise _unusable(path, "valid TOML", "arrays or tables nested too deeply") from None
    except _toml().TOMLDecodeError as exc:
        message = str(exc)
        found = _TOML_POSITION.search(message)
        if found:
            message = message[: found.start()]
            where = f"TOML syntax error at line {found[1]}, column {found[2]}"
        else:
            where = "TOML syntax error"
        raise ConfigError(
            _FILE_KEY, str(path), "valid TOML", source=f"file:{path}", hint=f"{where}: {message}"
        ) from exc
    except ValueError as exc:  # a number Python will not read, such as one of 5,000 digits
        raise _unusable(path, "valid TOML", _number_reason(exc)) from exc


def _number_reason(exc: ValueError) -> str:
    reason = str(exc).split(";")[0]
    return f"a value Python cannot read ({reason}); shorten or remove it"


def _unusable(path: Path, allowed: str, reason: str) -> ConfigError:
    """The error for a file that parses but holds what Python will not read."""
    return ConfigError(_FILE_KEY, str(path), allowed, source=f"file:{path}", hint=reason)


def _parse_json(text: str, path: Path) -> dict[str, Any]:
    source = f"file:{path}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        hint = f"JSON syntax error at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        raise ConfigError(_FILE_KEY, str(path), "valid JSON", source=source, hint=hint) from exc
    except ValueError as exc:  # a number Python will not read, such as one of 5,000 digits
        raise _unusable(path, "valid JSON", _number_reason(exc)) from exc
    except RecursionError:
        raise _unusable(path, "valid JSON", "arrays or objects nested too deeply") from None
    if not isinstance(data, dict):
        raise ConfigError(
            _FILE_KEY,
            str(path),
            "a JSON object of sections at the top level",
            source=source,
            hint=f"the file holds a {type(data).__name__}",
        )
    return data


# -- the environment ------------------------------------------------------------------------


def _env_overrides(env: Mapping[str, str]) -> list[tuple[tuple[str, ...], object, str]]:
    """``(key parts, parsed value, variable name)`` for every override, shallow keys first."""
    found: dict[tuple[str, ...], str] = {}
    for var in sorted(env):
        if not var.upper().startswith(ENV_PREFIX):
            continue
        rest = var[len(ENV_PREFIX) :]
        alias = _ALIASES.get(var.upper())
        if alias is None and "__" not in rest:
            continue  # KIOKU_HOME, KIOKU_CONFIG and friends are not overrides
        parts = alias or tuple(rest.lower().split("__"))
        if not all(parts):
            raise ConfigError(
                var,
                env[var],
                "a variable named KIOKU_<SECTION>__<KEY> (double underscore between levels)",
                source=f"env:{var}",
                hint="an empty level name means one underscore too many or too few",
            )
        if parts in found:
            from kioku.config.store_url import URL_KEYS, mask_url

            raise ConfigError(
                ".".join(parts),
                mask_url(env[var]) if ".".join(parts) in URL_KEYS else env[var],
                "a single environment variable per key",
                source=f"env:{var}",
                hint=f"{found[parts]} and {var} set the same key; unset one",
            )
        found[parts] = var
    ordered = sorted(found.items(), key=lambda item: (len(item[0]), item[1]))
    return [(parts, _parse_env_value(env[var], ".".join(parts)), var) for parts, var in ordered]


def _parse_env_value(text: str, dotted: str) -> object:
    if "\n" in text or "\r" in text:
        return text
    try:
        value = _toml().loads(f"v = {text}")["v"]
    except (ValueError, RecursionError):  # not a TOML value (TOMLDecodeError), or too large
        return text
    from kioku.config.validate import is_string_key

    if is_string_key(dotted) and not isinstance(value, str):
        return text  # a model named 3 or true is still a name
    return value


# -- nested dicts ---------------------------------------------------------------------------


def _assign(raw: dict[str, Any], parts: tuple[str, ...], value: object) -> None:
    """Set ``raw[p0][p1]...`` = ``value``, merging tables; the environment wins conflicts."""
    node = raw
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    last = parts[-1]
    if isinstance(value, dict) and isinstance(node.get(last), dict):
        for key, sub in value.items():
            _assign(node[last], (key,), sub)
    else:
        node[last] = value


def _leaf_keys(value: object, prefix: str | None = None) -> list[str]:
    """The dotted keys of every non-table value under ``value`` (a key may be empty: ``""``
    is a key TOML and JSON allow, and it still came from the file)."""
    if not isinstance(value, Mapping) or (prefix is not None and not value):
        return [prefix] if prefix is not None else []
    keys: list[str] = []
    for key, sub in value.items():
        keys += _leaf_keys(sub, f"{prefix}.{key}" if prefix is not None else str(key))
    return keys
