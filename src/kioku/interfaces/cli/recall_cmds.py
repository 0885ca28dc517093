"""Commands for recall: recall (one query or a file of them), import, reembed."""

from __future__ import annotations

import json
import sys
from typing import IO, Any

import click

from kioku.core.serialize import memory_to_dict
from kioku.errors import KiokuError
from kioku.interfaces.cli.inputs import parse_time_option, read_jsonl
from kioku.interfaces.cli.render import echo_json, table
from kioku.interfaces.cli.state import CliState
from kioku.service.recall import Recalled, RecallResult

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _warn(message: str) -> None:
    click.echo(f"kioku: warning: {message}", err=True)


def _components(item: Recalled) -> dict[str, Any]:
    return {
        "similarity": round(item.similarity, 6),
        "lexical": round(item.lexical, 6),
        "context": round(item.context, 6),
        "relevance": round(item.relevance, 6),
        "recency": round(item.recency, 6),
        "category_factor": round(item.category_factor, 6),
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
    as_json: bool,
) -> None:
    """Find the memories that matter for QUERY and print the <memories> block.

    Ranked by the spec's priority: retention × relevance × (1 + 0.1·recall_count) plus
    emotional resonance with the session's current emotion. Recalled memories are marked
    for reinforcement; archived ones are asked to be revived at the next batch.
    """
    if (query is None) == (queries is None):
        raise click.UsageError("give either a QUERY or --queries FILE")
    with state.open(on_warning=_warn) as kioku:
        if queries is not None:
            failures = 0
            for number, record in read_jsonl(queries, "query", ("at",)):
                if isinstance(record, str):
                    failures += 1
                    out: dict[str, Any] = {"line": number, "error": record}
                else:
                    try:
                        at = parse_time_option(
                            record.get("at"), kioku.clock.tz, f"--queries line {number}"
                        )
                        result = kioku.recall(
                            record["query"],
                            top_k=top_k,
                            session_id=session_id,
                            mark=not no_mark,
                            at=at,
                        )
                        out = {"line": number, **_result_json(result, full=False)}
                        out.pop("block")
                    except (KiokuError, click.BadParameter) as exc:
                        failures += 1
                        out = {"line": number, "error": str(exc)}
                    if "id" in record:
                        out["id"] = record["id"]
                sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
            if failures:
                click.echo(f"kioku: {failures} line(s) could not be answered", err=True)
                raise click.exceptions.Exit(1)
            return
        assert query is not None
        result = kioku.recall(query, top_k=top_k, session_id=session_id, mark=not no_mark)
    if as_json:
        echo_json(_result_json(result, full=True))
        return
    if not result.items:
        click.echo("no memories recalled", err=True)
        return
    click.echo(result.block)
    if explain:
        rows = [
            [
                i.memory.id + (" (archived)" if i.archived else "") + (" ←rel" if i.via else ""),
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
            "REL = min(1, match of SIM and LEX + CTX) × recency × category; "
            "BASE = RETENTION × REL × RECALL×; FINAL = BASE + RESON·α·RET"
        )


@click.command("import")
@click.argument("source", type=click.File("r", encoding="utf-8", errors="replace"))
@json_option
@click.pass_obj
def import_cmd(state: CliState, source: IO[str], as_json: bool) -> None:
    """Remember one conversation turn per line of SOURCE (a JSONL file, or - for stdin).

    Each line: {"user": ..., "assistant": ..., "at": ISO, "session": ID, "source_id": ID}
    (only "user" is required). Lines whose source_id is already stored are skipped, so an
    import can be repeated or resumed safely.
    """
    lines = [line for line in source if line.strip()]
    imported = skipped = 0
    errors: list[str] = []
    with state.open(on_warning=_warn) as kioku:
        known = kioku.known_source_ids()
        show = not as_json and sys.stderr.isatty()
        with click.progressbar(lines, label="importing", file=sys.stderr, hidden=not show) as bar:
            for number, line in enumerate(bar, start=1):
                try:
                    record = json.loads(line)
                    if not isinstance(record, dict) or not isinstance(record.get("user"), str):
                        raise ValueError('an object with a "user" string is required')
                    source_id = record.get("source_id")
                    if source_id is not None and str(source_id) in known:
                        skipped += 1
                        continue
                    at = parse_time_option(record.get("at"), kioku.clock.tz, f"line {number}")
                    kioku.remember_turn(
                        record["user"],
                        str(record.get("assistant") or ""),
                        at=at,
                        session_id=record.get("session"),
                        source_ids=[str(source_id)] if source_id is not None else [],
                        source_timestamps=[at] if at is not None else [],
                    )
                    if source_id is not None:
                        known.add(str(source_id))
                    imported += 1
                except (ValueError, KiokuError, click.BadParameter) as exc:
                    errors.append(f"line {number}: {exc}")
    if as_json:
        echo_json({"imported": imported, "skipped": skipped, "errors": errors})
    else:
        click.echo(f"imported {imported}, skipped {skipped} already stored, {len(errors)} error(s)")
        for error in errors[:20]:
            click.echo(f"  {error}", err=True)
    if errors:
        raise click.exceptions.Exit(1)


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


COMMANDS = [recall_cmd, import_cmd, reembed_cmd]
