"""Commands on the whole store: init, stats, doctor, backup."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import click

from kioku.config import default_config_toml, load_config
from kioku.core.cost import CostReport
from kioku.core.timefmt import format_ts
from kioku.errors import ConfigError, KiokuError
from kioku.interfaces.cli.inputs import parse_time_option
from kioku.interfaces.cli.render import echo_json, table
from kioku.interfaces.cli.state import CliState
from kioku.ports.store import VectorIndexReport
from kioku.service.home import describe_store, uses_server
from kioku.service.paths import DB_FILENAME

__all__ = ["COMMANDS"]

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _human_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


@click.command("init")
@json_option
@click.pass_obj
def init_cmd(state: CliState, as_json: bool) -> None:
    """Create the home directory, a commented config.toml and the database.

    The database is HOME/memories.db, or the schema on the PostgreSQL server that store.url
    names (shown with its password masked). Safe to run again: what exists is kept.
    """
    home = state.home
    created_home = not home.exists()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    config_file = home / "config.toml"
    created_config = False
    if state.config_path is None and not config_file.exists():
        _write_private(config_file, default_config_toml())
        created_config = True
    with state.open() as kioku:
        version = kioku.check().schema_version
        database = describe_store(home, kioku.config)
        server = uses_server(kioku.config)
    if as_json:
        echo_json(
            {
                "home": str(home),
                "config": str(state.config_path or config_file),
                "database": database,
                "store": "postgresql" if server else "sqlite",
                "schema_version": version,
                "created_home": created_home,
                "created_config": created_config,
            }
        )
        return
    click.echo(f"home      {home}{'  (created)' if created_home else ''}")
    click.echo(
        f"config    {state.config_path or config_file}{'  (created)' if created_config else ''}"
    )
    click.echo(f"database  {database}  (schema version {version})")


def _cost(report: CostReport) -> dict[str, Any]:
    return {
        "lines": [
            {
                "purpose": line.purpose,
                "label": line.label,
                "calls": line.calls,
                "input_tokens": line.input_tokens,
                "output_tokens": line.output_tokens,
                "usd": round(line.usd, 6),
            }
            for line in report.lines
        ],
        "total_usd": round(report.total_usd, 6),
        "since": format_ts(report.first_at) if report.first_at else None,
        "days": round(report.days, 3),
        "per_month_usd": None if report.per_month_usd is None else round(report.per_month_usd, 4),
        "prices_per_mtok": {
            "llm_input": report.prices.llm_input,
            "llm_output": report.prices.llm_output,
            "embedding": report.prices.embedding,
        },
    }


def _echo_cost(cost: dict[str, Any]) -> None:
    click.echo("")
    if not any(line["calls"] for line in cost["lines"]):
        click.echo("cost        no paid provider calls recorded (the offline analyzer is free)")
        return
    rows = [
        [
            line["label"],
            str(line["calls"]),
            f"{line['input_tokens']:,}",
            f"{line['output_tokens']:,}",
            f"${line['usd']:.4f}",
        ]
        for line in cost["lines"]
    ]
    rows.append(["total", "", "", "", f"${cost['total_usd']:.4f}"])
    click.echo(table(["PURPOSE", "CALLS", "INPUT TOKENS", "OUTPUT TOKENS", "USD"], rows))
    if cost["per_month_usd"] is not None:
        click.echo(
            f"about ${cost['per_month_usd']:.2f} per month at the rate since {cost['since'][:10]}"
        )
    p = cost["prices_per_mtok"]
    click.echo(
        f"prices per million tokens: LLM ${p['llm_input']} in / ${p['llm_output']} out, "
        f"embeddings ${p['embedding']} (set them under [llm] and [embedding])"
    )


@click.command("stats")
@click.option("--cost", is_flag=True, help="Add token usage and cost of paid providers.")
@click.option("--since", metavar="ISO", help="With --cost: count only usage since this time.")
@click.option(
    "--days",
    type=click.IntRange(1, 366),
    default=7,
    show_default=True,
    help="Days of the mood balance to show (1-366).",
)
@json_option
@click.pass_obj
def stats_cmd(state: CliState, cost: bool, since: str | None, days: int, as_json: bool) -> None:
    """Count memories per level and category; show protection and database size.

    Also the lifecycle metrics of spec 004: memory_compression_rate, (original size −
    compressed size) / original size in UTF-8 bytes of text over the memories compressed now
    (null before any compression), and memory_archive_count, the archived memories; each
    level's share of the non-protected
    memories against its target (compression.level1_ratio ...), and where the nightly batch
    stands: its last day, when it last ran and whether it is overdue.

    The mood balance of the last --days days: per day, how many of the memories primed or
    recalled into a prompt were positive, neutral, negative, and negative with an intensity
    of at least mood.high_intensity, with the negative share (from the activity log).

    With --cost, also the tokens used by LLM and embedding providers and what they cost
    at the configured prices, per purpose as in the spec's cost table.
    """
    from kioku.core.lifecycle.metrics import compression_stats
    from kioku.core.lifecycle.plan import archive_share
    from kioku.service.lifecycle.schedule import batch_status
    from kioku.service.lifecycle.simulate_checks import count_levels
    from kioku.service.recall.balance import mood_balance

    with state.open() as kioku:
        since_at = parse_time_option(since, kioku.clock.tz, "--since")
        stats = kioku.stats()
        db_path = kioku.db_path
        cost_data = _cost(kioku.cost(since_at)) if cost else None
        by_level = count_levels(kioku.store, kioku.user_id, kioku.agent_id)
        batch = batch_status(kioku)
        compression = kioku.config.compression
        kioku_config = kioku.config
        squeezed = compression_stats(kioku.lifecycle_log(events=["compress", "delete"]))
        lifecycle = kioku.lifecycle()
        balance = mood_balance(kioku, days).as_dict()
    s = stats.store
    rate = squeezed.rate
    targets = {
        1: compression.level1_ratio,
        2: compression.level2_ratio,
        3: compression.level3_ratio,
        4: archive_share(kioku_config),
    }
    data: dict[str, Any] = {
        **stats.counts(),
        "database": {"path": str(db_path) if db_path else None, "size_bytes": s.size_bytes},
        "memory_compression_rate": None if rate is None else round(rate, 4),
        "memory_archive_count": s.archived,
        "compression": {
            "memories": squeezed.memories,
            "original_bytes": squeezed.original_bytes,
            "compressed_bytes": squeezed.compressed_bytes,
            "unknown_size": squeezed.unknown,
        },
        "non_protected": by_level.total_free,
        "levels": {
            str(level): {
                "count": by_level.free[level - 1],
                "share": round(by_level.share(level), 4),
                "target": targets[level],
            }
            for level in (1, 2, 3, 4)
        },
        "ratio_min_memories": compression.ratio_min_memories,
        "batch": batch.to_dict(),
        "lifecycle": lifecycle,
        "mood_balance": balance,
    }
    if cost_data is not None:
        data["cost"] = cost_data
    if as_json:
        echo_json(data)
        return
    levels = "  ".join(f"L{k} {v}" for k, v in data["by_level"].items())
    cats = "  ".join(f"{k} {v}" for k, v in data["by_category"].items()) or "-"
    click.echo(f"episodes    {s.total} (active {data['active']}, archived {s.archived})")
    others = "  ".join(f"{k} {v}" for k, v in data["by_kind"].items() if k != "episode")
    if others:
        click.echo(f"other kinds {others}")
    click.echo(f"by level    {levels}")
    click.echo(f"by category {cats}")
    click.echo(f"protected   {s.protected} of at most {stats.max_protected}")
    click.echo(f"revivals    {s.revival_requested} requested")
    _echo_lifecycle(data)
    _echo_mood(balance)
    where = db_path or "PostgreSQL (store.url)"
    click.echo(f"database    {where}  ({_human_size(s.size_bytes)})")
    if cost_data is not None:
        _echo_cost(cost_data)


def _echo_mood(mood: dict[str, Any]) -> None:
    """The mood balance per day, and how the safeguards are set."""

    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.0%}"

    click.echo(
        f"mood balance, memories primed or recalled (negative intense: intensity >= "
        f"{mood['high_intensity']}):"
    )
    rows = [
        [
            d["day"],
            str(d["positive"]),
            str(d["neutral"]),
            str(d["negative"]),
            str(d["negative_high_intensity"]),
            share(d["negative_share"]),
        ]
        for d in mood["days"]
    ]
    rows.append(["all", "", "", "", "", share(mood["negative_share"])])
    heads = ["DAY", "POSITIVE", "NEUTRAL", "NEGATIVE", "NEG. INTENSE", "NEGATIVE SHARE"]
    click.echo(table(heads, rows))
    limiter = (
        f"at most {mood['max_negative_share']:.0%} negative intense in {mood['window']} in a row"
        if mood["limiter"]
        else "off"
    )
    click.echo(f"limiter     {limiter}; mood shift {'on' if mood['shift'] else 'off'}")


def _echo_lifecycle(data: dict[str, Any]) -> None:
    """Shares vs targets, the spec 004 metrics, and where the batch stands."""
    shares = "  ".join(
        f"L{k} {v['share']:.1%}" + (f"/{v['target']:.0%}" if k != "4" else "")
        for k, v in data["levels"].items()
    )
    enforced = data["non_protected"] >= data["ratio_min_memories"]
    note = "" if enforced else f"; enforced from {data['ratio_min_memories']}"
    click.echo(f"shares      {shares}  (of {data['non_protected']} non-protected{note})")
    squeezed, rate = data["compression"], data["memory_compression_rate"]
    if rate is None:
        text = "nothing compressed yet (memory_compression_rate)"
    else:
        text = (
            f"{rate:.1%} smaller (memory_compression_rate): {squeezed['memories']} memories, "
            f"{squeezed['original_bytes']:,} → {squeezed['compressed_bytes']:,} bytes"
        )
    click.echo(
        f"compressed  {text}; {data['memory_archive_count']} archived (memory_archive_count)"
    )
    b = data["batch"]
    if b["last_day"] is None:
        last = "never run"
    else:
        last = f"last day {b['last_day']}, finished {b['last_run'] or '-'}"
    if b["overdue"]:
        due = f"OVERDUE: {b['due_days']} day(s) due; run `kioku batch`"
    elif b["due_days"]:
        due = f"{b['due_days']} day(s) due since {b['next_batch_at']}"
    else:
        due = f"next {b['next_batch_at']}"
    click.echo(f"batch       {last}; {due}")
    _echo_policy(data["lifecycle"])


def _echo_policy(life: dict[str, Any]) -> None:
    """Spec 004's policy and importance, and where consolidation stands."""
    imp, cap = life["importance"], life["capacity"]
    mean = "-" if imp["mean"] is None else f"{imp['mean']:.2f}"
    below = next(v for k, v in imp.items() if k.startswith("below_"))
    usage = "" if cap["usage"] is None else f", {cap['usage']:.1%} of {cap['limit']:,}"
    click.echo(
        f"policy      {life['policy']}: importance mean {mean}, {below} below 0.3"
        f"{usage if cap['applies'] else ''}"
    )
    runs = "  ".join(
        f"{level} {run['period'] if run else 'never'}"
        for level, run in life["consolidation"].items()
    )
    low = "  ".join(f"{k} {v}" for k, v in life["low_activation"].items()) or "none"
    click.echo(
        f"consolidation {runs}; low activation: {low}; "
        f"{life['superseded_knowledge']} superseded fact(s)"
    )


