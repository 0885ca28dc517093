"""Working memory from the command line: ``kioku context prune``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from kioku.interfaces.cli.render import echo_json
from kioku.interfaces.cli.state import CliState

__all__ = ["COMMANDS"]

PRESETS = ("balanced", "conservative", "aggressive")


def _read(path: str) -> object:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        hint = f"{reason}; give a readable JSON file or - for stdin"
        raise click.FileError(path, hint=hint) from None
    except UnicodeDecodeError:
        raise click.FileError(path, hint="it is not UTF-8 text; give a JSON file") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(
            f"{path} is not valid JSON ({exc}); give a JSON list of "
            '{"role": ..., "content": ...} objects',
            param_hint="FILE",
        ) from None


def _preview(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


@click.group("context")
def context_group() -> None:
    """Working memory: keep a conversation inside its token budget (spec 002)."""


@context_group.command("prune")
@click.argument("file", metavar="FILE.json")
@click.option(
    "--max-tokens",
    type=click.IntRange(64, 10_000_000),
    help="Token budget (default: the preset's: 8000, 6000 or 12000).",
)
@click.option(
    "--preset",
    type=click.Choice(PRESETS, case_sensitive=False),
    help="Thresholds of spec 002 §14 (default: [context] preset, else balanced).",
)
@click.option(
    "--tokenizer",
    metavar="SPEC",
    help='"estimate", "tiktoken:ENCODING" or "hf:PATH/tokenizer.json".',
)
@click.option(
    "--summaries/--no-summaries",
    default=None,
    help="Summarise runs of 5+ removed messages with the analyzer (default on).",
)
@click.option("--force", is_flag=True, help="Prune even below the threshold (to the target).")
@click.option(
    "--remember",
    is_flag=True,
    help="File the removed turns: the most salient (context.long_term_share) become "
    "long-term memories, every one is kept in the mid-term tier.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the pruned messages (a JSON list) to this file.",
)
@click.option("--json", "as_json", is_flag=True, help='Print {"messages", "stats"} as JSON.')
@click.pass_obj
def prune_cmd(
    state: CliState,
    file: str,
    max_tokens: int | None,
    preset: str | None,
    tokenizer: str | None,
    summaries: bool | None,
    force: bool,
    remember: bool,
    output: Path | None,
    as_json: bool,
) -> None:
    """Prune a conversation (FILE.json, or - for stdin) to its token budget.

    FILE is a JSON list of {"role", "content"} messages (content a string or a list of
    text blocks), or an object with such a "messages" list. Each message is scored by
    recency, role and content; the least important are removed down to the preset's
    target, and each run of removed messages becomes a summary or a notice. Nothing
    happens below the preset's threshold unless --force. The newest messages and leading
    system messages are always kept.

    Exit 2 when FILE is not such a list.
    """
    from kioku.core.context import messages_from_json
    from kioku.service.context.working_memory import WorkingMemory

    messages = messages_from_json(_read(file))
    with state.open() as kioku:  # the store itself is opened only to --remember
        wm = WorkingMemory(
            max_tokens=max_tokens,
            preset=preset,
            kioku=kioku,
            tokenizer=tokenizer,
            summaries=summaries,
            auto_prune=False,
            remember=remember,
            durable=False,  # one file, one prune: nothing to continue later
            # a file is one window: no thread rules, only the budget
            thread_similarity=0,
            thread_idle_minutes=0,
            max_turns=1000,
        )
        for m in messages:
            wm.add(m.role, m.content)
        pruned, stats = wm.prune(force=force)
        if remember:
            wm.store_left()
        stored = wm.stats().turns_stored if remember else 0
    state.opened = remember  # only a command that wrote memories may start an overdue batch
    before = len(messages)
    data: dict[str, Any] = {
        "stats": stats.as_dict(),
        "stored": stored,
    }
    if output is not None:
        output.write_text(json.dumps(pruned, ensure_ascii=False, indent=2) + "\n", "utf-8")
    if as_json:
        echo_json({"messages": pruned, **data})
        return
    s = data["stats"]
    if not s["pruned"]:
        click.echo(
            f"nothing pruned: {s['original_tokens']} of {s['max_tokens']} tokens "
            f"({s['original_tokens'] / s['max_tokens']:.0%}), {before} messages"
        )
    else:
        click.echo(
            f"pruned {s['original_count']} → {s['final_count']} messages, "
            f"{s['original_tokens']} → {s['final_tokens']} of {s['max_tokens']} tokens "
            f"(stage {s['stage']}; {s['summaries']} summaries, {s['notices']} notices)"
        )
    for item in pruned:
        click.echo(f"  {item['role']:<9} {_preview(item['content'])}")
    if remember:
        click.echo(f"remembered {stored} removed turn(s)")


COMMANDS = [context_group]
