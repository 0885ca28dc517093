"""The mid-term tier of a working memory (spec 003 §2, §4, §7): a thread's turns filed when it
ends.

When a thread ends (or the session is flushed), its turns are scored by salience
(:func:`kioku.core.consolidation.salience.salience_parts`), each made ready for long-term
memory by the normal remember path first (:func:`~kioku.service.remember.storing.prepare_turn`:
the analysis and the vector):

* emotion: the analyzer's emotional intensity of the turn / 100;
* similarities: the cosine similarities of the turn's vector to its five nearest memories of
  the scope (not archived), looked up before any turn of the part is written;
* mentions: 1 + how many other turns of the thread (those being filed and those already in
  its entry) contain one of the turn's three main keywords (the analyzer's first three),
  case-insensitively. A turn without keywords is mentioned once.

The best ``long_term_share`` of them are written to long-term memory; a turn the remember path
refuses (a :class:`~kioku.errors.ValidationError`, such as text past the length limit) takes no
place in that ranking. Then the thread gets one mid-term entry: a summary by the analyzer,
keywords, the text of *every* turn (so the turns left out stay findable until the entry
expires), hot for ``midterm_hot_hours`` after its last turn and kept for ``midterm_days``. A
thread filed in several parts (a long thread) keeps one entry; each part adds its turns.

A part is filed in one transaction of the store: its long-term memories, its entry and the
kept working memory together, so a crash never writes a turn twice nor loses one. Any other
failure (the analyzer's provider is down) is raised and the part stays pending.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from kioku.core.consolidation.salience import (
    LONG_TERM_SHARE,
    NEIGHBOURS,
    Salience,
    long_term,
    salience_parts,
)
from kioku.errors import ValidationError
from kioku.ports.store_records import MidTermEntry
from kioku.service.context.window import TOOL_RESULT_CHARS, USER, Turn
from kioku.service.scope import scoped

if TYPE_CHECKING:
    from kioku.config.schema import ContextConfig
    from kioku.service.engine import Engine
    from kioku.service.remember.storing import PreparedTurn

__all__ = [
    "KEPT_DECISIONS",
    "MAIN_KEYWORDS",
    "MidTermFiler",
    "MidTermSettings",
    "TurnSalience",
    "midterm_settings",
    "score_part",
    "source_id",
    "thread_key",
    "turn_text",
]

_log = logging.getLogger("kioku.service.context.working_memory")

#: How many of the latest decisions a working memory keeps (in the store, with its window).
KEPT_DECISIONS: Final = 100
#: Keywords of one mid-term entry.
ENTRY_KEYWORDS: Final = 10
#: Characters of an entry's summary.
SUMMARY_CHARS: Final = 2000
#: Characters of each side (what was said, the replies) the summary is made from.
SUMMARY_INPUT_CHARS: Final = 4000
_EXCERPT = 80


@dataclass(frozen=True, slots=True)
class MidTermSettings:
    """What goes to long-term memory and how long a thread's entry is kept."""

    long_term_share: float = LONG_TERM_SHARE
    hot_hours: int = 24
    days: int = 7


def midterm_settings(cfg: ContextConfig | None, long_term_share: float | None) -> MidTermSettings:
    """``long_term_share`` given, else ``[context]``'s; the tier's times from ``[context]``."""
    share = long_term_share
    if share is None:
        share = cfg.long_term_share if cfg is not None else LONG_TERM_SHARE
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
        raise ValidationError("long_term_share", share, "a number in (0, 1]")
    if cfg is None:
        return MidTermSettings(float(share))
    return MidTermSettings(float(share), cfg.midterm_hot_hours, cfg.midterm_days)


@dataclass(frozen=True, slots=True)
class TurnSalience:
    """Why a turn went to long-term memory or stayed in the mid-term tier only: its salience
    parts (each 0-1 before weighting), its mentions and the total."""

    thread_id: str
    turn: int
    source_id: str
    excerpt: str
    emotion: float
    novelty: float
    relatedness: float
    repetition: float
    total: float
    mentions: int
    long_term: bool
    memory_id: str | None = None
    #: Why it could not go long-term (the remember path refused it), else empty.
    refused: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def thread_key(session_id: str, thread: int) -> str:
    """A thread's id in the mid-term tier: ``SESSION:THREAD``."""
    return f"{session_id}:{thread}"


def turn_text(turn: Turn) -> str:
    """A turn as the mid-term tier keeps it: one ``role: text`` block per message."""
    blocks = []
    for role, content in turn.parts:
        text = content
        if role not in (USER, "assistant") and len(text) > TOOL_RESULT_CHARS:
            text = text[:TOOL_RESULT_CHARS] + f" …[{len(content) - TOOL_RESULT_CHARS} more]"
        blocks.append(f"{role}: {text}")
    # a lone surrogate cannot be stored as UTF-8: it becomes "?"
    return "\n".join(blocks).encode("utf-8", "replace").decode("utf-8")