def _mode_problem(path: Path, allowed: int) -> str | None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & ~allowed & 0o077:
        return (
            f"{path} has mode {mode:o}: others can read it; "
            f"run `chmod {allowed:o} {path}` to make it owner-only"
        )
    return None


def _index_line(indexes: list[VectorIndexReport]) -> str:
    """What the PostgreSQL store's HNSW indexes hold against the settings (not a problem: a
    setting changed since an index was built applies once `kioku reindex` builds it)."""
    due = [f"{r.model} ({r.before} -> {r.after})" for r in indexes if r.rebuilt]
    if due:
        listed = "; ".join(due)
        return (
            f"{len(due)} of {len(indexes)} differ from the settings: {listed}; run `kioku reindex`"
        )
    return f"{len(indexes)} model(s), every index as the settings ask"


def _buffers_line(details: dict[str, object]) -> str | None:
    """Whether the PostgreSQL server's ``shared_buffers`` can hold the store's HNSW indexes
    (not a problem either way, but a walk of an index that does not fit reads from disk)."""
    index, buffers = details.get("vector_index_bytes"), details.get("shared_buffers_bytes")
    if not isinstance(index, int) or not isinstance(buffers, int):
        return None
    have = f"shared_buffers {_human_size(buffers)}"
    if index == 0:
        return f"no HNSW index yet; {have}"
    if index <= buffers:
        return f"the HNSW indexes ({_human_size(index)}) fit in {have}"
    return (
        f"the HNSW indexes ({_human_size(index)}) are larger than {have}: vector searches "
        f"read index pages from disk and slow down; raise shared_buffers above "
        f"{_human_size(index)} on the server"
    )


