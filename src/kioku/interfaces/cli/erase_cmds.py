"""Erasing everything of one person (spec 003 §9.1), and reporting any erasure."""

from __future__ import annotations

import click

from kioku.interfaces.cli.render import echo_json, table
from kioku.interfaces.cli.state import CliState
from kioku.service.erasure.erasure import BackupStatus, ErasurePlan, ErasureReport

__all__ = ["COMMANDS", "echo_erasure"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _echo_backups(backups: tuple[BackupStatus, ...], verb: str) -> None:
    existing = [b for b in backups if b.exists]
    gone = len(backups) - len(existing)
    if existing:
        click.echo(
            f"{len(existing)} backup(s) made with `kioku backup` {verb} this data; kioku cannot "
            "erase copies it does not control: delete them, or make new backups and delete "
            "these"
        )
        for b in existing:
            click.echo(f"  {b.path}  (made {b.made_at.isoformat(timespec='seconds')})")
    if gone:
        click.echo(f"{gone} recorded backup(s) that held it are no longer at their path")


def echo_erasure(report: ErasureReport) -> None:
    """The human report of a forget or an erase: what went, what may remain, and where."""
    scrub = report.scrub
    done = ["lexical index merged"] if scrub.index_merged else []
    if scrub.wal_truncated:
        done.append("write-ahead log truncated")
    if scrub.vector_files_removed:
        done.append("vector cache files removed")
    click.echo(f"scrubbed: {', '.join(done) or 'nothing'}; audit log entry #{report.audit_seq}")
    if not scrub.wal_truncated or not scrub.index_merged:
        # SQLite: the write-ahead log (memories.db-wal) was not truncated; PostgreSQL: what
        # the scrub could not do, and what an administrator must run or set.
        click.echo(
            "warning: erased text may stay in the store's files until this is resolved: "
            f"{scrub.wal_detail or 'unknown reason'}; then run `kioku vacuum`",
            err=True,
        )
    _echo_backups(report.backups, "still hold")


def _echo_plan(plan: ErasurePlan) -> None:
    click.echo(f"erasing user {plan.user_id!r} would delete {plan.memories} memories")
    if plan.memories:
        levels = "  ".join(f"L{k} {v}" for k, v in sorted(plan.by_level.items()))
        click.echo(f"  by level    {levels}")
        click.echo(f"  by kind     {'  '.join(f'{k} {v}' for k, v in plan.by_kind.items())}")
        click.echo(f"  by agent    {'  '.join(f'{k} {v}' for k, v in plan.by_agent.items())}")
        assert plan.first is not None
        assert plan.last is not None
        click.echo(
            f"  made        {plan.first.isoformat(timespec='seconds')} to "
            f"{plan.last.isoformat(timespec='seconds')}"
        )
        click.echo(
            f"  also        {plan.protected} protected, {plan.sessions} sessions, "
            f"{plan.relations} relations, {plan.source_ids} source ids (kept as tombstones)"
        )
    click.echo(f"  log rows    {plan.log_rows} lifecycle log rows")
    _echo_backups(plan.backups, "hold")
    click.echo("")
    click.echo(f"to erase, run: kioku erase --user {plan.user_id} --token {plan.token}")


@click.command("erase")
@click.option("--user", "user_id", metavar="ID", help="The person whose memories go (all agents).")
@click.option("--token", metavar="T", help="The confirmation token the plan printed.")
@click.option("--audit", is_flag=True, help="List the erasure audit log instead.")
@json_option
@click.pass_obj
def erase_cmd(
    state: CliState, user_id: str | None, token: str | None, audit: bool, as_json: bool
) -> None:
    """Erase everything kioku keeps of one person: the right to erasure (spec 003 §9.1).

    Without --token, print what would be deleted (counts per level, kind and agent,
    sessions, dates; never any text) and a confirmation token. With the token, delete every
    memory of that user under every agent, with relations, vectors, index entries, lifecycle
    log rows and working-memory state; keep tombstones of the source ids so no import
    stores those turns again; append an entry to the audit log. The token covers exactly
    the memories shown: if one arrives meanwhile, the token is refused (exit 2).

    With --audit, list the audit log (user ids appear as keyed digests; with --user, only
    that user's entries).
    """
    if audit:
        _audit(state, user_id, as_json)
        return
    if not user_id or not user_id.strip():
        raise click.UsageError("name the person to erase: kioku erase --user ID")
    with state.open() as kioku:
        if token is None:
            plan = kioku.plan_erasure(user_id)
            if as_json:
                echo_json(plan.to_dict())
            else:
                _echo_plan(plan)
            return
        report = kioku.erase_user(user_id, token)
    if as_json:
        echo_json(report.to_dict())
        return
    click.echo(
        f"erased {report.erased} memories of user {user_id!r} "
        f"({report.tombstoned} source ids kept as tombstones, {report.log_rows_deleted} log "
        f"rows and {report.state_rows_deleted} working-memory states deleted)"
    )
    echo_erasure(report)


def _audit(state: CliState, user_id: str | None, as_json: bool) -> None:
    from kioku.service.erasure.erasure import audit_subject

    with state.open() as kioku:
        entries = kioku.store.read_audit()
        if user_id:
            subject = audit_subject(kioku.store, user_id)
            entries = [e for e in entries if e.subject == subject]
    rows = [
        {
            "seq": e.seq,
            "at": e.at.isoformat(),
            "action": e.action,
            "subject": e.subject,
            "items": e.items,
            "details": e.details,
        }
        for e in entries
    ]
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("no erasures recorded")
        return
    click.echo(
        table(
            ["SEQ", "AT", "ACTION", "USER (DIGEST)", "ITEMS", "BACKUPS STILL HOLDING"],
            [
                [
                    str(r["seq"]),
                    str(r["at"])[:19],
                    str(r["action"]),
                    str(r["subject"])[:12],
                    str(r["items"]),
                    str(_held(e.details.get("backups_still_containing"))),
                ]
                for r, e in zip(rows, entries, strict=True)
            ],
        )
    )


def _held(value: object) -> int:
    return len(value) if isinstance(value, list) else 0


COMMANDS = [erase_cmd]
