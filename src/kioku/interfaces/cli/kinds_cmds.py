"""Commands of deliberate recall and the kinds of memory: search, write, outcome."""

from __future__ import annotations

from typing import IO, Any

import click

from kioku.core.sanitize import for_terminal
from kioku.core.serialize import memory_to_dict
from kioku.core.timefmt import format_ts
from kioku.interfaces.cli.inputs import answer_jsonl, parse_time_option
from kioku.interfaces.cli.render import echo_json, excerpt, table
from kioku.interfaces.cli.state import CliState
from kioku.service.deliberate.search import Found, SearchResult

__all__ = ["COMMANDS"]

KIND_CHOICE = click.Choice(["episode", "knowledge", "procedure", "profile"])
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _found(item: Found, *, full: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": item.memory.id,
        "kind": item.memory.kind.value,
        "level": item.memory.current_level,
        "archived": item.memory.archived,
        "superseded": item.superseded,
        "score": round(item.score, 6),
        "similarity": round(item.similarity, 6),
        "lexical": round(item.lexical, 6),
        "matched_in": list(item.matched_in),
        "created": format_ts(item.memory.created),
        "trigger": item.memory.trigger,
        "content": item.memory.content,
    }
    if full:
        data["memory"] = memory_to_dict(item.memory)
    return data


def _result(result: SearchResult, *, full: bool) -> dict[str, Any]:
    return {
        "query": result.query,
        "kinds": list(result.kinds),
        "include_archive": result.include_archive,
        "results": [_found(i, full=full) for i in result.items],
        "midterm": [
            {
                "thread_id": h.thread_id,
                "turn": h.turn,
                "score": round(h.score, 4),
                "created": h.created.isoformat(),
                "expires": h.expires.isoformat(),
            }
            for h in result.midterm
        ],
    }


def _kinds_of(value: object, number: int) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise click.BadParameter(f'line {number}: "kinds" must be a kind or a list of kinds')


def _answer(state: CliState, queries: IO[str], defaults: dict[str, Any]) -> None:
    with state.open() as kioku:

        def answer(number: int, record: dict[str, Any]) -> dict[str, Any]:
            archive = record.get("include_archive", defaults["include_archive"])
            if not isinstance(archive, bool):
                raise click.BadParameter(f"line {number}: include_archive: true or false")
            result = kioku.search_memory(
                record["query"],
                kinds=_kinds_of(record.get("kinds", record.get("kind")), number)
                or defaults["kinds"],
                since=parse_time_option(record.get("since"), kioku.clock.tz, "since")
                or defaults["since"],
                until=parse_time_option(record.get("until"), kioku.clock.tz, "until")
                or defaults["until"],
                include_archive=archive,
                top_k=record.get("top_k", defaults["top_k"]),
            )
            return _result(result, full=False)

        answer_jsonl(queries, "query", ("since", "until"), answer)


