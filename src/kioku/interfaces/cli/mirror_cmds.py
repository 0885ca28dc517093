"""``kioku export``: the files layout (``--format files DIR``) and one JSON document
(``--format json FILE``); and the files layout of ``kioku import`` (the ``import`` command
itself lives in import_cmds)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from kioku.interfaces.cli.render import echo_json
from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS", "export_cmd", "import_files_layout"]


def _warn(message: str) -> None:
    click.echo(f"kioku: warning: {message}", err=True)


#: The reports count memories by directory; profiles are the ones under users/.
_KIND_NAMES = {
    "episodes": "episodes",
    "knowledge": "knowledge",
    "procedures": "procedures",
    "users": "profiles",
}


def _kinds(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts.get(key, 0)} {name}" for key, name in _KIND_NAMES.items())


@click.command("export")
@click.argument("target", metavar="DIR|FILE", required=False)
@click.option(
    "--format",
    "export_format",
    type=click.Choice(["files", "json"]),
    help="files (the default): spec 001's tree of readable files in DIR; json: one JSON "
    "document in FILE (or - / no FILE: stdout).",
)
@click.option(
    "--layout",
    type=click.Choice(["files"]),
    help="The same as --format files (kept for scripts).",
)
@click.option(
    "--user",
    "user_id",
    metavar="ID",
    help="The owner whose memories to export (the same as the global --user).",
)
@click.option(
    "--force",
    is_flag=True,
    help="files: write into a DIR that is not empty, refreshing an earlier export (removing "
    "its files of memories and days no longer there; no other file is touched). "
    "json: replace FILE.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_obj
def export_cmd(
    state: CliState,
    target: str | None,
    export_format: str | None,
    layout: str | None,
    user_id: str | None,
    force: bool,
    as_json: bool,
) -> None:
    """Write the memories of one owner (--user, --agent) for reading or for another tool.

    Only that owner's memories are written: every kind, archived ones too, with the kept
    originals, the relations among them and the owner's activity log.

    --format files writes DIR as files a person can read:

    \b
      DIR/kioku.json                      format, version, scope, counts, export time
      DIR/episodes/YYYY-MM-DD/<id>.md     episodes, by the day they were made
      DIR/knowledge/<id>.md               knowledge (facts, lessons, policies)
      DIR/procedures/<id>.md              procedures
      DIR/users/<id>.md                   profiles of people
      DIR/activity_log/YYYY-MM-DD.jsonl   the activity log as stored, one file per day

    A .md file is YAML front matter between '---' lines with every field of the memory
    (knowledge and procedures under spec 001's names: created_at, updated_at,
    source_episodes, confidence, version, ...; then emotion, level, keywords, relations,
    protection, scope, provenance and the embedding model; under 'original' the text an
    episode had before compression, when kept), then '# <trigger>' and the content.
    Vectors are not written: `kioku import --layout files DIR` computes them again.
    DIR must be new or empty (or pass --force). Directories are made owner-only (0700),
    files 0600; each file is complete before it takes its name, and kioku.json is written
    last. No symbolic link inside DIR is followed.

    --format json writes one JSON document to FILE (or stdout): "format": "kioku-json",
    "version", "exported_at", "scope", "counts", then "memories" (each with the fields of
    a .md file above, "trigger" and "content"), "relations" (from, to, type) and
    "activity" (the log lines as stored). FILE must not exist (or pass --force); it is
    written owner-only (0600), complete before it takes its name.
    """
    chosen = export_format or layout or "files"
    if export_format and layout and export_format != layout:
        raise click.UsageError(f"--format {export_format} and --layout {layout} disagree")
    if user_id is not None:
        state.user_id = user_id
    if chosen == "json":
        _export_json(state, target, force=force, as_json=as_json)
        return
    if target is None or target == "-":
        raise click.UsageError("--format files needs a DIR to write to")
    from kioku.service.mirror import export_files

    with state.open(on_warning=_warn) as kioku:
        report = export_files(kioku, Path(target), force=force)
    if as_json:
        echo_json(
            {
                "target": str(report.target),
                "exported_at": report.exported_at.isoformat(),
                "memories": report.memories,
                "counts": report.counts,
                "removed": report.removed,
            }
        )
        return
    counts = report.counts
    click.echo(
        f"exported {report.memories} memories to {report.target} ({_kinds(counts)}; "
        f"{counts['archived']} archived, {counts['originals']} kept originals) and "
        f"{counts['activity_lines']} activity lines in {counts['activity_days']} day files"
        + (f"; removed {report.removed} stale files" if report.removed else "")
    )


def _export_json(state: CliState, target: str | None, *, force: bool, as_json: bool) -> None:
    """``kioku export --format json [FILE|-]``."""
    from kioku.service.mirror.export_json import export_document, write_document

    path = None if target in (None, "-") else Path(str(target))
    with state.open(on_warning=_warn) as kioku:
        document = export_document(kioku)
    write_document(document, path, stream=sys.stdout.buffer, force=force)
    if path is None:
        return
    counts = document["counts"]
    if as_json:
        echo_json({"target": str(path), "counts": counts})
        return
    total = sum(counts[key] for key in _KIND_NAMES)
    click.echo(
        f"exported {total} memories to {path} ({_kinds(counts)}; {counts['archived']} "
        f"archived, {counts['originals']} kept originals, {counts['relations']} relations) "
        f"and {counts['activity_lines']} activity lines"
    )


def import_files_layout(
    state: CliState, source: str, *, as_json: bool, document: bool = False
) -> None:
    """``kioku import --layout files DIR``: read the export in DIR back into the scope; with
    ``document``, ``kioku import --from json FILE``: a JSON export."""
    from kioku.service.mirror import import_files
    from kioku.service.mirror.import_files import import_mirror
    from kioku.service.mirror.import_json import read_json_export

    with state.open(on_warning=_warn) as kioku:
        if document:
            mirror = read_json_export(
                Path(source), categories=kioku.config.categories, tz=kioku.clock.tz
            )
            report = import_mirror(kioku, mirror)
        else:
            report = import_files(kioku, Path(source))
    if as_json:
        data: dict[str, Any] = {
            "imported": report.memories,
            "by_kind": report.imported,
            "skipped": report.skipped_existing,
            "skipped_erased": report.skipped_erased,
            "originals": report.originals,
            "activity_lines": report.activity_lines,
            "activity_skipped": report.activity_skipped,
            "embedded": report.embedded,
            "without_vector": report.without_vector,
        }
        echo_json(data)
    else:
        click.echo(
            f"imported {report.memories} memories ({_kinds(report.imported)}), "
            f"skipped {report.skipped_existing} already stored"
            + (f" and {report.skipped_erased} erased" if report.skipped_erased else "")
            + f"; restored {report.originals} kept originals and "
            f"{report.activity_lines} activity lines"
            + (f" ({report.activity_skipped} already held)" if report.activity_skipped else "")
        )
    if report.without_vector:
        _warn(
            f"{report.without_vector} memories were exported with another embedding model "
            "and have no vector now: run `kioku reembed`"
        )


COMMANDS = (export_cmd,)
