"""Commands for recall: recall (one query or a file of them), reembed."""

from __future__ import annotations

import sys
from typing import IO, Any

import click

from kioku.core.sanitize import for_terminal
from kioku.core.serialize import memory_to_dict
from kioku.interfaces.cli.inputs import answer_jsonl, parse_time_option
from kioku.interfaces.cli.render import echo_json, table
from kioku.interfaces.cli.state import CliState
from kioku.service.recall.results import Recalled, RecallResult

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _warn(message: str) -> None:
    click.echo(f"kioku: warning: {message}", err=True)


def _components(item: Recalled) -> dict[str, Any]:
    return {
        "coverage": round(item.coverage, 6),
        "similarity": round(item.similarity, 6),
        "lexical": round(item.lexical, 6),
        "context": round(item.context, 6),
        "relevance": round(item.relevance, 6),
        "recency": round(item.recency, 6),
        "category_factor": round(item.category_factor, 6),
        "coverage_factor": round(item.coverage_factor, 6),
        "adjusted_relevance": round(item.adjusted_relevance, 6),
        "retention": round(item.retention, 6),
        "recall_weight": round(item.recall_weight, 6),
        "base": round(item.base, 6),
        "resonance": round(item.resonance, 6),
        "resonance_term": round(item.resonance_term, 6),
        "final": round(item.final, 6),
    }


def _item(item: Recalled, *, full: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": item.memory.id,
        "source_ids": list(item.memory.source_ids),
        "archived": item.archived,
        "via": item.via,
        "score": _components(item),
    }
    if full:
        data["memory"] = memory_to_dict(item.memory)
    return data


def _result_json(result: RecallResult, *, full: bool) -> dict[str, Any]:
    return {
        "query": result.query,
        "min_relevance": result.floor,
        "unknown_names": list(result.unknown_names),
        "limited": list(result.limited),
        "mood_shifted": result.mood_shifted,
        "results": [_item(i, full=full) for i in result.items],
        "block": result.block,
    }


