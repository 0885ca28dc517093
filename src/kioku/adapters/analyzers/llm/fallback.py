"""An LLM analyzer with a stand-in: a turn is never lost because a provider failed.

:class:`FallbackAnalyzer` asks the primary analyzer; when it raises a
:class:`~kioku.adapters.analyzers.llm.errors.ProviderError` (HTTP failures after the retries, a
timeout, malformed output after its one retry) the fallback (normally the offline analyzer)
answers that call and a warning is added to ``Analysis.warnings``. Profile extraction
(:meth:`FallbackAnalyzer.extract_profile`) falls back to the offline
:func:`~kioku.core.profiles.extract_profile_claims` the same way. ``warn`` hears only the
first failure of a run of failures (not one line per turn while a server is down); after a
success the next failure is reported again. Other exceptions are programming errors and
propagate.

After ``trip_after`` provider failures in a row the primary is not asked for ``cooldown``
seconds, so a session of fifty turns with the server down does not wait out fifty sets of
retries; the first call after the pause tries the primary again.

Consolidation: when the primary is a :class:`~kioku.ports.consolidation.Consolidator`,
``FallbackAnalyzer(...)`` builds a :class:`ConsolidatingFallbackAnalyzer`, which is one too;
otherwise it is not one, so ``isinstance(analyzer, Consolidator)`` tells the service
whether the LLM steps can run at all. The offline analyzer cannot consolidate, so a provider
error of a consolidation call propagates (the service reports the step as skipped); it counts
towards the pause, and while the primary is paused such a call fails at once. A fallback that
is a Consolidator itself stands in as it does for the other calls.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Self, TypeVar, cast

from kioku.core.consolidation.model import (
    ConflictJudgement,
    KnowledgeCandidate,
    ProcedureCandidate,
    Source,
)
from kioku.core.profiles import ProfileClaim, extract_profile_claims
from kioku.ports.analyzer import Analysis, Analyzer, Compressed, ProfileExtractor, Turn
from kioku.ports.consolidation import Consolidator, Outcome

from .errors import ProviderError

__all__ = ["ConsolidatingFallbackAnalyzer", "FallbackAnalyzer"]

T = TypeVar("T")


class FallbackAnalyzer:
    """``primary`` with ``fallback`` standing in whenever the primary's provider fails."""

    def __new__(cls, primary: Analyzer, *args: object, **kwargs: object) -> Self:
        if cls is FallbackAnalyzer and isinstance(primary, Consolidator):
            return cast(Self, super().__new__(ConsolidatingFallbackAnalyzer))
        return super().__new__(cls)

    def __init__(
        self,
        primary: Analyzer,
        fallback: Analyzer,
        warn: Callable[[str], None],
        *,
        trip_after: int = 3,
        cooldown: float = 300.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if trip_after < 1:
            raise ValueError("trip_after must be at least 1")
        self._primary = primary
        self._fallback = fallback
        self._warn = warn
        self._trip_after = trip_after
        self._cooldown = cooldown
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._failures = 0
        self._failing = False  # a failure since the last success: ``warn`` was told
        self._paused_until: float | None = None

    @property
    def name(self) -> str:
        return self._primary.name

    @property
    def primary(self) -> Analyzer:
        return self._primary

    @property
    def fallback(self) -> Analyzer:
        return self._fallback

    def __repr__(self) -> str:
        return f"FallbackAnalyzer(primary={self._primary!r}, fallback={self._fallback!r})"

    def analyze(self, turn: Turn) -> Analysis:
        result, warning = self._call(lambda a: a.analyze(turn), "analysed this turn")
        if warning is None:
            return result
        return replace(result, warnings=(*result.warnings, warning))

    def summarize(self, trigger: str, content: str) -> Compressed:
        result, _ = self._call(lambda a: a.summarize(trigger, content), "summarised this memory")
        return result

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        result, _ = self._call(
            lambda a: a.extract_keywords(trigger, content),
            "extracted the keywords of this memory",
        )
        return result

    def extract_profile(self, text: str, speaker: str | None) -> list[ProfileClaim]:
        """The primary's profile claims; when its provider fails, the fallback's (the offline
        extractor's, unless the fallback analyzer extracts profiles itself). A primary that
        cannot extract profiles is not asked: the offline extractor answers, no failure
        counted, no warning."""
        if not isinstance(self._primary, ProfileExtractor):
            return extract_profile_claims(text, speaker=speaker)

        def task(analyzer: Analyzer) -> list[ProfileClaim]:
            if isinstance(analyzer, ProfileExtractor):
                return analyzer.extract_profile(text, speaker)
            return extract_profile_claims(text, speaker=speaker)

        claims, _ = self._call(task, "read the speaker's profile from this turn")
        return claims

    def _paused(self) -> bool:
        with self._lock:
            if self._paused_until is None:
                return False
            if self._monotonic() >= self._paused_until:
                self._paused_until = None
                return False
            return True

    def _call(self, task: Callable[[Analyzer], T], done: str) -> tuple[T, str | None]:
        stand_in = f"the {self._fallback.name} analyzer {done}"
        if self._paused():
            warning = (
                f"{self._primary.name} is paused after {self._trip_after} failures in a row; "
                f"{stand_in}"
            )
            return task(self._fallback), warning
        try:
            result = task(self._primary)
        except ProviderError as exc:
            warning = f"{self._primary.name} failed ({exc.reason}); {stand_in}"
            with self._lock:
                first = not self._failing
                self._failing = True
                self._failures += 1
                if self._failures >= self._trip_after:
                    self._failures = 0
                    self._paused_until = self._monotonic() + self._cooldown
                    warning += (
                        f"; after {self._trip_after} failures in a row the "
                        f"{self._fallback.name} analyzer is used for the next {self._cooldown:g} s"
                    )
            if first:
                self._warn(warning)
            return task(self._fallback), warning
        with self._lock:
            self._failures = 0
            self._failing = False
        return result, None


class ConsolidatingFallbackAnalyzer(FallbackAnalyzer):
    """A :class:`FallbackAnalyzer` whose primary consolidates: also a
    :class:`~kioku.ports.consolidation.Consolidator` (see the module docstring)."""

    def extract_knowledge(
        self, episodes: Sequence[Source], resolved: Sequence[str]
    ) -> list[KnowledgeCandidate]:
        return self._consolidate(lambda c: c.extract_knowledge(episodes, resolved))

    def distil_procedures(self, episodes: Sequence[Source]) -> list[ProcedureCandidate]:
        return self._consolidate(lambda c: c.distil_procedures(episodes))

    def review_knowledge(self, candidate: str, sources: Sequence[str]) -> bool:
        return self._consolidate(lambda c: c.review_knowledge(candidate, sources))

    def judge_conflict(self, older: str, newer: str) -> ConflictJudgement:
        return self._consolidate(lambda c: c.judge_conflict(older, newer))

    def reconsolidate(self, memory: str, episode: str) -> str | None:
        return self._consolidate(lambda c: c.reconsolidate(memory, episode))

    def merge_texts(self, texts: Sequence[str]) -> str:
        return self._consolidate(lambda c: c.merge_texts(texts))

    def judge_outcome(self, procedure: str, session: str) -> Outcome:
        return self._consolidate(lambda c: c.judge_outcome(procedure, session))

    def _consolidate(self, task: Callable[[Consolidator], T]) -> T:
        primary = self._primary
        if not isinstance(primary, Consolidator):  # pragma: no cover - see FallbackAnalyzer
            raise TypeError(f"{primary.name} cannot consolidate")
        if isinstance(self._fallback, Consolidator):
            result, _ = self._call(
                lambda a: task(cast(Consolidator, a)), "answered this consolidation step"
            )
            return result
        if self._paused():
            raise ProviderError(
                primary.name,
                f"paused after {self._trip_after} failures in a row",
                hint=f"the provider is asked again after {self._cooldown:g} s",
            )
        try:
            result = task(primary)
        except ProviderError:
            with self._lock:
                self._failures += 1
                if self._failures >= self._trip_after:
                    self._failures = 0
                    self._paused_until = self._monotonic() + self._cooldown
            raise
        with self._lock:
            self._failures = 0
            self._failing = False
        return result
