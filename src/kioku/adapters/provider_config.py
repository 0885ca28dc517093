"""What the ``[llm]`` and ``[embedding]`` sections share: the provider's name and its API key.

Both sections name a provider (with a few accepted spellings) and take a key from ``api_key``,
else the variable ``api_key_env`` names, else the provider's usual variable. The errors name the
section's own keys, so a mistake is reported where it was made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kioku.errors import ConfigError

__all__ = ["MissingKeyError", "provider_name", "resolve_key"]


class MissingKeyError(ConfigError):
    """A hosted provider has no API key (or the variable named for it is unset)."""


def provider_name(
    section: str, raw: str, aliases: Mapping[str, str], known: Iterable[str], listed: str
) -> str:
    """``raw`` normalised (case, aliases); a :class:`ConfigError` on ``{section}.provider``
    listing ``listed`` when it is not one of ``known``."""
    name = raw.strip().lower()
    name = aliases.get(name, name)
    if name not in set(known):
        raise ConfigError(
            f"{section}.provider",
            raw,
            f"one of {listed}",
            hint=f"set {section}.provider to one of these (offline needs no key or network)",
        )
    return name


def resolve_key(
    section: str,
    api_key: str,
    api_key_env: str,
    env: Mapping[str, str],
    provider: str,
    key_variables: Mapping[str, str],
    label: str,
) -> str | None:
    """The key: ``api_key``, else the variable ``api_key_env`` names, else the provider's usual
    variable (hosted providers only, ``key_variables``). ``None`` for a local server without one.

    A hosted provider without a key, or a named variable that is unset, is a
    :class:`MissingKeyError` on ``{section}.api_key_env`` naming the variable to set (never
    the key).
    """
    if api_key.strip():
        return api_key.strip()
    named = api_key_env.strip()
    variable = named or key_variables.get(provider, "")
    key = env.get(variable, "").strip() if variable else ""
    if key:
        return key
    if named or provider in key_variables:
        raise MissingKeyError(
            f"{section}.api_key_env",
            api_key_env,
            f"an environment variable that holds the {label} API key",
            hint=(
                f"set {variable} in the environment (or name another variable in "
                f"{section}.api_key_env, or set {section}.api_key)"
            ),
        )
    return None
