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
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TypeVar

from kioku.core.profiles import ProfileClaim, extract_profile_claims
from kioku.ports.analyzer import Analysis, Analyzer, Compressed, ProfileExtractor, Turn

from .errors import ProviderError

__all__ = ["FallbackAnalyzer"]

T = TypeVar("T")


class FallbackAnalyzer:
    """``primary`` with ``fallback`` standing in whenever the primary's provider fails."""

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