#: How many of a turn's keywords (the analyzer's order) count for its mentions.
MAIN_KEYWORDS = 3


@dataclass(slots=True)
class Scored:
    """One turn of a part: ready to be written (None: refused), its salience, its mentions,
    and whether it goes to long-term memory."""

    turn: Turn
    prepared: PreparedTurn | None
    salience: Salience
    mentions: int
    keywords: tuple[str, ...]
    long_term: bool = False
    #: Why the remember path refused the turn (``prepared`` is None), else empty.
    refused: str = ""


def source_id(session_id: str, turn: Turn) -> str:
    """The provenance of a turn's memory: ``SESSION:TURN``."""
    return f"{session_id}:{turn.number}"


def score_part(
    engine: Engine,
    session_id: str,
    turns: Sequence[Turn],
    texts: Sequence[str],
    earlier: Sequence[str],
    share: float,
) -> list[Scored]:
    """Score ``turns`` (their ``texts`` as kept in the mid-term tier; ``earlier``: the texts
    already in the thread's entry) and mark the best ``share`` for long-term memory."""
    from kioku.service.remember.storing import prepare_turn

    ready: list[PreparedTurn | None] = []
    refused: dict[int, str] = {}
    for turn in turns:
        try:
            ready.append(
                prepare_turn(
                    engine,
                    turn.user,
                    turn.replies,
                    at=turn.at,
                    session_id=session_id,
                    source_ids=[source_id(session_id, turn)],
                )
            )
        except ValidationError as exc:
            _log.warning("turn %d stays in the mid-term tier only: %s", turn.number, exc)
            refused[len(ready)] = str(exc)
            ready.append(None)
    folded = [t.casefold() for t in (*texts, *earlier)]
    scored: list[Scored] = []
    for i, (turn, prepared) in enumerate(zip(turns, ready, strict=True)):
        if prepared is None:
            nothing = salience_parts(0.0, [], 1)
            scored.append(Scored(turn, None, nothing, 1, (), refused=refused[i]))
            continue
        keywords = tuple(k for k in prepared.analysis.keywords if k.strip())
        main = [k.casefold() for k in keywords[:MAIN_KEYWORDS]]
        others = (t for j, t in enumerate(folded) if j != i)
        mentions = 1 + sum(1 for t in others if any(k in t for k in main))
        parts = salience_parts(
            prepared.analysis.intensity / 100, _similarities(engine, prepared), mentions
        )
        scored.append(Scored(turn, prepared, parts, mentions, keywords))
    ranked = [(str(i), s.salience.total) for i, s in enumerate(scored) if s.prepared is not None]
    kept, _ = long_term(ranked, share)
    for index in kept:
        scored[int(index)].long_term = True
    return scored


def _similarities(engine: Engine, prepared: PreparedTurn) -> list[float]:
    """The similarities of the turn's vector to its nearest memories of the scope."""
    embedding = prepared.memory.embedding
    if embedding is None or not any(embedding.vector):
        return []
    found = engine.store.vector_search(
        embedding.model, embedding.vector, scoped(engine, archived=False), NEIGHBOURS
    )
    return [similarity for _, similarity in found]


