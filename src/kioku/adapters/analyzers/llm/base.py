"""What every LLM analyzer shares: the tasks, one retry on bad output, usage records.

A provider module supplies only the wire format (:meth:`ChatAnalyzer._complete`): how to send a
:class:`~kioku.adapters.analyzers.llm.prompts.Prompt` and read the text and token counts back.
"""

from __future__ import annotations

import ssl
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from kioku.core.consolidation.model import (
    ConflictJudgement,
    KnowledgeCandidate,
    ProcedureCandidate,
    Source,
)
from kioku.core.profiles import SCAN_LIMIT, ProfileClaim
from kioku.core.usage import Purpose, Usage
from kioku.ports.analyzer import Analysis, Compressed, Turn
from kioku.ports.consolidation import Outcome
from kioku.ports.usage import UsageSink

from . import consolidation_prompt as consolidation
from . import prompts
from .errors import MalformedOutputError
from .http import post_json
from .parse import InvalidOutputError, parse_analysis, parse_compressed, parse_keywords
from .profile_prompt import parse_profile, profile_prompt

__all__ = ["ChatAnalyzer", "Reply", "local_now"]

T = TypeVar("T")


def local_now() -> datetime:
    """The current time, timezone-aware in the local zone."""
    return datetime.now().astimezone()


@dataclass(frozen=True, slots=True)
class Reply:
    """What came back from one call: the model's text (None when there was none) and tokens."""

    text: str | None
    input_tokens: int = 0
    output_tokens: int = 0


