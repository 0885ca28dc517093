"""The spec's fallback trigger: a command that finds the nightly batch overdue starts it in the
background (detached, output in HOME/batch.log) and does not wait for it.

Only commands that use the memories do this; ``KIOKU_NO_AUTO_BATCH=1`` turns it off.
"""

from __future__ import annotations

import os

from kioku.interfaces.cli.state import CliState

__all__ = ["NO_TRIGGER", "after_command"]

#: Commands that never start a batch: the batch itself, the tools around it, and commands
#: that do not read or write memories.
NO_TRIGGER = frozenset(
    {
        "batch",
        "simulate",
        "schedule",
        "doctor",
        "backup",
        "config",
        "init",
        "analyze",
        "compress",
        "daemon",
    }
)


def after_command(state: CliState, command: str | None) -> int | None:
    """Start an overdue batch for ``state``'s home after ``command`` succeeded; its pid, or
    None. Never raises: a command's result does not depend on its background batch."""
    if command is None or command in NO_TRIGGER or not state.opened:
        return None
    from kioku.service.lifecycle.schedule import (
        auto_batch_disabled,
        batch_status,
        start_detached_batch,
    )

    if auto_batch_disabled(os.environ):
        return None
    try:
        from kioku.service.home import store_exists

        home = state.home
        if not store_exists(home, state.config_path):
            return None
        with state.open() as kioku:
            status = batch_status(kioku)
        if not status.overdue:
            return None
        return start_detached_batch(home, state.config_path, f"`kioku {command}`")
    except Exception:
        if os.environ.get("KIOKU_DEBUG"):
            raise
        return None
