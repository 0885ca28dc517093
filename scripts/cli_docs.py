#!/usr/bin/env python3
"""Write docs/cli.md from the commands' own --help text.

python scripts/cli_docs.py          # rewrite docs/cli.md
python scripts/cli_docs.py --check  # exit 1 if docs/cli.md is out of date (run by the tests)
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kioku.interfaces.cli.main import LazyGroup, cli

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"

HEADER = """# Command reference

Generated from `kioku --help` by `python scripts/cli_docs.py`; a test fails when it is out of date.
Global options (`--home`, `--config`, `--user`, `--agent`) go before the command name:
`kioku --home ~/work-memory list`.
"""


def _walk(command: click.Command, path: list[str]) -> list[tuple[list[str], click.Command]]:
    found = [(path, command)]
    if isinstance(command, click.Group):
        found_commands = (
            command.all_commands() if isinstance(command, LazyGroup) else command.commands
        )
        for name in sorted(found_commands):
            found.extend(_walk(found_commands[name], [*path, name]))
    return found


def render() -> str:
    parts = [HEADER]
    for path, command in _walk(cli, ["kioku"]):
        ctx = click.Context(command, info_name=" ".join(path), terminal_width=100)
        title = " ".join(path)
        parts.append(f"\n## {title}\n\n```\n{command.get_help(ctx)}\n```\n")
    return "".join(parts)


def main() -> None:
    text = render()
    if "--check" in sys.argv[1:]:
        if not DOC.exists() or DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC} is out of date: run python scripts/cli_docs.py", file=sys.stderr)
            sys.exit(1)
        return
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