@click.command("recall")
@click.argument("query", required=False)
@click.option(
    "--top-k", type=click.IntRange(1, 1000), help="How many memories (default from config)."
)
@click.option("--session", "session_id", metavar="ID", help="Carry this session's emotion.")
@click.option("--explain", is_flag=True, help="Show every component of each score.")
@click.option(
    "--queries",
    type=click.File("r", encoding="utf-8", errors="replace"),
    help='A file (or -) of {"query": ..., "at": ...} lines: one JSON result per line.',
)
@click.option("--no-mark", is_flag=True, help="Do not mark the memories as recalled.")
@click.option(
    "--mood-shift/--no-mood-shift",
    default=None,
    help="Turn the mood shift on or off for this recall (default: [mood] shift): in a "
    "negative session mood, resonance favours positive memories.",
)
@json_option
@click.pass_obj
def recall_cmd(
    state: CliState,
    query: str | None,
    top_k: int | None,
    session_id: str | None,
    explain: bool,
    queries: IO[str] | None,
    no_mark: bool,
    mood_shift: bool | None,
    as_json: bool,
) -> None:
    """Find the memories that matter for QUERY and print the <memories> block.

    A memory qualifies only by its relevance to QUERY: the share of the query's terms it
    holds, weighted by how rare each is, at least [retrieval] min_relevance; and when QUERY
    names people, places or things, at least one of them must be known to some memory
    ([retrieval] require_known_names). The turns around
    a qualified memory and its related memories come along with it. Qualified memories are
    ranked by the spec's priority: retention × relevance × (1 + 0.1·recall_count) plus
    emotional resonance with the session's current emotion, which can reorder them but never
    let an unrelated memory in; a query about nothing remembered prints nothing. Recalled
    memories are marked for reinforcement; archived ones are asked to be revived at the
    next batch.
    """
    if (query is None) == (queries is None):
        raise click.UsageError("give either a QUERY or --queries FILE")
    with state.open(on_warning=_warn) as kioku:
        if queries is not None:

            def answer(number: int, record: dict[str, Any]) -> dict[str, Any]:
                at = parse_time_option(record.get("at"), kioku.clock.tz, f"--queries line {number}")
                result = kioku.recall(
                    record["query"],
                    top_k=top_k,
                    session_id=session_id,
                    mark=not no_mark,
                    at=at,
                    mood_shift=mood_shift,
                )
                out = _result_json(result, full=False)
                out.pop("block")
                return out

            answer_jsonl(queries, "query", ("at",), answer)
            return
        assert query is not None
        result = kioku.recall(
            query, top_k=top_k, session_id=session_id, mark=not no_mark, mood_shift=mood_shift
        )
    if as_json:
        echo_json(_result_json(result, full=True))
        return
    if not result.items:
        click.echo("no memories recalled", err=True)
        if explain and result.unknown_names:
            names = ", ".join(for_terminal(n) for n in result.unknown_names)
            click.echo(
                f"the query names {names}, and no memory mentions any of them "
                "([retrieval] require_known_names)",
                err=True,
            )
        elif explain:
            click.echo(
                f"nothing holds enough of the query: a memory needs COVER ≥ "
                f"{result.floor:g} ([retrieval] min_relevance)",
                err=True,
            )
        return
    click.echo(result.block)
    if explain:
        if result.limited:
            click.echo(
                f"mood limiter: {len(result.limited)} negative intense memor"
                f"{'y' if len(result.limited) == 1 else 'ies'} ranked down "
                f"({', '.join(result.limited)}; [mood] limiter)",
                err=True,
            )
        if result.mood_shifted:
            click.echo(
                "mood shift: the session's mood is negative; resonance favoured positive memories",
                err=True,
            )
        rows = [
            [
                i.memory.id + (" (archived)" if i.archived else ""),
                _why(i, result.floor),
                f"{i.coverage:.3f}",
                f"{i.similarity:.3f}",
                f"{i.lexical:.3f}",
                f"{i.context:.3f}",
                f"{i.adjusted_relevance:.3f}",
                f"{i.retention:.1f}",
                f"{i.recall_weight:.2f}",
                f"{i.base:.2f}",
                f"{i.resonance:.2f}",
                f"{i.resonance_term:.2f}",
                f"{i.final:.2f}",
            ]
            for i in result.items
        ]
        click.echo("")
        click.echo(
            table(
                [
                    "ID",
                    "WHY",
                    "COVER",
                    "SIM",
                    "LEX",
                    "CTX",
                    "REL",
                    "RETENTION",
                    "RECALL×",
                    "BASE",
                    "RESON",
                    "RESON·α·RET",
                    "FINAL",
                ],
                rows,
            )
        )
        click.echo(
            f"WHY: match = COVER ≥ {result.floor:g} ([retrieval] min_relevance), the share of "
            "the query's terms the memory holds, weighted by rarity; context = a turn next to "
            "a match; relation = related to a match. Only a match qualifies a memory."
        )
        click.echo(
            "REL = min(1, match of SIM and LEX + CTX) × recency × category; "
            "BASE = RETENTION × REL × RECALL×; FINAL = BASE + RESON·α·RET"
        )


def _why(item: Recalled, floor: float) -> str:
    """Why a memory was recalled: it matches the query, or it came with one that does."""
    if item.via is not None:
        return item.via
    return "match" if item.coverage >= floor else "-"


@click.command("reembed")
@json_option
@click.pass_obj
def reembed_cmd(state: CliState, as_json: bool) -> None:
    """Rebuild vectors with the configured embedding model.

    Needed after changing [embedding]; until then recall only compares vectors of the
    current model and memories with another model's vector are found by lexical search.
    """
    with state.open(on_warning=_warn) as kioku:
        show = not as_json and sys.stderr.isatty()
        with click.progressbar(
            length=1, label="re-embedding", file=sys.stderr, hidden=not show
        ) as bar:

            def progress(done: int, total: int) -> None:
                bar.length = max(total, 1)
                bar.update(done - bar.pos)

            changed = kioku.reembed(progress)
        model = kioku.embedder.model_id
    if as_json:
        echo_json({"reembedded": changed, "model": model})
    else:
        click.echo(f"re-embedded {changed} memories with {model}")


COMMANDS = [recall_cmd, reembed_cmd]
