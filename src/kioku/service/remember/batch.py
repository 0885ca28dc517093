"""Storing many prepared turns at once: what :func:`~.storing.store_turn` does to each of
them in order, in one transaction, with the memories written by one insert.

Writing the turns one by one costs a savepoint, a flush of the lexical index and a new
version of the vector and lexical caches per turn; here a run of turns shares them. What is
stored is what storing the turns one at a time, in order, stores: an exact duplicate of a
stored memory or of an earlier turn of the same call is known, not stored again (the same
rule as :func:`~.turns.find_duplicate`); a turn of an erased source is known and never
stored; the activity log gets each stored turn's lines in turn order; each session keeps the
mood of its last turn; the profiles learn from the stored turns in order. A turn that asks
for protection is stored by itself, in its place in the order, so the protected-memory cap
is checked exactly as one at a time.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from kioku.errors import DuplicateIdError
from kioku.ports.erasure import ErasedSourceError
from kioku.service.remember.turns import RememberedTurn, find_duplicate, is_duplicate
from kioku.service.vectors import note_vector_model

if TYPE_CHECKING:
    from kioku.core.model import Memory
    from kioku.service.engine import Engine
    from kioku.service.remember.storing import PreparedTurn

__all__ = ["store_turns"]

#: Fresh ids drawn for the memories of one insert before a DuplicateIdError is let through.
_ID_ATTEMPTS = 8


def store_turns(engine: Engine, turns: Sequence[PreparedTurn]) -> list[RememberedTurn]:
    """Store prepared turns in order, in one transaction (the caller's, if any): the same
    memories, activity lines, session moods and profiles as :func:`~.storing.store_turn` on
    each of them, one ``RememberedTurn`` per turn."""
    from kioku.service.remember.storing import store_turn

    results: list[RememberedTurn] = []
    with engine.store.atomic():
        run: list[PreparedTurn] = []
        for turn in turns:
            if turn.memory.protected:
                results += _store_run(engine, run)
                run = []
                results.append(store_turn(engine, turn))
            else:
                run.append(turn)
        results += _store_run(engine, run)
    return results


def _store_run(engine: Engine, run: Sequence[PreparedTurn]) -> list[RememberedTurn]:
    """Store turns none of which asks for protection (inside the caller's transaction)."""
    if not run:
        return []
    store = engine.store
    # Each turn: the memory it stands for and whether it was known already; the new ones
    # by their place in ``new``.
    found: list[tuple[Memory, bool] | int] = []
    new: list[Memory] = []
    by_text: dict[tuple[str, str], list[Memory]] = {}
    for turn in run:
        memory = turn.memory
        same = by_text.setdefault((memory.trigger, memory.content), [])
        earlier = next((m for m in same if is_duplicate(memory, m)), None)
        if earlier is None:
            earlier = find_duplicate(store, memory)
        if earlier is not None:
            found.append((earlier, True))
        else:
            found.append(len(new))
            new.append(memory)
            same.append(memory)
    stored = _insert(engine, new)
    done: list[tuple[Memory, bool]] = []
    for item in found:
        if isinstance(item, int):
            # A turn of an erased source is known, and never stored (as one at a time).
            inserted = stored[item]
            done.append((new[item], True) if inserted is None else (inserted, False))
        else:
            done.append(item)
    _after_insert(engine, run, done)
    return [
        RememberedTurn(memory, turn.analysis, known=known)
        for turn, (memory, known) in zip(run, done, strict=True)
    ]


def _fresh_id(memory: Memory) -> Memory:
    from kioku.core.ids import make_memory_id

    return replace(memory, id=make_memory_id(memory.created, secrets.token_hex(4)))


def _insert(engine: Engine, memories: list[Memory]) -> list[Memory | None]:
    """Insert ``memories`` at once, leaving out those of an erased source (None in their
    place); an id taken already, or twice among them, is drawn again."""
    pending: dict[int, Memory] = {}
    ids: set[str] = set()
    for place, memory in enumerate(memories):
        while memory.id in ids:
            memory = _fresh_id(memory)
        ids.add(memory.id)
        pending[place] = memory
    redraws = 0
    while pending:
        try:
            engine.store.add_many(list(pending.values()))
            break
        except ErasedSourceError as exc:
            pending = {k: m for k, m in pending.items() if exc.source_id not in m.source_ids}
        except DuplicateIdError as exc:
            redraws += 1
            if redraws >= _ID_ATTEMPTS:
                raise
            pending = {k: _fresh_id(m) if m.id == exc.memory_id else m for k, m in pending.items()}
    if pending:
        note_vector_model(engine, next(iter(pending.values())))
    return [pending.get(place) for place in range(len(memories))]


def _after_insert(
    engine: Engine, run: Sequence[PreparedTurn], done: Sequence[tuple[Memory, bool]]
) -> None:
    """The activity lines of the stored turns, what the profiles learn from them (both in
    turn order) and each session's mood (its last turn's)."""
    from kioku.service.activity.log import log_events
    from kioku.service.kinds.profiles import KnownProfiles, learn_from_turn
    from kioku.service.recall.mood import SessionMood, session_key
    from kioku.service.remember.storing import turn_events

    last: dict[str, Memory] = {}  # each session's last turn, in the order sessions first come
    events = []
    for turn, (memory, known) in zip(run, done, strict=True):
        if turn.session_id:
            last[session_key(turn.session_id)] = memory
        if not known:
            events += turn_events(engine, memory, turn)
    for key, memory in last.items():
        engine.store.set_state(key, SessionMood.of(memory).to_json())
    log_events(engine, events)
    # Listed once for the run, and again only after a turn writes a profile.
    profiles = KnownProfiles()
    for turn, (memory, known) in zip(run, done, strict=True):
        if not known:
            learn_from_turn(
                engine, memory, text=turn.user or None, claims=list(turn.claims), known=profiles
            )