@click.command("search")
@click.argument("query", required=False)
@click.option(
    "--kind", "kinds", type=KIND_CHOICE, multiple=True, help="Only this kind (repeatable)."
)
@click.option("--since", metavar="TIME", help="Only memories made at or after TIME (ISO 8601).")
@click.option("--until", metavar="TIME", help="Only memories made before TIME (ISO 8601).")
@click.option("--top-k", type=click.IntRange(1, 1000), default=10, show_default=True)
@click.option("--no-archive", is_flag=True, help="Leave archived memories out.")
@click.option(
    "--queries",
    type=click.File("r", encoding="utf-8", errors="replace"),
    help='A file (or -) of {"query": ..., "kinds": [...], "since": ..., "until": ..., '
    '"top_k": N} lines: one JSON answer per line.',
)
@json_option
@click.pass_obj
def search_cmd(
    state: CliState,
    query: str | None,
    kinds: tuple[str, ...],
    since: str | None,
    until: str | None,
    top_k: int,
    no_archive: bool,
    queries: IO[str] | None,
    as_json: bool,
) -> None:
    """Search every memory on purpose (deliberate recall).

    Unlike `kioku recall` (what priming injects, which fades with forgetting), a search
    reaches everything: every kind, the archive, and the original words of compressed
    episodes. Results are ranked by how well they match QUERY alone.
    """
    if (query is None) == (queries is None):
        raise click.UsageError("give either a QUERY or --queries FILE")
    with state.open() as kioku:
        tz = kioku.clock.tz
        start = parse_time_option(since, tz, "--since")
        end = parse_time_option(until, tz, "--until")
    if queries is not None:
        defaults = {
            "kinds": list(kinds) or None,
            "since": start,
            "until": end,
            "top_k": top_k,
            "include_archive": not no_archive,
        }
        _answer(state, queries, defaults)
        return
    assert query is not None
    with state.open() as kioku:
        result = kioku.search_memory(
            query,
            kinds=list(kinds) or None,
            since=start,
            until=end,
            include_archive=not no_archive,
            top_k=top_k,
        )
    if as_json:
        echo_json(_result(result, full=True))
        return
    if not result.items and not result.midterm:
        click.echo("nothing found", err=True)
        return
    for hit in result.midterm:
        click.echo(
            f"mid-term {hit.thread_id} (until {hit.expires.isoformat()[:16]}): "
            f"{excerpt(hit.turn, 90)}"
        )
    if not result.items:
        return
    rows = [
        [
            i.memory.id,
            i.memory.kind.value
            + (" (archived)" if i.memory.archived else "")
            + (" (superseded)" if i.superseded else ""),
            f"{i.score:.3f}",
            "+".join(i.matched_in) or "vector",
            excerpt(i.memory.trigger, 40),
            excerpt(i.memory.content, 60),
        ]
        for i in result.items
    ]
    click.echo(table(["ID", "KIND", "SCORE", "MATCHED", "TRIGGER", "CONTENT"], rows))


@click.command("write")
@click.argument("kind", type=click.Choice(["episode", "knowledge", "procedure"]))
@click.argument("text", required=False, default="")
@click.option("--title", default="", help="Subject (knowledge), name (procedure), what happened.")
@click.option("--description", default="", help="What a procedure is for (matched on).")
@click.option("--step", "steps", multiple=True, help="One step of a procedure (repeatable).")
@click.option("--confidence", type=click.FloatRange(0, 1), help="Confidence, 0-1.")
@click.option("--source", "sources", multiple=True, help="An episode id it came from.")
@click.option("--protected", is_flag=True, help="Protect it from forgetting.")
@json_option
@click.pass_obj
def write_cmd(
    state: CliState,
    kind: str,
    text: str,
    title: str,
    description: str,
    steps: tuple[str, ...],
    confidence: float | None,
    sources: tuple[str, ...],
    protected: bool,
    as_json: bool,
) -> None:
    """Remember on purpose: an episode, a knowledge item or a procedure.

    \b
      kioku write knowledge "The staging DB is db-stg-2" --title "staging database"
      kioku write procedure --title deploy --description "[deploy] release the web app" \\
          --step "run the tests" --step "tag the release" --step "push the tag"
    """
    with state.open() as kioku:
        memory = kioku.write_memory(
            kind,
            text,
            title=title,
            description=description,
            steps=steps,
            confidence=confidence,
            source_ids=sources,
            protected=protected,
        )
    if as_json:
        echo_json(memory_to_dict(memory))
    else:
        click.echo(memory.id)


@click.command("outcome")
@click.argument("memory_id", metavar="ID")
@click.argument("result", type=click.Choice(["success", "failure"]))
@json_option
@click.pass_obj
def outcome_cmd(state: CliState, memory_id: str, result: str, as_json: bool) -> None:
    """Report that following procedure ID succeeded or failed; its confidence follows
    (successes / max(1, successes + failures))."""
    with state.open() as kioku:
        memory = kioku.report_procedure_outcome(memory_id, result == "success")
    if as_json:
        echo_json(memory_to_dict(memory))
        return
    details = memory_to_dict(memory)["details"] or {}
    click.echo(
        f"{for_terminal(memory.id)}: confidence {details.get('confidence', 0):.2f} "
        f"({details.get('success_count', 0)} success, {details.get('failure_count', 0)} failure)"
    )


COMMANDS = (search_cmd, write_cmd, outcome_cmd)