@click.command("doctor")
@json_option
@click.pass_obj
def doctor_cmd(state: CliState, as_json: bool) -> None:
    """Check the configuration, file permissions, schema version and database integrity.

    Also the Claude Code side: transcripts waiting in the inbox, captured sessions that could
    not be ingested (the dead-letter file; `kioku ingest --retry` replays them), and whether
    the installed hooks can still run.

    The vector cache files beside the database are checked too (permissions and checksums);
    past retrieval.ann_min_vectors memories, a `vectors` line says whether the HNSW graph of
    the `ann` extra is there. On PostgreSQL an `indexes` line says which models' HNSW
    indexes differ from the [store] hnsw_* settings (`kioku reindex` applies them), and a
    `buffers` line whether the server's shared_buffers can hold those indexes.
    Exits 0 when everything is ok, 1 when a problem is found.
    """
    checks: list[dict[str, Any]] = []

    def add(name: str, ok: bool, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})

    home = state.home
    schema: int | None = None
    server: str | None = None  # the PostgreSQL store's URL, password masked
    try:
        loaded = load_config(home=home, path=state.config_path)
        add("config", True, str(loaded.path) if loaded.path else "defaults (no config file)")
        if loaded.config.store.url:
            from kioku.config.store_url import mask_url

            server = f"{mask_url(loaded.config.store.url)} (schema {loaded.config.store.schema})"
    except ConfigError as err:
        add("config", False, str(err))

    def check_store() -> None:
        nonlocal schema
        try:
            with state.open() as kioku:
                report = kioku.check()
                held = kioku.store.stats(None, None).total
                indexes = kioku.store.reindex(dry_run=True) if server is not None else []
        except KiokuError as err:
            add("database", False, str(err))
            return
        if server is not None:
            add("database", True, f"PostgreSQL {server}")
        schema = report.schema_version
        # Not a problem, but said: an empty store may be one that was just wiped.
        add("memories", True, f"{held} in the store (every user and agent)")
        add(
            "schema",
            report.schema_version == report.expected_schema_version,
            f"version {report.schema_version} (expected {report.expected_schema_version})",
        )
        replica = report.details.get("read_replica")
        own = [p for p in report.problems if not p.startswith("the read replica")]
        add("integrity", not own, "; ".join(own) or "ok")
        graph = _graph_line(held, kioku.config.retrieval.ann_min_vectors, report.details)
        if server is None and graph is not None:
            add("vectors", True, graph)
        if server is not None:
            add("indexes", True, _index_line(indexes))
            buffers = _buffers_line(report.details)
            if buffers is not None:
                add("buffers", True, buffers)
        if isinstance(replica, dict):
            said = [p for p in report.problems if p.startswith("the read replica")]
            add("replica", not said, "; ".join(said) or _replica_line(replica))

    if not home.is_dir():
        if server is None:
            add("home", False, f"{home} does not exist; run `kioku init`")
        else:
            # The store is on the server: the home holds only config and hook files.
            add("home", True, f"{home} not created yet (not needed: the store is PostgreSQL)")
            check_store()
    else:
        problem = _mode_problem(home, 0o700)
        add("home", problem is None, problem or f"{home} (owner-only)")
        db = home / DB_FILENAME
        if server is None and not db.exists():
            add("database", False, f"{db} does not exist yet; run `kioku init`")
        else:
            check_store()
        from kioku.interfaces.claude_code.hook_doctor import hook_checks

        for name, passed, detail in hook_checks(home, os.environ, Path.cwd()):
            add(name, passed, detail)
    ok = all(c["ok"] for c in checks)
    if as_json:
        echo_json({"ok": ok, "home": str(home), "schema_version": schema, "checks": checks})
    else:
        for c in checks:
            click.echo(f"{'ok     ' if c['ok'] else 'PROBLEM'}  {c['name']:<10} {c['detail']}")
        empty = any(c["name"] == "memories" and c["detail"].startswith("0 ") for c in checks)
        verdict = "all checks passed" + (" (the store holds no memories)" if empty else "")
        click.echo(verdict if ok else "problems found")
    if not ok:
        raise click.exceptions.Exit(1)


