"""The fast path of ``kioku hook EVENT``: Claude Code runs a hook on every prompt, so this
parses the few arguments itself and never imports click or the other command modules.

Anything it does not understand (``--help``, an unknown option) goes to the click command
instead, which gives the usual help and errors.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from kioku.interfaces.claude_code.hooks import EVENTS, HookOptions, drain, log_error, run_hook

__all__ = ["parse_hook_argv", "run_fast"]

_GLOBAL = {"--home": "home", "--config": "config", "--user": "user", "--agent": "agent"}


def parse_hook_argv(argv: Sequence[str]) -> tuple[str, HookOptions] | None:
    """``(event, options)`` for ``[GLOBAL OPTIONS] hook EVENT``, or None to let click parse
    it (help, version, unknown options, anything else)."""
    values: dict[str, str] = {}
    i = 0
    while i < len(argv) and argv[i] != "hook":
        arg = argv[i]
        name, sep, value = arg.partition("=")
        if name not in _GLOBAL:
            return None
        if not sep:
            if i + 1 >= len(argv):
                return None
            value = argv[i + 1]
            i += 1
        values[_GLOBAL[name]] = value
        i += 1
    rest = list(argv[i + 1 :])
    if i >= len(argv) or len(rest) != 1 or (rest[0] not in EVENTS and rest[0] != "drain"):
        return None
    home = values.get("home") or None
    config = values.get("config") or os.environ.get("KIOKU_CONFIG") or None
    options = HookOptions(
        home=Path(home) if home else None,
        config_path=Path(config) if config else None,
        user_id=values.get("user") or None,
        agent_id=values.get("agent") or None,
    )
    return rest[0], options


def run_fast(argv: Sequence[str], stdin: bytes | None = None) -> int | None:
    """Run the hook ``argv`` names and return its exit code (always 0), or None when
    ``argv`` is not a plain hook invocation. ``stdin``: the payload when already read."""
    parsed = parse_hook_argv(argv)
    if parsed is None:
        return None
    event, options = parsed
    if event != "drain":
        return run_hook(event, options, raw=stdin)
    home: Path | None = None
    try:
        home = options.resolved_home
        report = drain(options)
        for error in report.errors:
            log_error(home, "drain", error, sys.stderr)
    except Exception as exc:
        if os.environ.get("KIOKU_DEBUG"):
            raise
        log_error(home, "drain", f"{type(exc).__name__}: {exc}", sys.stderr)
    return 0
