"""Commands on single memories: add, list, show, protect, unprotect, forget."""

from __future__ import annotations

import json
from typing import Any

import click

from kioku.core.kinds_explain import kind_explanation
from kioku.core.model import ALL_TAGS, Kind, Memory
from kioku.core.serialize import explanation_to_dict, memory_to_dict
from kioku.core.timefmt import format_ts
from kioku.errors import ValidationError
from kioku.interfaces.cli.inputs import parse_time_option
from kioku.interfaces.cli.render import echo_json, excerpt, plain, table
from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS"]

_FLAG_OF = {
    "emotional_intensity": "--intensity",
    "emotional_arousal": "--arousal",
    "emotional_valence": "--valence",
    "emotional_tags": "--tags",
    "category": "--category",
    "keywords": "--keywords",
    "trigger": "--trigger",
    "content": "--content",
    "at": "--at",
    "session_id": "--session",
}

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _split(values: tuple[str, ...]) -> list[str]:
    """Values given as repeated options and/or comma-separated lists."""
    out: list[str] = []
    for value in values:
        out.extend(part.strip() for part in value.replace("、", ",").split(","))
    return [v for v in out if v]


def _with_flag_hint(err: ValidationError) -> ValidationError:
    flag = _FLAG_OF.get(err.field)
    if flag and not err.hint:
        err.hint = f"fix the value of {flag}"
    elif flag and flag not in (err.hint or ""):
        err.hint = f"{err.hint} ({flag})"
    return err


@click.command("add")
@click.option("--trigger", required=True, help="What prompted the memory (the user's words).")
@click.option("--content", required=True, help="The memory itself (the reaction, the details).")
@click.option("--intensity", type=int, required=True, help="Emotional intensity, 0-100.")
@click.option(
    "--category",
    required=True,
    help="Context category: casual, work, decision, emotional (or one added in the config).",
)
@click.option(
    "--valence",
    default="neutral",
    show_default=True,
    help="Emotional valence: positive, negative or neutral.",
)
@click.option("--arousal", type=int, default=50, show_default=True, help="Arousal, 0-100.")
@click.option(
    "--tags",
    multiple=True,
    help=f"Emotion tags, comma-separated or repeated. Allowed: {', '.join(sorted(ALL_TAGS))}.",
)
@click.option("--keywords", multiple=True, help="Keywords, comma-separated or repeated.")
@click.option("--protected", is_flag=True, help="Protect it from compression and deletion.")
@click.option(
    "--at", "at", metavar="ISO", help="When it happened (ISO 8601; no offset = local time)."
)
@click.option("--session", "session_id", metavar="ID", help="Session the memory came from.")
@json_option
@click.pass_obj
def add_cmd(
    state: CliState,
    trigger: str,
    content: str,
    intensity: int,
    category: str,
    valence: str,
    arousal: int,
    tags: tuple[str, ...],
    keywords: tuple[str, ...],
    protected: bool,
    at: str | None,
    session_id: str | None,
    as_json: bool,
) -> None:
    """Store a memory you describe yourself.

    The decay coefficient, initial memory_days and retention score are derived as the
    spec says; the new memory starts at Level 1.
    """
    with state.open() as kioku:
        created = parse_time_option(at, kioku.clock.tz, "--at")
        try:
            memory = kioku.remember(
                trigger,
                content,
                intensity=intensity,
                category=category,
                valence=valence,
                arousal=arousal,
                tags=_split(tags),
                keywords=_split(keywords),
                protected=protected,
                at=created,
                session_id=session_id,
            )
        except ValidationError as err:
            raise _with_flag_hint(err) from None
        if as_json:
            echo_json(memory_to_dict(memory))
        else:
            click.echo(memory.id)


def _row(m: Memory) -> list[str]:
    # Category, intensity and score drive an episode's retention; other kinds have lifecycles
    # of their own (`kioku show`), so their placeholder values are not shown.
    episode = m.kind is Kind.EPISODE
    return [
        m.id,
        format_ts(m.created)[:16].replace("T", " "),
        f"L{m.current_level}",
        m.category if episode else "-",
        str(m.emotional_intensity) if episode else "-",
        f"{m.retention_score:.1f}" if episode else "-",
        "P" if m.protected else "",
        excerpt(m.trigger, 48),
    ]