def _graph_line(held: int, threshold: int, details: dict[str, Any]) -> str | None:
    """What ``kioku doctor`` says of the HNSW graph of a SQLite store past
    ``retrieval.ann_min_vectors`` memories (None below it, or with it set to 0)."""
    if threshold <= 0 or held < threshold:
        return None
    import importlib.util

    if importlib.util.find_spec("usearch") is None:
        return (
            f"{held} memories, past retrieval.ann_min_vectors ({threshold}): "
            "`pip install 'kioku[ann]'` lets prompt-length queries use an HNSW graph "
            "(search is exact now)"
        )
    size = int(details.get("vector_graph_bytes") or 0)
    if size:
        return f"HNSW graph for prompt-length queries: {size / 1e6:.1f} MB beside the cache"
    return "HNSW graph not built yet: the next `kioku batch` builds it (search is exact now)"


def _replica_line(status: dict[str, Any]) -> str:
    age = status.get("replay_age_s")
    replayed = "no transaction replayed yet" if age is None else f"last replay {age:g} s ago"
    return (
        f"{status.get('where')}: a standby, {replayed}, schema version "
        f"{status.get('schema_version')} (searches go there)"
    )


@click.command("backup")
@click.argument("path", type=click.Path(path_type=str))
@click.option("--force", is_flag=True, help="Replace PATH if it exists (when the copy is done).")
@json_option
@click.pass_obj
def backup_cmd(state: CliState, path: str, force: bool, as_json: bool) -> None:
    """Write a consistent copy of the database to PATH, safe while others write.

    PATH is a new file, or an existing directory (or a path ending in /) to put the copy in
    as memories-YYYYMMDD-HHMMSS.db. The directory must exist. The copy is written to a
    temporary file beside PATH and renamed when complete and checked, so an existing PATH
    (replaced only with --force) is never lost midway; it is owner-only (0600). PATH may
    never be the store itself or any file kioku keeps in the home (refused, exit 2).

    Each backup is recorded in the store (path, time, which memories it holds) so that
    `kioku forget` and `kioku erase` can name the backups that still hold what they erase.
    Restore by stopping kioku and copying the file back to the home's memories.db.
    """
    from kioku.service.erasure.backups import resolve_target

    with state.open() as kioku:
        target = resolve_target(
            path,
            home=kioku.home or state.home,
            db=kioku.db_path or state.home / DB_FILENAME,
            config=kioku.loaded_config.path if kioku.loaded_config else None,
            now=kioku.clock.now(),
            overwrite=force,
        )
        record = kioku.backup(target, overwrite=force)
    size = target.stat().st_size
    if as_json:
        echo_json(
            {
                "path": str(target),
                "size_bytes": size,
                "memories": record.memories,
                "manifest_seq": record.seq,
            }
        )
    else:
        click.echo(f"backed up {record.memories} memories to {target} ({_human_size(size)})")


COMMANDS = [init_cmd, stats_cmd, doctor_cmd, backup_cmd]
