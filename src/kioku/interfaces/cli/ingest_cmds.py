"""Reading conversations from elsewhere: ingest (Claude Code session transcripts)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kioku.interfaces.cli.render import echo_json
from kioku.interfaces.cli.state import CliState

if TYPE_CHECKING:
    from kioku.interfaces.claude_code.ingest import IngestResult
    from kioku.service.kioku import Kioku

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _warn(message: str) -> None:
    click.echo(f"kioku: warning: {message}", err=True)


def _result_dict(result: IngestResult) -> dict[str, Any]:
    return {
        "path": str(result.path),
        "session_id": result.session_id,
        "turns": result.turns,
        "added": result.added,
        "already": result.already,
        "skipped_lines": result.skipped_lines,
        "memory_ids": list(result.memory_ids),
    }


def _describe(result: IngestResult) -> str:
    return (
        f"{result.path}: added {result.added}, {result.already} already stored, "
        f"{result.skipped_lines} corrupt line(s) skipped"
    )


def _unreadable(path: Path, exc: OSError) -> str:
    reason = exc.strerror or type(exc).__name__
    return f"cannot read {path} ({reason}); check the path and its permissions"


@click.command("ingest")
@click.argument("paths", nargs=-1, metavar="[PATH.jsonl]...", type=click.Path(path_type=Path))
@click.option(
    "--session-id",
    metavar="ID",
    help="Session the turns belong to (default: the transcript's own session id).",
)
@click.option(
    "--claude-projects",
    "claude_projects",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[DIR]",
    help="Also every transcript DIR/*/*.jsonl (default DIR ~/.claude/projects).",
)
@click.option(
    "--retry",
    is_flag=True,
    help="Also ingest again the captured sessions the hooks could not store "
    "(HOME/inbox.dead.jsonl); each leaves that file once stored.",
)
@json_option
@click.pass_obj
def ingest_cmd(
    state: CliState,
    paths: tuple[Path, ...],
    session_id: str | None,
    claude_projects: str | None,
    retry: bool,
    as_json: bool,
) -> None:
    """Remember the conversation turns of Claude Code session transcripts (JSONL).

    One memory per turn (a user input and the assistant's reply), created at the time
    the user spoke. Slash commands and the replies to them, tool output, thinking,
    sub-agent and meta entries are left out; when a prompt was edited only the branch
    that was continued counts. Turns already stored are recognised by their source id
    (session id and turn id), so a transcript can be ingested again as it grows.

    Unreadable lines are skipped and reported. Exit 1 when a file cannot be read, or when
    --retry leaves captured sessions that still fail (`kioku doctor` shows them).
    """
    from kioku.interfaces.claude_code.ingest import ingest_transcript
    from kioku.interfaces.claude_code.transcripts import (
        default_claude_projects,
        find_claude_transcripts,
    )

    if not paths and claude_projects is None and not retry:
        raise click.UsageError("give a transcript PATH, --claude-projects [DIR] or --retry")
    files = list(paths)
    errors: list[str] = []
    if claude_projects is not None:
        root = Path(claude_projects).expanduser() if claude_projects else None
        shown = root if root is not None else default_claude_projects()
        if not shown.is_dir():
            errors.append(
                f"cannot read {shown} (no such folder); give the folder that holds Claude "
                "Code's project folders, by default ~/.claude/projects"
            )
        else:
            found = find_claude_transcripts(root)
            if not found and not as_json:
                click.echo(f"no transcripts found in {shown}", err=True)
            files.extend(found)
    if session_id is not None and len(files) > 1:
        raise click.UsageError("--session-id names the session of one transcript; give one PATH")
    if session_id is not None:
        from kioku.core.validate import check_provenance_id

        check_provenance_id("--session-id", session_id)  # before anything is written

    results: list[IngestResult] = []
    failed: list[dict[str, str]] = []
    with state.open(on_warning=_warn) as kioku:
        known = kioku.known_source_ids() if files else set()
        show = not as_json and claude_projects is not None and sys.stderr.isatty()
        with click.progressbar(files, label="ingesting", file=sys.stderr, hidden=not show) as bar:
            for path in bar:
                try:
                    result = ingest_transcript(kioku, path, session_id=session_id, known=known)
                except OSError as exc:
                    message = _unreadable(path, exc)
                    errors.append(message)
                    failed.append({"path": str(path), "error": message})
                    continue
                results.append(result)
                if not as_json and not show:
                    click.echo(_describe(result))
        retried = _retry(state, kioku, errors, as_json) if retry else None
    if show:
        for result in results:
            click.echo(_describe(result))
    totals = {
        key: sum(getattr(r, key) for r in results)
        for key in ("turns", "added", "already", "skipped_lines")
    }
    if as_json:
        echo_json(
            {
                "files": [_result_dict(r) for r in results] + failed,
                **totals,
                "errors": errors,
                **({"retry": retried} if retried is not None else {}),
            }
        )
    else:
        if (len(results) != 1 or errors) and (results or not retry):
            click.echo(
                f"ingested {len(results)} transcript(s): added {totals['added']}, "
                f"{totals['already']} already stored, "
                f"{totals['skipped_lines']} corrupt line(s) skipped, {len(errors)} error(s)"
            )
        for error in errors:
            click.echo(f"kioku: error: {error}", err=True)
    if errors:
        raise click.exceptions.Exit(1)


def _retry(state: CliState, kioku: Kioku, errors: list[str], as_json: bool) -> dict[str, Any]:
    """Replay the dead-letter file; what was done (failures are added to ``errors``)."""
    from kioku.interfaces.claude_code.inbox import retry_dead

    report = retry_dead(state.home, kioku)
    errors.extend(report.errors)
    if not as_json:
        left = f"; {report.left} still failing" if report.left else ""
        click.echo(
            f"retried {report.ingested + report.left} captured session(s): "
            f"{report.ingested} stored, {report.added} new memories{left}"
        )
    return {"ingested": report.ingested, "added": report.added, "left": report.left}


COMMANDS = [ingest_cmd]
