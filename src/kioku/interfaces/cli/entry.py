"""The ``kioku`` executable's first stop: Claude Code hooks take a path that imports almost
nothing (they run on every prompt); everything else goes to the click command line.

A hook that has answered leaves at once: output flushed, log handlers closed, then
``os._exit``. Tearing down an interpreter that loaded numpy and the store costs a hook in process
about 60 ms, on every prompt, and frees nothing the operating system would not free anyway
(the store was closed, and so committed, before the hook returned).
"""

from __future__ import annotations

import os
import sys

__all__ = ["main"]


def _leave(code: int) -> None:
    """Exit with ``code`` without the interpreter's teardown."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        logging = sys.modules.get("logging")
        if logging is not None:
            logging.shutdown()
    finally:
        os._exit(code)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if "hook" in args:
        stdin: bytes | None = None
        if args[-1:] == ["user-prompt-submit"]:
            from kioku.interfaces.claude_code.hook_client import try_daemon

            try:
                answered, stdin = try_daemon(args)
            except Exception:  # the full hook below answers instead, and logs
                answered = False
            if answered:
                _leave(0)
        from kioku.interfaces.claude_code.hook_fast import run_fast

        fast = run_fast(args, stdin)
        if fast is not None:
            _leave(fast)
    from kioku.interfaces.cli.main import main as cli_main

    cli_main(args)
