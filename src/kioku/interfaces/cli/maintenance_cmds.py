"""Store upkeep: compacting (vacuum), building vector indexes again (reindex) and salvaging a
damaged store (recover)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import click

from kioku.interfaces.cli.render import echo_json, table
from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _size(size: int) -> str:
    return f"{size / 1024:.1f} KB" if size < 1024 * 1024 else f"{size / 1024 / 1024:.1f} MB"


@click.command("vacuum")
@json_option
@click.pass_obj
def vacuum_cmd(state: CliState, as_json: bool) -> None:
    """Compact the store: rebuild the database without free pages (VACUUM), merge the
    lexical index, and checkpoint and truncate the write-ahead log.

    Safe while other kioku processes have the store open; it waits for their writes. Also
    finishes the scrubbing of an erasure that another process's read held up.
    """
    with state.open() as kioku:
        before, after, scrub = kioku.store.vacuum()
    if as_json:
        echo_json(
            {
                "size_before": before,
                "size_after": after,
                "index_merged": scrub.index_merged,
                "wal_truncated": scrub.wal_truncated,
                "wal_detail": scrub.wal_detail,
            }
        )
        return
    click.echo(f"vacuumed: {_size(before)} -> {_size(after)} (database and write-ahead log)")
    if not scrub.wal_truncated or not scrub.index_merged:
        # SQLite: a reader held the write-ahead log; PostgreSQL: what the scrub could not
        # do, and what an administrator must run or set (the detail names it).
        click.echo(
            "warning: erased text may stay in the store's files until this is resolved: "
            f"{scrub.wal_detail or 'unknown reason'}; then run `kioku vacuum` again",
            err=True,
        )


@click.command("recover")
@click.argument("source", metavar="SRC_OR_HOME", type=click.Path(path_type=Path))
@click.option(
    "--to",
    "target",
    required=True,
    type=click.Path(path_type=Path),
    help="The NEW database file to write (must not exist).",
)
@json_option
def recover_cmd(source: Path, target: Path, as_json: bool) -> None:
    """Salvage what can be read of a damaged store into a new file.

    SRC_OR_HOME is a damaged memories.db or the home holding it; it is never modified (the
    salvage reads a copy). Each of kioku's tables is read row by row, skipping damaged
    pages; the lexical index is rebuilt. The new file passes SQLite's integrity check and
    opens as a kioku store: check it with `kioku --home DIR doctor` after moving it to a
    home's memories.db. Exits 0 when everything was saved, 1 when rows were lost.
    """
    from kioku.service.erasure.backups import recover

    report = recover(source, target)
    rows = [
        {
            "table": t.table,
            "saved": t.saved,
            "dropped": t.dropped,
            "unreadable_ranges": t.unreadable,
            "in_source": t.total_in_source,
        }
        for t in report.tables
    ]
    if as_json:
        echo_json(
            {
                "source": str(report.source),
                "target": str(report.target),
                "source_schema_version": report.source_version,
                "complete": report.complete,
                "tables": rows,
            }
        )
    else:
        click.echo(
            table(
                ["TABLE", "SAVED", "DROPPED", "UNREADABLE RANGES", "IN SOURCE"],
                [
                    [
                        str(r["table"]),
                        str(r["saved"]),
                        str(r["dropped"]),
                        str(r["unreadable_ranges"]),
                        "?" if r["in_source"] is None else str(r["in_source"]),
                    ]
                    for r in rows
                ],
            )
        )
        verdict = "everything readable was saved" if report.complete else "some rows were lost"
        click.echo(f"salvaged into {report.target}: {verdict}")
    if not report.complete:
        raise click.exceptions.Exit(1)


@click.command("reindex")
@click.option("--model", default=None, help="Only this embedding model's index.")
@click.option("--force", is_flag=True, help="Build every index again, even one that matches.")
@click.option("--dry-run", is_flag=True, help="Only show what would be built.")
@json_option
@click.pass_obj
def reindex_cmd(
    state: CliState, model: str | None, force: bool, dry_run: bool, as_json: bool
) -> None:
    """Build the vector indexes again with the current settings.

    PostgreSQL: each embedding model's HNSW index keeps the type, m and ef_construction it
    was built with ([store] hnsw_type, hnsw_m, hnsw_ef_construction apply to indexes built
    afterwards). This builds each index that differs from the configuration again, beside
    the one in use (CREATE INDEX CONCURRENTLY), then swaps it in: searches and writes go on
    meanwhile. An interrupted run leaves the old index in use; run it again.

    SQLite: vectors are searched exactly (past [retrieval] ann_min_vectors also with a graph
    the store keeps up to date itself), so nothing is built; each model is listed.
    """
    show = not as_json and sys.stderr.isatty()
    with (
        state.open() as kioku,
        click.progressbar(length=1, label="reindex", file=sys.stderr, hidden=not show) as bar,
    ):

        def progress(label: str, done: int, total: int) -> None:
            bar.length = max(total, 1)
            bar.label = label
            bar.update(done - bar.pos)

        reports = kioku.store.reindex(model, force=force, dry_run=dry_run, progress=progress)
    if as_json:
        echo_json({"dry_run": dry_run, "indexes": [dataclasses.asdict(r) for r in reports]})
        return
    if not reports:
        click.echo("no vectors stored: nothing to index")
        return
    click.echo(
        table(
            ["MODEL", "DIM", "VECTORS", "BEFORE", "AFTER", "REBUILT", "SECONDS"],
            [
                [
                    r.model,
                    str(r.dim),
                    str(r.vectors),
                    r.before,
                    r.after,
                    ("would" if dry_run else "yes") if r.rebuilt else "no",
                    f"{r.seconds:.1f}" if r.rebuilt and not dry_run else "-",
                ]
                for r in reports
            ],
        )
    )
    due = sum(r.rebuilt for r in reports)
    if dry_run:
        click.echo(f"would build {due} of {len(reports)} again")
    elif due:
        click.echo(f"built {due} of {len(reports)} again")
    elif all(r.after.startswith("exact") for r in reports):
        click.echo("nothing to build: these vectors are searched exactly")
    else:
        click.echo("nothing to build: every index matches the settings")


COMMANDS = [vacuum_cmd, reindex_cmd, recover_cmd]
