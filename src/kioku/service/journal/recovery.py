"""Orphaned journals become episodes (spec 001, ストリーミングジャーナル › リカバリー).

A journal left behind by a process that died mid-stream is read back, stored as one episode
(the trigger that started the response, the text streamed so far, a note of the tool calls)
and only then deleted, so a crash between the two never loses the text: the next recovery
finds the journal again, and the episode's source id makes the second store a no-op.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from kioku.core.timefmt import parse_ts
from kioku.errors import KiokuError
from kioku.service.engine import warn
from kioku.service.journal.files import JournalInUseError, discard, orphans, recover

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.service.engine import Engine
    from kioku.service.journal.files import JournalRecovery

__all__ = ["journal_dir", "recover_journals"]


def journal_dir(engine: Engine) -> Path:
    if engine.home is None:
        raise KiokuError(
            "this kioku has no home directory to keep journals in",
            hint="open it with Kioku.open(home)",
        )
    return engine.home / "shortterm"


def _content(found: JournalRecovery) -> str:
    text = found.text
    calls = [
        f"[tool {c.tool}: {'ok' if c.ok else 'failed' if c.finished else 'unfinished'}]"
        for c in found.tool_calls
    ]
    if calls:
        text = (text + "\n" if text else "") + " ".join(calls)
    if not found.completed:
        text += "\n[interrupted]"
    return text


def recover_journals(engine: Engine) -> list[Memory]:
    """Store every orphaned journal of this home as an episode; the episodes stored."""
    from kioku.service.remember.storing import remember_turn

    directory = journal_dir(engine)
    if not directory.is_dir():
        return []
    stored: list[Memory] = []
    for session in orphans(directory):
        try:
            found = recover(directory, session)
        except JournalInUseError:
            continue
        except KiokuError as exc:
            warn(engine, f"journal of session {session!r} could not be recovered: {exc}")
            continue
        if found.text.strip() or found.tool_calls:
            try:
                started: datetime | None = parse_ts(found.started_at, engine.clock.tz)
            except ValueError:
                started = None
            turn = remember_turn(
                engine,
                found.trigger or "(interrupted response)",
                _content(found),
                at=started,
                session_id=found.session_id,
                source_ids=[f"journal:{found.session_id}:{found.started_at}"],
            )
            stored.append(turn.memory)
        discard(found)
    return stored
