"""The ``kioku`` executable's first stop: Claude Code hooks take a path that imports almost
nothing (they run on every prompt); everything else goes to the click command line."""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if "hook" in args:
        stdin: bytes | None = None
        if args[-1:] == ["user-prompt-submit"]:
            from kioku.interfaces.cli.hook_client import try_daemon

            try:
                answered, stdin = try_daemon(args)
            except Exception:  # the full hook below answers instead, and logs
                answered = False
            if answered:
                sys.exit(0)
        from kioku.interfaces.cli.hook_fast import run_fast

        fast = run_fast(args, stdin)
        if fast is not None:
            sys.exit(fast)
    from kioku.interfaces.cli.main import main as cli_main

    cli_main(args)
