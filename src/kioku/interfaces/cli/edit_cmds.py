"""``kioku edit``: correct a memory's text, category, intensity, tags or keywords."""

from __future__ import annotations

import click

from kioku.core.model import ALL_TAGS
from kioku.core.serialize import memory_to_dict
from kioku.errors import ValidationError
from kioku.interfaces.cli.memory_cmds import _split, _with_flag_hint, json_option
from kioku.interfaces.cli.render import echo_json
from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS"]


@click.command("edit")
@click.argument("memory_id", metavar="ID")
@click.option("--trigger", default=None, help="The new trigger (what the memory is about).")
@click.option("--content", default=None, help="The new content.")
@click.option("--category", default=None, help="The new category.")
@click.option("--intensity", type=int, default=None, help="The new emotional intensity, 0-100.")
@click.option(
    "--tags",
    multiple=True,
    help=f"The new emotional tags, comma-separated or repeated ({', '.join(sorted(ALL_TAGS))}).",
)
@click.option("--keywords", multiple=True, help="The new keywords, comma-separated or repeated.")
@click.option("--no-tags", is_flag=True, help="Clear the emotional tags.")
@json_option
@click.pass_obj
def edit_cmd(
    state: CliState,
    memory_id: str,
    trigger: str | None,
    content: str | None,
    category: str | None,
    intensity: int | None,
    tags: tuple[str, ...],
    keywords: tuple[str, ...],
    no_tags: bool,
    as_json: bool,
) -> None:
    """Correct a memory of any kind but a profile: only the fields given change.

    The memory as it was is kept as a version (`kioku show ID` lists them), its words are
    indexed again and, when the text changes, it gets a new vector. Its id, time, level and
    retention stay; the next batch scores it with a new intensity. Profiles are corrected
    with `kioku profile`.

    \b
      kioku edit mem_0123 --content "the meeting moved to Friday"
      kioku edit mem_0123 --category work --intensity 70
    """
    if no_tags and tags:
        raise click.UsageError("give --tags or --no-tags, not both")
    new_tags = [] if no_tags else (_split(tags) if tags else None)
    try:
        with state.open() as kioku:
            memory = kioku.edit_memory(
                memory_id,
                trigger=trigger,
                content=content,
                category=category,
                intensity=intensity,
                tags=new_tags,
                keywords=_split(keywords) if keywords else None,
            )
    except ValidationError as err:
        raise _with_flag_hint(err) from None
    if as_json:
        echo_json(memory_to_dict(memory))
    else:
        click.echo(f"edited {memory.id}")


COMMANDS = [edit_cmd]
