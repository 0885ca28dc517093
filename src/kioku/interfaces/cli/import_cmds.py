"""``kioku import``: turns, an export, and other tools' memories read into your scope."""

from __future__ import annotations

from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

import click

from kioku.core.sanitize import for_terminal
from kioku.interfaces.cli.render import echo_json
from kioku.interfaces.cli.state import CliState

if TYPE_CHECKING:
    from kioku.service.remember.workers import Workers

__all__ = ["COMMANDS"]

FORMATS: Final = ("jsonl", "files", "json", "chatgpt", "mem0", "claude-md", "markdown")


def _warn(message: str) -> None:
    click.echo(f"kioku: warning: {message}", err=True)


def _counts(report: dict[str, Any]) -> str:
    return (
        f"{report['episodes']} episodes, {report['knowledge']} knowledge, "
        f"{report['procedures']} procedures"
    )


def _print_report(report: dict[str, Any]) -> None:
    """One line of what an import of another tool's data did (or would do)."""
    extra = (f", {report['duplicates']} duplicate(s)" if report["duplicates"] else "") + (
        f", {report['ignored']} item(s) of the source left out" if report["ignored"] else ""
    )
    if not report["dry_run"]:
        click.echo(
            f"imported {report['created']} ({_counts(report)}), "
            f"skipped {report['skipped']} already stored{extra}"
        )
        return
    click.echo(
        f"dry run: would import {report['created']} ({_counts(report)}), "
        f"skip {report['skipped']} already stored{extra}; nothing was written"
    )
    for item in report["sample"]:
        at = item["at"] or "now"
        click.echo(f"  {item['kind']:<9} {at}  {for_terminal(item['title'])}")
    if report["created"] > len(report["sample"]):
        click.echo(f"  ... and {report['created'] - len(report['sample'])} more")


def _format(source_format: str | None, layout: str | None) -> str:
    if source_format and layout and source_format != layout:
        raise click.UsageError(f"--from {source_format} and --layout {layout} disagree")
    return source_format or layout or "jsonl"


def _workers(ctx: click.Context, param: click.Parameter, value: str | None) -> Workers | None:
    """``--workers``: "auto" or a number of processes, checked as ``ingest.workers`` is."""
    from kioku.config.validate import validate_config
    from kioku.errors import ConfigError

    if value is None:
        return None
    given: object = int(value) if value.strip().lstrip("+-").isdigit() else value
    try:
        workers: Workers = validate_config({"ingest": {"workers": given}}).ingest.workers
    except ConfigError as exc:
        raise click.BadParameter(f"{value!r} is not allowed: expected {exc.allowed}") from None
    return workers


