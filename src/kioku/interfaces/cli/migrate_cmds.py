"""Moving the store between SQLite and PostgreSQL (``kioku migrate``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from kioku.interfaces.cli.render import echo_json, table
from kioku.interfaces.cli.state import CliState

if TYPE_CHECKING:
    from kioku.service.transfer import MigrationReport

__all__ = ["COMMANDS"]


@click.command("migrate")
@click.option(
    "--to", "to_url", metavar="URL", help="Copy the SQLite store to this PostgreSQL server."
)
@click.option(
    "--from",
    "from_url",
    metavar="URL",
    help="Copy the store on this PostgreSQL server to the home's SQLite file.",
)
@click.option(
    "--source",
    type=click.Path(path_type=Path),
    help="With --to: the SQLite store to copy (memories.db or the home holding it) "
    "[default: the home's].",
)
@click.option(
    "--schema",
    default="kioku",
    show_default=True,
    help="The PostgreSQL schema holding the store (as [store] schema).",
)
@click.option("--dry-run", is_flag=True, help="Count what would be copied; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_obj
def migrate_cmd(
    state: CliState,
    to_url: str | None,
    from_url: str | None,
    source: Path | None,
    schema: str,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Copy the store between SQLite and PostgreSQL, then verify the copy.

    `--to URL` copies the home's SQLite store (or `--source`) into `--schema` on the server;
    `--from URL` copies that schema into the home's memories.db. Every table is copied
    (memories of every kind with their vectors, relations, logs, usage, tombstones, keys...),
    and each table's row count and checksum are compared after the copy: exit 0 when they
    are equal, 1 (naming the tables) when not.

    Running it again is safe: rows already in the target are left out, so a second run copies
    nothing, and a run cut short is completed. A target holding other data under the same
    ids, or rows the source lacks, is refused before anything is written (exit 2). Stop
    other kioku processes writing to the source while it runs. Passwords are never printed.
    """
    from kioku.config.loader import load_config
    from kioku.service.paths import DB_FILENAME
    from kioku.service.transfer import copy_store
    from kioku.service.transfer.endpoints import (
        check_server,
        open_postgres,
        open_sqlite,
        sqlite_file,
    )

    if (to_url is None) == (from_url is None):
        raise click.UsageError("give exactly one of --to URL and --from URL")
    if source is not None and from_url is not None:
        raise click.UsageError("--source goes with --to (with --from the target is the home)")
    check_server(str(to_url or from_url), schema)
    if to_url is not None:
        path = sqlite_file(source) if source is not None else state.home / DB_FILENAME
        src = open_sqlite(path, source=True)
        try:
            store = load_config(home=state.home, path=state.config_path).config.store
            hnsw = (store.hnsw_m, store.hnsw_ef_construction, store.hnsw_ef_search, store.hnsw_type)
            dst = open_postgres(to_url, schema, source=False, dry_run=dry_run, hnsw=hnsw)
        except BaseException:
            src.close()
            raise
    else:
        assert from_url is not None
        src = open_postgres(from_url, schema, source=True)
        try:
            dst = open_sqlite(state.home / DB_FILENAME, source=False, dry_run=dry_run)
        except BaseException:
            src.close()
            raise
    try:
        report = copy_store(src, dst, dry_run=dry_run)
    finally:
        src.close()
        dst.close()
    _show(report, as_json)
    if report.mismatched:
        names = ", ".join(t.table for t in report.mismatched)
        click.echo(
            f"error: the copy differs from the source in: {names}; run the same command "
            "again to complete it, or migrate into an empty target",
            err=True,
        )
        raise SystemExit(1)


def _show(report: MigrationReport, as_json: bool) -> None:
    if as_json:
        echo_json(
            {
                "source": report.source,
                "target": report.target,
                "dry_run": report.dry_run,
                "verified": report.verified,
                "copied": report.copied,
                "erasure_key_replaced": report.key_replaced,
                "tables": [
                    {
                        "table": t.table,
                        "source_rows": t.source_rows,
                        "already": t.already,
                        "copied": t.copied,
                        "target_rows": None if report.dry_run else t.target_rows,
                        "source_checksum": t.source_checksum,
                        "target_checksum": None if report.dry_run else t.target_checksum,
                        "ok": None if report.dry_run else t.ok,
                    }
                    for t in report.tables
                ],
            }
        )
        return
    click.echo(f"from: {report.source}")
    click.echo(f"to:   {report.target}")
    headers = ["table", "source", "already", "to copy" if report.dry_run else "copied"]
    if not report.dry_run:
        headers += ["target", "checksum", ""]
    rows = []
    for t in report.tables:
        row = [t.table, str(t.source_rows), str(t.already), str(t.copied)]
        if not report.dry_run:
            row += [str(t.target_rows), t.target_checksum[:16], "ok" if t.ok else "DIFFERS"]
        rows.append(row)
    click.echo(table(headers, rows))
    total = sum(t.source_rows for t in report.tables)
    if report.dry_run:
        click.echo(f"dry run: {report.copied} of {total} rows would be copied; nothing written")
    elif report.verified:
        click.echo(
            f"verified: {len(report.tables)} tables, {total} rows, counts and checksums equal "
            f"({report.copied} rows copied)"
        )


COMMANDS = [migrate_cmd]
