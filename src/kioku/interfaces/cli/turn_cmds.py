"""Commands on conversation turns: remember (analyse and store) and analyze (only analyse)."""

from __future__ import annotations

from typing import IO, Any

import click

from kioku.core.serialize import memory_to_dict
from kioku.errors import ValidationError
from kioku.interfaces.cli.inputs import answer_jsonl, parse_time_option
from kioku.interfaces.cli.render import echo_json, excerpt
from kioku.interfaces.cli.state import CliState
from kioku.ports.analyzer import Analysis

__all__ = ["COMMANDS", "analysis_to_dict"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def analysis_to_dict(analysis: Analysis) -> dict[str, Any]:
    """The analysis in the spec's LLM output format, plus protection, language and analyzer."""
    return {
        "emotional_intensity": analysis.intensity,
        "emotional_valence": analysis.valence.value,
        "emotional_arousal": analysis.arousal,
        "emotional_tags": list(analysis.tags),
        "category": analysis.category,
        "keywords": list(analysis.keywords),
        "trigger": analysis.trigger,
        "content": analysis.content,
        "protected": analysis.protected,
        "language": analysis.language,
        "analyzer": analysis.analyzer,
        "warnings": list(analysis.warnings),
    }


#: The option of ``remember`` that gave each field the service checks.
_TURN_FLAGS = {"user": "user", "assistant": "assistant", "at": "at", "session_id": "session"}


def _warn(message: str) -> None:
    click.echo(f"kioku: warning: {message}", err=True)


def _describe(analysis: Analysis) -> str:
    tags = ", ".join(analysis.tags) or "-"
    return (
        f"{analysis.category}, intensity {analysis.intensity}, "
        f"{analysis.valence.value} (arousal {analysis.arousal}), tags {tags}"
        + (", protected" if analysis.protected else "")
    )


@click.command("remember")
@click.option("--user", "user_text", required=True, help="What the user said.")
@click.option("--assistant", "assistant_text", default="", help="What the assistant replied.")
@click.option("--at", "at", metavar="ISO", help="When it was said (ISO 8601; default now).")
@click.option("--session", "session_id", metavar="ID", help="Session the turn belongs to.")
@json_option
@click.pass_obj
def remember_cmd(
    state: CliState,
    user_text: str,
    assistant_text: str,
    at: str | None,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Analyse one conversation turn and store it as a memory.

    A turn with no text (--user and --assistant both empty) is refused. The same turn
    remembered again (same text, session and time within a minute) is not stored twice:
    the memory stored before is printed, marked "already known".

    The configured analyzer (offline by default, or an LLM from [llm]) decides the
    emotion, category, keywords and protection. If an LLM provider fails, the offline
    analyzer stands in and a warning is printed: the turn is never lost.
    """
    with state.open(on_warning=_warn) as kioku:
        created = parse_time_option(at, kioku.clock.tz, "--at")
        try:
            remembered = kioku.remember_turn(
                user_text, assistant_text, at=created, session_id=session_id
            )
        except ValidationError as err:
            flag = _TURN_FLAGS.get(err.field)
            if flag:
                err.hint = f"{err.hint}; fix --{flag}" if err.hint else f"fix --{flag}"
            raise
    memory, analysis = remembered
    if as_json:
        data = memory_to_dict(memory)
        data["analysis"] = analysis_to_dict(analysis)
        data["already_known"] = remembered.known
        echo_json(data)
    elif remembered.known:
        click.echo(f"{memory.id}  already known: this turn was stored before, not stored again")
    else:
        click.echo(f"{memory.id}  {_describe(analysis)}")


@click.command("analyze")
@click.option("--user", "user_text", help="What the user said.")
@click.option("--assistant", "assistant_text", default="", help="What the assistant replied.")
@click.option(
    "--jsonl",
    "jsonl",
    type=click.File("r", encoding="utf-8", errors="replace"),
    help='A file (or - for stdin) of {"user": ..., "assistant": ...} lines: one result each.',
)
@json_option
@click.pass_obj
def analyze_cmd(
    state: CliState,
    user_text: str | None,
    assistant_text: str,
    jsonl: IO[str] | None,
    as_json: bool,
) -> None:
    """Show how a turn would be understood, without storing anything.

    With --jsonl, print one JSON result per input line, in order; a line that cannot be
    read gives {"line": N, "error": ...} and the command exits 1 at the end.
    """
    if (user_text is None) == (jsonl is None):
        raise click.UsageError("give either --user (and --assistant) or --jsonl FILE")
    with state.open(on_warning=_warn) as kioku:
        if user_text is not None:
            analysis = kioku.analyze(user_text, assistant_text)
            if as_json:
                echo_json(analysis_to_dict(analysis))
                return
            click.echo(_describe(analysis))
            click.echo(f"keywords: {', '.join(analysis.keywords) or '-'}")
            click.echo(f"trigger:  {excerpt(analysis.trigger, 200)}")
            click.echo(f"content:  {excerpt(analysis.content, 200)}")
            click.echo(f"language: {analysis.language}; analyzer: {analysis.analyzer}")
            return
        assert jsonl is not None

        def answer(_number: int, record: dict[str, Any]) -> dict[str, Any]:
            result = kioku.analyze(record.get("user", ""), record.get("assistant", ""))
            return analysis_to_dict(result)

        answer_jsonl(jsonl, "user", ("assistant",), answer, "analysed")


@click.command("compress")
@click.option("--trigger", required=True, help="The memory's trigger (what prompted it).")
@click.option("--content", required=True, help="The memory's content.")
@click.option(
    "--to",
    "level",
    type=click.IntRange(2, 3),
    default=2,
    show_default=True,
    help="2: a Level 1→2 summary; 3: Level 2→3 keywords.",
)
@json_option
@click.pass_obj
def compress_cmd(state: CliState, trigger: str, content: str, level: int, as_json: bool) -> None:
    """Show how the analyzer compresses a memory's text, without storing anything.

    This is what the nightly batch does when a memory's score falls to the next level.
    """
    with state.open(on_warning=_warn) as kioku:
        out = kioku.compress(trigger, content, level)
    before = len(trigger) + len(content)
    after = len(out.trigger) + len(out.content)
    reduction = 1 - after / before if before else 0.0
    if as_json:
        echo_json(
            {
                "level": level,
                "trigger": out.trigger,
                "content": out.content,
                "characters_before": before,
                "characters_after": after,
                "reduction": round(reduction, 4),
            }
        )
        return
    click.echo(f"trigger:  {out.trigger}")
    click.echo(f"content:  {out.content}")
    click.echo(f"{before} → {after} characters ({reduction:.0%} shorter)")


COMMANDS = [remember_cmd, analyze_cmd, compress_cmd]
