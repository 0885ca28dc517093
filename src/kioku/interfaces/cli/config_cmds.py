"""``kioku config show|check``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from kioku.config import config_to_dict, load_config
from kioku.config.store_url import URL_KEYS, mask_url
from kioku.interfaces.cli.render import echo_json
from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS", "SECRET_KEYS", "config_group"]

SECRET_KEYS = frozenset({"api_key"})
#: The last part of each URL setting's name ("url", "read_url"): masked where shown.
_URL_NAMES = frozenset(key.rsplit(".", 1)[-1] for key in URL_KEYS)


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict):
            out.extend(_flatten(value, dotted + "."))
        else:
            out.append((dotted, value))
    return out


def _redacted(data: dict[str, Any]) -> dict[str, Any]:
    """The same data with every non-empty secret replaced by ``***``."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            out[key] = _redacted(value)
        elif key in SECRET_KEYS and value:
            out[key] = "***"
        elif key in _URL_NAMES and isinstance(value, str) and value:
            out[key] = mask_url(value)  # the store's URLs: their password, not the rest
        else:
            out[key] = value
    return out


@click.group("config")
def config_group() -> None:
    """Show or check the configuration."""


@config_group.command("show")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_obj
def show_cmd(state: CliState, as_json: bool) -> None:
    """Print the effective configuration and where each value came from.

    Sources: the defaults, the config file ($KIOKU_HOME/config.toml or --config) and
    KIOKU_<SECTION>__<KEY> environment variables, in that order of precedence (last wins).
    """
    loaded = load_config(home=state.home, path=state.config_path)
    data = _redacted(config_to_dict(loaded.config))
    if as_json:
        echo_json(
            {
                "path": str(loaded.path) if loaded.path else None,
                "config": data,
                "sources": dict(loaded.sources),
            }
        )
        return
    click.echo(f"# config file: {loaded.path or 'none (defaults)'}")
    for key, value in _flatten(data):
        click.echo(f"{key} = {json.dumps(value, ensure_ascii=False)}  # {loaded.sources[key]}")


@config_group.command("check")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_obj
def check_cmd(state: CliState, path: Path | None, as_json: bool) -> None:
    """Validate a config file (default: the one in use) together with the environment.

    Exits 0 when it is valid, 2 with the offending key, value and allowed range when not.
    """
    loaded = load_config(home=state.home, path=path or state.config_path)
    where = str(loaded.path) if loaded.path else "defaults (no config file)"
    if as_json:
        echo_json({"ok": True, "path": str(loaded.path) if loaded.path else None})
    else:
        click.echo(f"ok: {where} is valid")


COMMANDS = (config_group,)
