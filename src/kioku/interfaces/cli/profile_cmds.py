"""``kioku profile``: show, correct and erase what kioku knows about a person."""

from __future__ import annotations

import click

from kioku.core.kinds import ProfileDetails
from kioku.core.sanitize import for_terminal
from kioku.core.serialize import memory_to_dict
from kioku.interfaces.cli.render import echo_json
from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS"]


def _pairs(values: tuple[str, ...]) -> list[tuple[str, str]]:
    out = []
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{value!r} is not KEY=VALUE", param_hint="--set")
        out.append((key.strip(), rest.strip()))
    return out


def _show(details: ProfileDetails, memory_id: str) -> None:
    click.echo(f"{for_terminal(details.person)}  ({memory_id})")
    if details.aliases:
        click.echo(f"  also called  {for_terminal(', '.join(details.aliases))}")
    for fact in details.facts:
        said = f", {len(fact.sources)} episode(s)" if fact.sources else ", set by hand"
        click.echo(f"  {fact.key:<11}  {for_terminal(fact.value)}  ({fact.confidence:.2f}{said})")
    for pref in sorted(details.preferences, key=lambda p: (-p.count, p.topic)):
        verb = "likes" if pref.polarity > 0 else "dislikes"
        click.echo(f"  {verb:<11}  {for_terminal(pref.value)}  (×{pref.count})")
    if details.mentions:
        said = ", ".join(f"{for_terminal(s)} ×{n}" for s, n in details.mentions)
        click.echo(f"  mentioned by {said}")


@click.command("profile")
@click.argument("person", required=False)
@click.option("--set", "facts", multiple=True, metavar="KEY=VALUE", help="Set a fact.")
@click.option("--remove-fact", multiple=True, metavar="KEY", help="Remove a fact.")
@click.option("--like", "likes", multiple=True, metavar="TOPIC", help="Add a like.")
@click.option("--dislike", "dislikes", multiple=True, metavar="TOPIC", help="Add a dislike.")
@click.option("--remove-preference", multiple=True, metavar="TOPIC", help="Remove a preference.")
@click.option("--alias", "aliases", multiple=True, metavar="NAME", help="Another name for them.")
@click.option("--erase", is_flag=True, help="Erase the profile (its memory, as `kioku forget`).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_obj
def profile_cmd(
    state: CliState,
    person: str | None,
    facts: tuple[str, ...],
    remove_fact: tuple[str, ...],
    likes: tuple[str, ...],
    dislikes: tuple[str, ...],
    remove_preference: tuple[str, ...],
    aliases: tuple[str, ...],
    erase: bool,
    as_json: bool,
) -> None:
    """Show what kioku knows about PERSON (default: every profile), or correct it.

    Profiles are learned from what people say about themselves ("I live in Osaka",
    「寿司が好き」): facts with the episodes they came from, likes and dislikes with how often
    they were said, and how often each speaker mentioned the person. They never fade.
    Facts: name, residence, origin, occupation, employer, age, birthday, family, pet,
    language, allergy, diet.
    """
    editing = any((facts, remove_fact, likes, dislikes, remove_preference, aliases))
    if (editing or erase) and person is None:
        raise click.UsageError("name the PERSON whose profile to change")
    if editing and erase:
        raise click.UsageError("--erase cannot be combined with changes")
    with state.open() as kioku:
        if erase:
            assert person is not None
            target = kioku.profile(person)
            kioku.forget(target.id)
            click.echo(f"erased the profile of {for_terminal(person)} ({target.id})")
            return
        if editing:
            assert person is not None
            found = [
                kioku.edit_profile(
                    person,
                    facts=_pairs(facts),
                    remove_facts=remove_fact,
                    likes=likes,
                    dislikes=dislikes,
                    remove_preferences=remove_preference,
                    aliases=aliases,
                )
            ]
        elif person is not None:
            found = [kioku.profile(person)]
        else:
            found = kioku.profiles()
    if as_json:
        data = [memory_to_dict(m) for m in found]
        echo_json(data[0] if person is not None else data)
        return
    if not found:
        click.echo("no profiles yet", err=True)
        return
    for memory in found:
        if isinstance(memory.details, ProfileDetails):
            _show(memory.details, memory.id)


COMMANDS = (profile_cmd,)