@click.command("list")
@click.option(
    "--level", type=click.IntRange(1, 4), multiple=True, help="Only these levels (repeatable)."
)
@click.option("--category", multiple=True, help="Only these categories (repeatable).")
@click.option("--archived", is_flag=True, help="Show archived memories (Level 4) instead.")
@click.option("--all", "show_all", is_flag=True, help="Show active and archived memories.")
@click.option(
    "--protected/--unprotected",
    "protected",
    default=None,
    help="Only protected (or only unprotected) memories.",
)
@click.option(
    "--kind",
    type=click.Choice(["episode", "knowledge", "procedure", "profile"]),
    help="Only memories of this kind.",
)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(min=0), default=0, help="Skip this many first.")
@json_option
@click.pass_obj
def list_cmd(
    state: CliState,
    level: tuple[int, ...],
    category: tuple[str, ...],
    archived: bool,
    show_all: bool,
    protected: bool | None,
    kind: str | None,
    limit: int,
    offset: int,
    as_json: bool,
) -> None:
    """List memories, newest first (active ones unless --archived or --all).

    Every kind is listed unless --kind picks one; a KIND column then names each memory's kind
    when the list holds more than episodes."""
    with state.open() as kioku:
        memories = kioku.list(
            level=level or None,
            category=_split(category) or None,
            archived=None if show_all else archived,
            protected=protected,
            kind=kind,
            limit=limit,
            offset=offset,
        )
        if as_json:
            echo_json([memory_to_dict(m) for m in memories])
            return
        if not memories:
            click.echo("no memories match", err=True)
            return
        headers = ["ID", "CREATED", "LVL", "CATEGORY", "INT", "SCORE", "P", "TRIGGER"]
        rows = [_row(m) for m in memories]
        if any(m.kind is not Kind.EPISODE for m in memories):
            # Knowledge, procedures and profiles listed among episodes say what they are.
            headers.insert(1, "KIND")
            for row, m in zip(rows, memories, strict=True):
                row.insert(1, m.kind.value)
        click.echo(table(headers, rows))


@click.command("show")
@click.argument("memory_id", metavar="ID")
@json_option
@click.pass_obj
def show_cmd(state: CliState, memory_id: str, as_json: bool) -> None:
    """Show every field of a memory and explain its retention.

    The forecast assumes it is never recalled: the batches at which it will be summarised
    (Level 2), reduced to keywords (Level 3) and archived (Level 4), and its projected score
    at the end of each of the next 12 months (score × decay_coefficient^days, a day per
    batch). Ratio enforcement may compress it sooner.
    """
    with state.open() as kioku:
        memory = kioku.get(memory_id)
        if memory.kind is not Kind.EPISODE:
            item = kioku.read_memory(memory_id, mark=False).memory
            _show_kind(item, kioku.history(memory_id), as_json)
            return
        explained = kioku.explain(memory)
        original = kioku.read_memory(memory_id, mark=False).original
        versions = kioku.history(memory_id).get("versions") or []
    data = memory_to_dict(memory)
    if original is not None:
        data["original"] = {"trigger": original.trigger, "content": original.content}
    if versions:
        data["versions"] = versions
    data["retention"] = explanation_to_dict(explained)
    data["retention"]["projection"] = [
        {"at": p.at.isoformat(), "batches": p.batches, "score": round(p.score, 4), "level": p.level}
        for p in explained.projection
    ]
    if as_json:
        echo_json(data)
        return
    retention = data.pop("retention")
    data.pop("versions", None)
    key_width = max(len(k) for k in data)
    for key, value in data.items():
        if key == "relations":
            shown: object = ", ".join(f"{r['type']}→{r['id']}" for r in value)
        elif isinstance(value, list):
            shown = ", ".join(map(str, value))
        elif isinstance(value, float):
            shown = f"{value:.4f}".rstrip("0").rstrip(".")
        else:
            shown = value
        click.echo(f"{key:<{key_width}}  {'-' if shown in (None, '') else plain(shown)}")
    click.echo("")
    click.echo("retention")
    click.echo(
        f"  score now   {retention['score_now']:.2f}  (stored by the last batch; "
        "a new memory starts at its intensity)"
    )
    click.echo(f"  formula     {retention['formula']}")
    click.echo(
        f"  level       {retention['level']} ({retention['level_name']}); "
        f"the score points at level {retention['level_by_score']}"
    )
    click.echo(f"  next batch  {retention['next_batch_at']}")
    for step in retention["forecast"]:
        click.echo(
            f"  → L{step['level']} {step['level_name']:<8} in {step['days']:>4} day(s), "
            f"at the batch of {step['at'][:10]} (score ≤ {step['score_at_or_below']:g})"
        )
    click.echo(f"  note        {retention['note']}")
    if retention["referenced_by"]:
        click.echo(f"  linked from {', '.join(retention['referenced_by'])}")
    if retention["projection"]:
        click.echo("")
        click.echo("if never recalled, at the end of each month (score, level)")
        cells = [f"{p['at']}  {p['score']:7.2f}  L{p['level']}" for p in retention["projection"]]
        half = (len(cells) + 1) // 2
        right_column = cells[half:] + [""] * (2 * half - len(cells))
        for left, right in zip(cells[:half], right_column, strict=True):
            click.echo(f"  {left}    {right}".rstrip())
    if versions:
        click.echo("")
        click.echo("earlier versions (kept when it was edited)")
        for v in versions:
            click.echo(
                f"  version {v['version']:<4} saved {v['saved_at']}: “{excerpt(v['text'], 60)}”"
            )


