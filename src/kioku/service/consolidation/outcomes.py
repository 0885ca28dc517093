"""成功/失敗追跡 (spec 001): procedures injected in a session judged at its boundary.

When a session is finalized, every procedure priming injected into it is judged on what the
session said after the injection: by the LLM when one is configured (``judge_outcome``), else
by plain cues ("it worked", 「うまくいった」 against "failed", 「エラー」), and only when the cues
say one thing. A judgement that is unclear counts nothing. The count is kept as
``report_procedure_outcome`` keeps it: ``confidence = success / max(1, success + failure)``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Final

from kioku.core.lifecycle.log import Event, LogEntry
from kioku.core.model import Kind, Memory
from kioku.service.consolidation.common import consolidator_of, log_entry

if TYPE_CHECKING:
    from kioku.ports.consolidation import Outcome
    from kioku.service.engine import Engine

__all__ = ["Judged", "apply_outcomes", "judge_outcomes", "offline_outcome"]

_SUCCESS: Final = re.compile(
    r"\b(?:it|that|this) (?:worked|works)\b|\bworked (?:fine|perfectly|great)\b|\bsucceeded\b"
    r"|\bsuccess(?:ful(?:ly)?)?\b|\b(?:all )?tests? pass(?:ed|es)?\b|\bfixed it\b"
    r"|\bdid the trick\b|\b(?:it's|it is|everything is|all) (?:working|good) now\b|\bwent through\b"
    r"|うまくいった|上手くいった|うまくいきました|上手くいきました|成功した|成功しました|できました"
    r"|解決した|解決しました|動いた|動きました|通った|通りました",
    re.IGNORECASE,
)
_FAILURE: Final = re.compile(
    r"\bfail(?:ed|s|ure)?\b|\bdid(?:n't| not) work\b|\bdoes(?:n't| not) work\b|\bbroke(?:n)?\b"
    r"|\berror\b|\bcrash(?:ed)?\b|\bstill (?:failing|broken)\b"
    r"|\bdid(?:n't| not) help\b|\bno luck\b"
    r"|失敗|うまくいかな|上手くいかな|うまくいきませんでした|上手くいきませんでした|動かな"
    r"|動きませんでした|エラー|通らな|ダメだった|だめだった",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Judged:
    """One injected procedure and what its session's outcome was."""

    memory_id: str
    outcome: Outcome
    by: str


def offline_outcome(text: str) -> Outcome:
    """Success or failure when the session's words say only one of them."""
    success, failure = bool(_SUCCESS.search(text)), bool(_FAILURE.search(text))
    if success and not failure:
        return "success"
    if failure and not success:
        return "failure"
    return "unknown"


def _primed_procedures(engine: Engine, session_id: str, since: datetime | None) -> list[str]:
    from kioku.core.activity.events import EventType
    from kioku.service.activity.log import read_events

    ids: list[str] = []
    for _, event in read_events(
        engine, since=since, types=(EventType.PRIMING.value,), session_id=session_id
    ):
        if event is not None:
            ids.extend(event.memory_ids)
    if not ids:
        return []
    found = engine.store.get_many(list(dict.fromkeys(ids)))
    return [m.id for m in found if m.kind is Kind.PROCEDURE and not m.archived]


def judge_outcomes(
    engine: Engine, session_id: str, turns: Sequence[Memory], since: datetime | None
) -> list[Judged]:
    """The outcome of every procedure primed in the session after ``since`` (the last turn
    finalized before, None for a session's first finalization), judged on the text of
    ``turns`` (its new turns). Errors of a provider leave the judgement to the cues."""
    if not turns:
        return []
    procedures = _primed_procedures(engine, session_id, since)
    if not procedures:
        return []
    text = "\n".join(f"{t.trigger}\n{t.content}" for t in turns)
    llm = consolidator_of(engine)
    judged: list[Judged] = []
    for memory in engine.store.get_many(procedures):
        outcome: Outcome = "unknown"
        by = "cues"
        if llm is not None:
            from kioku.errors import KiokuError

            try:
                outcome, by = llm.judge_outcome(memory.content, text), llm.name
            except KiokuError:
                outcome = offline_outcome(text)
        else:
            outcome = offline_outcome(text)
        if outcome != "unknown":
            judged.append(Judged(memory.id, outcome, by))
    return judged


def apply_outcomes(engine: Engine, judged: Sequence[Judged], at: datetime) -> None:
    """Count each judgement (inside the caller's transaction) and log it."""
    if not judged:
        return
    from kioku.service.kinds.writing import record_outcome

    entries: list[LogEntry] = []
    for j in judged:
        if engine.store.get(j.memory_id) is None:
            continue
        record_outcome(engine, j.memory_id, j.outcome == "success", at=at)
        entries.append(
            log_entry(
                engine,
                Event.OUTCOME,
                j.memory_id,
                at,
                at.date().isoformat(),
                {"outcome": j.outcome, "judged_by": j.by, "automatic": True},
            )
        )
    engine.store.append_log(entries)