@click.command("import")
@click.argument("source", type=click.Path(allow_dash=True))
@click.option(
    "--from",
    "source_format",
    type=click.Choice(FORMATS),
    help="What SOURCE is (default jsonl); see above.",
)
@click.option(
    "--layout",
    type=click.Choice(["jsonl", "files"]),
    help="The same as --from, for jsonl and files (kept for scripts).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Read and check SOURCE, report what would be imported with a sample; write nothing.",
)
@click.option(
    "--skip-invalid",
    is_flag=True,
    help="jsonl: import the valid lines and list the invalid ones (default: import nothing).",
)
@click.option(
    "--workers",
    callback=_workers,
    metavar="N|auto",
    help="Processes that prepare the turns (this one included; 0 or 1: this one alone); "
    "default ingest.workers.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_obj
def import_cmd(
    state: CliState,
    source: str,
    source_format: str | None,
    layout: str | None,
    dry_run: bool,
    skip_invalid: bool,
    workers: Workers | None,
    as_json: bool,
) -> None:
    """Import SOURCE into your scope (--user/--agent); importing it again adds nothing.

    \b
    --from jsonl      a file (or -) of turns, one JSON object a line (the default)
    --from files      a directory written by `kioku export --format files`
    --from json       a file written by `kioku export --format json`
    --from chatgpt    a ChatGPT data export: conversations.json (or its folder)
    --from mem0       mem0's history database (history.db) or a JSON list of its memories
    --from claude-md  Claude Code memory: CLAUDE.md, CLAUDE.local.md, .claude/rules/*.md,
                      an auto memory directory (MEMORY.md and its topic files), or a
                      project directory holding them
    --from markdown   a directory of Markdown notes (or one note)

    Past Claude Code sessions (their transcripts) are read by `kioku ingest`.

    jsonl: each line is {"user": ..., "assistant": ..., "at": ISO, "session": ID,
    "source_id": ID} (only "user" is required; "at" without an offset is local time, from
    1970 to a day ahead). Lines whose source_id is already stored are skipped, so an import
    can be repeated or resumed safely; a turn already stored as it is counts as a
    duplicate. The whole file is checked first: if a line is invalid nothing is imported,
    every invalid line is listed with its number and exit status is 2. With --skip-invalid
    the valid lines are imported and the invalid ones listed (on stderr, and in --json).

    files, json: the memories of the export (with their kept originals and the activity
    log) are added. Memories whose id is already stored are skipped; vectors are computed again with
    the configured embedder.

    chatgpt: each user message and the answer after it become one turn, remembered at the
    message's time in the session chatgpt:<conversation id>; only the branch the
    conversation ended on is read. mem0: each memory (its latest value; deleted ones are
    left out) becomes a knowledge item at its created time. claude-md and markdown: each
    bullet or paragraph (claude-md) or each note or top-level section (markdown) becomes
    a knowledge item, and a numbered list a procedure; a note's time is its front matter
    date, else the file's modification time.

    Every item gets a source id from the format and its place in SOURCE (and a digest of
    its text where SOURCE has no id for it); items already stored, or erased, are skipped.
    SOURCE is checked whole before anything is written: a problem names the file and the
    place in it, nothing is imported and exit status is 2.

    Turns (jsonl, chatgpt) are analysed and embedded by --workers processes, this one and
    worker processes, with the offline analyzer and embedder; what is stored is the same
    whatever their number. "auto" (the default of ingest.workers) uses one per CPU for an
    import of 200 turns or more (400 where the workers cannot be forked).
    """
    chosen = _format(source_format, layout)
    if skip_invalid and chosen != "jsonl":
        raise click.UsageError(f"--skip-invalid is for --from jsonl: {chosen} imports whole")
    if chosen == "jsonl":
        _import_jsonl(
            state,
            source,
            skip_invalid=skip_invalid,
            dry_run=dry_run,
            as_json=as_json,
            workers=workers,
        )
        return
    if source == "-":
        raise click.UsageError(f"--from {chosen} reads a file or directory, not stdin")
    if chosen in ("files", "json") and not dry_run:
        from kioku.interfaces.cli.mirror_cmds import import_files_layout

        import_files_layout(state, source, as_json=as_json, document=chosen == "json")
        return
    with state.open(on_warning=_warn, create=not dry_run) as kioku:
        if chosen in ("files", "json"):
            report = _export_dry_run(kioku, Path(source), chosen)
        else:
            from kioku.service.importers import apply_plan, read_source

            plan = read_source(chosen, Path(source), tz=kioku.clock.tz, now=kioku.clock.now())
            report = apply_plan(kioku, plan, dry_run=dry_run, workers=workers).as_dict()
        if dry_run:
            state.opened = False  # nothing was written: no reason to start a batch
    if as_json:
        echo_json(report)
    else:
        _print_report(report)


def _export_dry_run(kioku: Any, source: Path, fmt: str) -> dict[str, Any]:
    """What ``--from files|json`` would import: the export checked whole, its memories
    counted."""
    from kioku.core.model import Kind
    from kioku.core.timefmt import format_ts
    from kioku.errors import HomeNotFoundError
    from kioku.service.mirror import read_mirror
    from kioku.service.mirror.import_json import read_json_export

    read = read_json_export if fmt == "json" else read_mirror
    mirror = read(source, categories=kioku.config.categories, tz=kioku.clock.tz)
    ids = sorted(p.memory.id for p in mirror.memories)
    try:
        stored = {m.id for m in kioku.store.get_many(ids)}
    except HomeNotFoundError:
        stored = set()
    fresh = [p.memory for p in mirror.memories if p.memory.id not in stored]
    kinds = {kind: sum(1 for m in fresh if m.kind is kind) for kind in Kind}
    return {
        "format": fmt,
        "dry_run": True,
        "created": len(fresh),
        "episodes": kinds[Kind.EPISODE],
        "knowledge": kinds[Kind.KNOWLEDGE],
        "procedures": kinds[Kind.PROCEDURE],
        "profiles": kinds[Kind.PROFILE],
        "skipped": len(stored),
        "duplicates": 0,
        "ignored": 0,
        "sample": [
            {"kind": m.kind.value, "at": format_ts(m.created), "title": m.trigger, "id": m.id}
            for m in fresh[:5]
        ],
    }


def _import_jsonl(
    state: CliState,
    source: str,
    *,
    skip_invalid: bool,
    dry_run: bool,
    as_json: bool,
    workers: Workers | None,
) -> None:
    from kioku.service.remember.imports import import_turns, read_import

    ctx = click.get_current_context()
    param = next(p for p in ctx.command.params if p.name == "source")
    stream: IO[bytes] = click.File("rb").convert(source, param, ctx)
    data = stream.read()
    report: dict[str, Any] | None = None
    with state.open(on_warning=_warn, create=not dry_run) as kioku:
        plan = read_import(data, tz=kioku.clock.tz, now=kioku.clock.now())
        invalid = [{"line": i.line, "error": i.error} for i in plan.invalid]
        refused = bool(invalid) and not skip_invalid
        if refused or dry_run:
            state.opened = False  # nothing was written: no reason to start a batch
            imported = skipped = duplicates = 0
            if dry_run and not refused:
                from kioku.service.importers import ImportPlan, apply_plan

                whole = ImportPlan("jsonl", turns=plan.turns)
                report = apply_plan(kioku, whole, dry_run=True).as_dict()
        else:
            result = import_turns(kioku, plan.turns, workers=workers)
            imported, skipped, duplicates = result.imported, result.skipped, result.duplicates
    if report is not None:
        report["invalid"] = invalid
        if as_json:
            echo_json(report)
        else:
            _print_report(report)
    elif as_json:
        echo_json(
            {
                "imported": imported,
                "skipped": skipped,
                "duplicates": duplicates,
                "invalid": invalid,
                "errors": [i["error"] for i in invalid],
            }
        )
    elif not refused:
        click.echo(
            f"imported {imported}, skipped {skipped} already stored"
            + (f", {duplicates} duplicate(s)" if duplicates else "")
            + (f", {len(invalid)} invalid line(s) left out" if invalid else "")
        )
    shown = 50
    for item in invalid[:shown]:
        click.echo(f"kioku: {'warning' if skip_invalid else 'error'}: {item['error']}", err=True)
    if len(invalid) > shown:
        click.echo(f"kioku: ... and {len(invalid) - shown} more invalid line(s)", err=True)
    if refused:
        valid = len(plan.turns)
        click.echo(
            f"kioku: error: {len(invalid)} invalid line(s), nothing was imported; fix them, "
            f"or pass --skip-invalid to import the {valid} valid line(s)",
            err=True,
        )
        raise click.exceptions.Exit(2)


COMMANDS = [import_cmd]