def _show_kind(memory: Memory, history: dict[str, Any], as_json: bool) -> None:
    """``show`` for knowledge, procedures and profiles: their details, lifecycle, history."""
    data = memory_to_dict(memory)
    data["explanation"] = kind_explanation(memory)
    data["history"] = history
    if as_json:
        echo_json(data)
        return
    data.pop("history")
    details = data.pop("details") or {}
    explanation = data.pop("explanation")
    for key in ("id", "kind", "created", "updated_at", "trigger", "content", "protected"):
        click.echo(f"{key:<11}  {plain(data[key])}")
    click.echo("")
    click.echo(explanation["lifecycle"])
    for key, value in details.items():
        shown = json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value
        click.echo(f"  {key:<18} {'-' if shown in (None, '', '[]') else plain(shown)}")
    _echo_history(history)


def _echo_history(history: dict[str, Any]) -> None:
    """What the item replaced and what replaced it, with the times, and its versions."""
    lines: list[str] = []
    old, new = history.get("replaces"), history.get("replaced_by")
    if old:
        until = f", which held until {old['valid_until']}" if old.get("valid_until") else ""
        lines.append(f"  replaces     {old['id']} “{excerpt(old['text'] or '', 70)}”{until}")
    if new:
        since = f" since {new['valid_from']}" if new.get("valid_from") else ""
        lines.append(f"  replaced by  {new['id']} “{excerpt(new['text'] or '', 70)}”{since}")
    for item in history.get("merged_from") or []:
        if item:
            lines.append(f"  merged from  {item['id']} “{excerpt(item['text'] or '', 70)}”")
    for note in history.get("notes") or []:
        lines.append(f"  note         {plain(note)}")
    for v in history.get("versions") or []:
        lines.append(
            f"  version {v['version']:<4} saved {v['saved_at']}: “{excerpt(v['text'], 60)}”"
        )
    if history.get("low_activity_since"):
        lines.append(f"  low since    {history['low_activity_since']} (active forgetting)")
    if lines:
        click.echo("")
        click.echo("history")
        for line in lines:
            click.echo(line)


def _simple(name: str, verb: str, help_text: str) -> click.Command:
    @click.command(name, help=help_text)
    @click.argument("memory_id", metavar="ID")
    @json_option
    @click.pass_obj
    def command(state: CliState, memory_id: str, as_json: bool) -> None:
        with state.open() as kioku:
            memory = getattr(kioku, name)(memory_id)
        if as_json:
            echo_json(memory_to_dict(memory))
        else:
            click.echo(f"{verb} {memory.id}")

    return command


protect_cmd = _simple(
    "protect",
    "protected",
    "Protect a memory: it stays at its level and is never archived or deleted.",
)
unprotect_cmd = _simple(
    "unprotect", "unprotected", "Remove the protection of a memory; it fades like any other."
)


@click.command("forget")
@click.argument("memory_id", metavar="ID")
@click.option("--force", is_flag=True, help="Erase it even if it is protected.")
@json_option
@click.pass_obj
def forget_cmd(state: CliState, memory_id: str, force: bool, as_json: bool) -> None:
    """Erase a memory, with every relation to or from it, its vector and index entries.

    Its source ids are kept as tombstones (keyed digests), so importing or ingesting the same
    turn again never stores it again; the erasure is recorded in the audit log (no text).
    The store's files are scrubbed: see docs/privacy.md for what that guarantees. Backups
    made with `kioku backup` that still hold the memory are listed: kioku cannot erase them.
    """
    from kioku.interfaces.cli.erase_cmds import echo_erasure

    with state.open() as kioku:
        report = kioku.erase(memory_id, force=force)
    if as_json:
        echo_json({"forgotten": memory_id, **report.to_dict()})
    else:
        click.echo(f"forgot {memory_id}")
        echo_erasure(report)


COMMANDS = [add_cmd, list_cmd, show_cmd, protect_cmd, unprotect_cmd, forget_cmd]
