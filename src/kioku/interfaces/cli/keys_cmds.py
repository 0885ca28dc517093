"""API keys of the server: ``kioku keys create|list|revoke``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click

from kioku.core.timefmt import format_ts
from kioku.interfaces.cli.render import echo_json, plain, table
from kioku.interfaces.cli.state import CliState
from kioku.ports.store_records import ApiKey
from kioku.service import keys

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _when(moment: datetime | None) -> str | None:
    return None if moment is None else format_ts(moment)


def _as_dict(key: ApiKey) -> dict[str, Any]:
    """A key as shown: never its hash."""
    return {
        "id": key.id,
        "name": key.name,
        "user_id": key.user_id,
        "agent_id": key.agent_id,
        "rights": key.rights,
        "created": _when(key.created_at),
        "last_used": _when(key.last_used_at),
        "revoked": _when(key.revoked_at),
    }


@click.group("keys")
def keys_group() -> None:
    """API keys of the server: each grants read or read-write on one owner scope.

    A key is shown once, when it is made; the home's database keeps only its SHA-256.
    """


@keys_group.command("create")
@click.argument("name")
@click.option("--key-user", metavar="ID", help="Owner the key grants (default: --user).")
@click.option("--key-agent", metavar="ID", help="Agent the key grants (default: --agent).")
@click.option(
    "--rights",
    type=click.Choice(keys.RIGHTS),
    default="read-write",
    show_default=True,
    help="What the key may do in its scope.",
)
@json_option
@click.pass_obj
def create_cmd(
    state: CliState,
    name: str,
    key_user: str | None,
    key_agent: str | None,
    rights: str,
    as_json: bool,
) -> None:
    """Make a key named NAME and print it once: it is not shown again."""
    with state.open() as kioku:
        user_id = kioku.user_id if key_user is None else key_user
        agent_id = kioku.agent_id if key_agent is None else key_agent
        key, secret = keys.create_key(kioku, name, user_id, agent_id, rights)
    if as_json:
        echo_json({**_as_dict(key), "key": secret})
    else:
        click.echo(secret)
    click.echo(
        f"API key {key.id} ({key.rights} on {plain(key.user_id)}/{plain(key.agent_id)}): "
        "copy it now, it is not shown again",
        err=True,
    )


@keys_group.command("list")
@click.option("--all", "include_revoked", is_flag=True, help="Include revoked keys.")
@json_option
@click.pass_obj
def list_cmd(state: CliState, include_revoked: bool, as_json: bool) -> None:
    """List the keys in use (with --all, the revoked ones too); never a key itself."""
    with state.open() as kioku:
        found = keys.list_keys(kioku, include_revoked)
    if as_json:
        echo_json([_as_dict(k) for k in found])
        return
    if not found:
        click.echo("no API keys")
        return
    rows = [
        [
            k.id,
            k.name,
            f"{k.user_id}/{k.agent_id}",
            k.rights,
            format_ts(k.created_at)[:16].replace("T", " "),
            "-" if k.last_used_at is None else format_ts(k.last_used_at)[:16].replace("T", " "),
            "-" if k.revoked_at is None else format_ts(k.revoked_at)[:16].replace("T", " "),
        ]
        for k in found
    ]
    headers = ["ID", "NAME", "SCOPE", "RIGHTS", "CREATED", "LAST USED", "REVOKED"]
    click.echo(table(headers, rows))


@keys_group.command("revoke")
@click.argument("key_id", metavar="ID")
@click.pass_obj
def revoke_cmd(state: CliState, key_id: str) -> None:
    """Revoke key ID: it is refused from now on. Exit 2 for an id not in use."""
    with state.open() as kioku:
        key = keys.revoke_key(kioku, key_id)
    click.echo(f"revoked {key.id} ({plain(key.name)})")


COMMANDS = [keys_group]
