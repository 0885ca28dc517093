"""The similarity rule of a working memory's threads (spec 003 §3): a thread's user messages
summed into one vector by the engine's embedder, and a new user message compared with it.

It applies only with a semantic embedding model: the offline embedder hashes words, so two
turns on one topic score about 0.0-0.3 with it and every turn would end its thread.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kioku.service.engine import Engine

__all__ = ["ThreadTopic"]

_log = logging.getLogger("kioku.service.context.working_memory")


class ThreadTopic:
    """The vector of the current thread, and the similarity of new user messages to it."""

    def __init__(self, engine: Engine | None) -> None:
        self.engine = engine
        #: The sum of the vectors of the thread's user messages (None: none yet).
        self.vector: Any = None
        self._pending: Any = None

    def semantic(self) -> bool:
        """Whether the engine's embedder can tell topics apart (not the offline one)."""
        if self.engine is None:
            return False
        try:
            model = self.engine.embedder.model_id
        except Exception:  # an embedder that cannot start: no similarity rule
            return False
        return not model.startswith("offline")

    def embed(self, text: str, active: bool) -> Any:
        """The vector of ``text``, or None when the rule is off (``active`` False) or the
        embedder fails (the rule is skipped, the turn is not lost)."""
        if not active or self.engine is None:
            return None
        try:
            return self.engine.embedder.embed([text])[0]
        except Exception as exc:
            _log.warning("thread similarity unavailable: %s", exc)
            return None

    def similarity(self, text: str, active: bool) -> float | None:
        """How similar ``text`` is to the thread so far (None when it cannot be said)."""
        if self.vector is None:
            return None
        vector = self.embed(text, active)
        if vector is None:
            return None
        norm = float((self.vector @ self.vector) ** 0.5)
        if norm == 0:
            return None
        self._pending = vector
        return float(vector @ self.vector) / norm

    def note(self, text: str, active: bool) -> None:
        """Add the vector of a new user message (computed by :meth:`similarity` or now)."""
        vector, self._pending = self._pending, None
        if vector is None:
            vector = self.embed(text, active)
        if vector is None:
            return
        self.vector = vector if self.vector is None else self.vector + vector

    def reset(self) -> None:
        """A new thread begins."""
        self.vector = None