class MidTermFiler:
    """Files the parts of a session's threads: long-term memory and the mid-term tier."""

    def __init__(self, engine: Engine, session_id: str, settings: MidTermSettings) -> None:
        self.engine = engine
        self.session_id = session_id
        self.settings = settings
        #: The latest decisions, oldest first (at most :data:`KEPT_DECISIONS`).
        self.decisions: list[TurnSalience] = []
        self._encoded = ""  # the decisions as JSON, made when they change

    def file(self, part: Sequence[Turn], save: Callable[[int], None] | None) -> int:
        """File ``part`` (the waiting turns of one thread); how many went to long-term memory.

        ``save(n)`` keeps the working memory in the store, with ``n`` more turns stored; it
        runs in the same transaction. On an error nothing is written and the turns stay
        pending.
        """
        live = [t for t in part if t.user.strip() or t.replies.strip()]
        for turn in part:
            if not (turn.user.strip() or turn.replies.strip()):
                turn.stored = True  # nothing to remember
        if not live:
            return 0
        engine = self.engine
        key = thread_key(self.session_id, live[0].thread)
        end = max(t.at for t in live)
        texts = [turn_text(t) for t in live]
        earlier = self._entry(key, end)
        scored = score_part(
            engine,
            self.session_id,
            live,
            texts,
            earlier.turns if earlier else (),
            self.settings.long_term_share,
        )
        summary = self._summary(earlier.summary if earlier else "", live)
        decided = len(self.decisions)
        try:
            with engine.store.atomic():
                stored = self._write(scored)
                engine.store.put_midterm(self._merged(key, end, summary, texts, scored))
                for turn in live:
                    turn.stored = True
                self._decide(key, scored)
                if save is not None:
                    save(stored)
        except BaseException:
            for turn in live:
                turn.stored = False
                turn.memory_id = None
            del self.decisions[decided:]
            self._encode()
            raise
        return stored

    def _write(self, scored: Sequence[Scored]) -> int:
        from kioku.service.remember.storing import store_turn

        written = 0
        for s in scored:
            if s.long_term and s.prepared is not None:
                s.turn.memory_id = store_turn(self.engine, s.prepared).memory.id
                written += 1
        return written

    def _entry(self, key: str, end: datetime) -> MidTermEntry | None:
        engine = self.engine
        found = engine.store.midterm(engine.user_id, engine.agent_id, end, thread_id=key)
        return found[0] if found else None

    def _merged(
        self, key: str, end: datetime, summary: str, texts: Sequence[str], scored: Sequence[Scored]
    ) -> MidTermEntry:
        """The thread's entry with this part added (read again inside the transaction)."""
        engine = self.engine
        earlier = self._entry(key, end)
        created = max(end, earlier.created) if earlier else end
        weight: dict[str, float] = {}  # a keyword weighs the salience of its turns
        first: dict[str, str] = {}
        for s in scored:
            for word in s.keywords:
                folded = word.casefold()
                weight[folded] = weight.get(folded, 0.0) + s.salience.total
                first.setdefault(folded, word)
        unique: dict[str, str] = {}
        for word in sorted(weight, key=lambda k: -weight[k]):
            unique.setdefault(word, first[word])
        for word in earlier.keywords if earlier else ():
            unique.setdefault(word.casefold(), word)
        return MidTermEntry(
            thread_id=key,
            user_id=engine.user_id,
            agent_id=engine.agent_id,
            created=created,
            hot_until=created + timedelta(hours=self.settings.hot_hours),
            expires=created + timedelta(days=self.settings.days),
            summary=summary,
            keywords=tuple(unique.values())[:ENTRY_KEYWORDS],
            turns=(*(earlier.turns if earlier else ()), *texts),
            turn_count=(earlier.turn_count if earlier else 0) + len(texts),
            session_id=self.session_id,
        )

    def _summary(self, previous: str, turns: Sequence[Turn]) -> str:
        """The analyzer's summary of the thread: its earlier summary and these turns' user
        messages, then their replies (the first :data:`SUMMARY_INPUT_CHARS` of each). A
        summary that fails is an excerpt of the text."""
        users = "\n".join(t.user for t in turns if t.user.strip())
        replies = "\n".join(t.replies for t in turns if t.replies.strip())[:SUMMARY_INPUT_CHARS]
        said = "\n".join(x for x in (previous, users) if x)[:SUMMARY_INPUT_CHARS]
        try:
            compressed = self.engine.analyzer.summarize(said, replies)
            summary = "\n".join(x.strip() for x in (compressed.trigger, compressed.content))
        except Exception as exc:  # the tier keeps the turns; the summary is a convenience
            _log.warning("mid-term summary failed, an excerpt stands in: %s", exc)
            summary = ""
        summary = summary.strip() or " ".join((said or replies).split())
        return summary[:SUMMARY_CHARS]

    def _decide(self, key: str, scored: Sequence[Scored]) -> None:
        for s in scored:
            p = s.salience
            self.decisions.append(
                TurnSalience(
                    thread_id=key,
                    turn=s.turn.number,
                    source_id=source_id(self.session_id, s.turn),
                    excerpt=" ".join((s.turn.user or s.turn.replies).split())[:_EXCERPT],
                    emotion=round(p.emotion, 4),
                    novelty=round(p.novelty, 4),
                    relatedness=round(p.relatedness, 4),
                    repetition=round(p.repetition, 4),
                    total=round(p.total, 4),
                    mentions=s.mentions,
                    long_term=s.long_term,
                    memory_id=s.turn.memory_id if s.long_term else None,
                    refused=s.refused,
                )
            )
        del self.decisions[:-KEPT_DECISIONS]
        self._encode()

    def _encode(self) -> None:
        items = [d.as_dict() for d in self.decisions]
        self._encoded = json.dumps(items, ensure_ascii=False) if items else ""

    # -- kept with the window ----------------------------------------------------------------

    def kept(self, window: str) -> str:
        """``window`` (the kept working memory, one JSON object) with the latest decisions
        added as its key ``salience`` (spliced in: the window is written at every change)."""
        if not self._encoded:
            return window
        if not window.endswith("}"):
            raise ValueError("the kept working memory is not a JSON object")
        return f'{window[:-1]}, "salience": {self._encoded}}}'

    def restore(self, data: dict[str, Any]) -> None:
        """The decisions kept by :meth:`kept` (none when they are unreadable)."""
        try:
            self.decisions = [TurnSalience(**d) for d in data.get("salience", [])]
        except (TypeError, AttributeError) as exc:
            _log.warning("the kept salience of %s is unreadable: %s", self.session_id, exc)
            self.decisions = []
        self._encode()