def token_count(value: Any) -> int:
    """A token count from a usage object: a non-negative int, else 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return 0
    return value


class ChatAnalyzer(ABC):
    """An :class:`~kioku.ports.analyzer.Analyzer` backed by a chat-style LLM HTTP API; also a
    :class:`~kioku.ports.analyzer.ProfileExtractor` and a
    :class:`~kioku.ports.consolidation.Consolidator`."""

    def __init__(
        self,
        *,
        provider: str,
        model: str,
        base_url: str,
        api_key: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        timeout_seconds: float = 30.0,
        max_retries: int = 3,
        usage_sink: UsageSink | None = None,
        clock: Callable[[], datetime] = local_now,
        sleep: Callable[[float], None] = time.sleep,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if not model.strip():
            raise ValueError("model must not be empty")
        if timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be positive")
        self._provider = provider
        self._model = model
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key or None
        self._temperature = temperature
        self._max_tokens = max_tokens
        self._timeout = timeout_seconds
        self._max_retries = max_retries
        self._usage_sink = usage_sink
        self._clock = clock
        self._sleep = sleep
        self._ssl_context = ssl_context

    # -- the Analyzer port ----------------------------------------------------------------

    @property
    def name(self) -> str:
        return f"{self._provider}:{self._model}"

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model(self) -> str:
        return self._model

    @property
    def base_url(self) -> str:
        return self._base_url

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}(name={self.name!r}, base_url={self._base_url!r})"

    def analyze(self, turn: Turn) -> Analysis:
        return self._ask(
            "analyze",
            prompts.analysis_prompt(turn),
            lambda text: parse_analysis(text, turn=turn, analyzer=self.name),
        )

    def summarize(self, trigger: str, content: str) -> Compressed:
        return self._ask("summarize", prompts.summary_prompt(trigger, content), parse_compressed)

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        return self._ask("keywords", prompts.keywords_prompt(trigger, content), parse_keywords)

    def extract_profile(self, text: str, speaker: str | None) -> list[ProfileClaim]:
        """What ``speaker`` says about themselves in ``text`` (its first ``SCAN_LIMIT``
        characters); only claims whose evidence the text shows. A blank text costs no call."""
        head = text[:SCAN_LIMIT]
        if not head.strip():
            return []
        return self._ask(
            "profile",
            profile_prompt(head),
            lambda answer: parse_profile(answer, text=head, speaker=speaker),
        )

    # -- the Consolidator port: usage purpose "consolidate"; nothing to read costs no call ----

    def extract_knowledge(
        self, episodes: Sequence[Source], resolved: Sequence[str]
    ) -> list[KnowledgeCandidate]:
        if not episodes:
            return []
        return self._ask(
            "consolidate",
            consolidation.extraction_prompt(episodes, resolved),
            lambda answer: consolidation.parse_knowledge(answer, episodes),
        )

    def distil_procedures(self, episodes: Sequence[Source]) -> list[ProcedureCandidate]:
        if not episodes:
            return []
        return self._ask(
            "consolidate",
            consolidation.procedures_prompt(episodes),
            lambda answer: consolidation.parse_procedures(answer, episodes),
        )

    def review_knowledge(self, candidate: str, sources: Sequence[str]) -> bool:
        """False without a call when there is no candidate or no source text to support it."""
        if not candidate.strip() or not any(s.strip() for s in sources):
            return False
        prompt = consolidation.review_prompt(candidate, [s for s in sources if s.strip()])
        return self._ask("consolidate", prompt, consolidation.parse_review)

    def judge_conflict(self, older: str, newer: str) -> ConflictJudgement:
        """No contradiction, without a call, when either text is blank."""
        if not older.strip() or not newer.strip():
            return ConflictJudgement(False, reason="a text is empty")
        prompt = consolidation.conflict_prompt(older, newer)
        return self._ask("consolidate", prompt, consolidation.parse_conflict)

    def reconsolidate(self, memory: str, episode: str) -> str | None:
        """None without a call when either text is blank, or the memory is too long to be
        sent whole (a rewrite of part of it would lose the rest)."""
        if not memory.strip() or not episode.strip() or len(memory) > consolidation.MAX_CHARS:
            return None
        return self._ask(
            "consolidate",
            consolidation.reconsolidation_prompt(memory, episode),
            lambda answer: consolidation.parse_reconsolidation(answer, memory),
        )

    def merge_texts(self, texts: Sequence[str]) -> str:
        """One text; a single text (or the same text repeated) is returned without a call."""
        kept = list(dict.fromkeys(t.strip() for t in texts if t.strip()))
        if not kept:
            raise ValueError("there is no text to merge")
        if len(kept) == 1:
            return kept[0]
        prompt = consolidation.merge_prompt(kept)
        return self._ask("consolidate", prompt, consolidation.parse_merge)

    def judge_outcome(self, procedure: str, session: str) -> Outcome:
        """``unknown`` without a call when either text is blank."""
        if not procedure.strip() or not session.strip():
            return "unknown"
        prompt = consolidation.outcome_prompt(procedure, session)
        return self._ask("consolidate", prompt, consolidation.parse_outcome)

    # -- shared machinery -----------------------------------------------------------------

    def _ask(self, purpose: Purpose, prompt: prompts.Prompt, parse: Callable[[str], T]) -> T:
        """One request; on unusable output one more that repeats the instructions."""
        problem = ""
        for attempt in range(2):
            reply = self._complete(
                prompt if attempt == 0 else prompts.retry_prompt(prompt, problem)
            )
            self._record(purpose, reply)
            if reply.text is None:
                problem = "the reply had no text"
                continue
            try:
                return parse(reply.text)
            except InvalidOutputError as exc:
                problem = exc.reason
        raise MalformedOutputError(
            self.name,
            f"malformed output twice; {problem}",
            hint="try another model, or the offline analyzer (llm.provider = offline)",
        )

    def _record(self, purpose: Purpose, reply: Reply) -> None:
        if self._usage_sink is None:
            return
        self._usage_sink.record_usage(
            Usage(
                provider=self._provider,
                model=self._model,
                purpose=purpose,
                input_tokens=reply.input_tokens,
                output_tokens=reply.output_tokens,
                at=self._clock(),
            )
        )

    def _post(self, url: str, payload: Mapping[str, Any], headers: Mapping[str, str]) -> Any:
        """POST through the retrying client; the JSON answer of a 2xx reply."""
        _, body = post_json(
            url,
            payload,
            headers,
            self._timeout,
            self._max_retries,
            self._sleep,
            provider=self.name,
            secrets=(self._api_key,) if self._api_key else (),
            ssl_context=self._ssl_context,
        )
        return body

    @abstractmethod
    def _complete(self, prompt: prompts.Prompt) -> Reply:
        """Send ``prompt`` and return the model's text with the tokens used."""
