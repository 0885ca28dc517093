"""The Anthropic Messages API as an analyzer (``anthropic:claude-haiku-4-5`` by default).

``POST {base_url}/v1/messages`` with the headers ``x-api-key``, ``anthropic-version`` and
``content-type``; the answer's text is the concatenation of its ``text`` content blocks, and
``usage.input_tokens`` / ``usage.output_tokens`` are recorded for ``kioku stats --cost``.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from kioku.ports.usage import UsageSink

from .base import ChatAnalyzer, Reply, local_now, token_count
from .prompts import Prompt

__all__ = [
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_DEFAULT_MODEL",
    "ANTHROPIC_VERSION",
    "AnthropicAnalyzer",
]

ANTHROPIC_BASE_URL: Final = "https://api.anthropic.com"
ANTHROPIC_VERSION: Final = "2023-06-01"
ANTHROPIC_DEFAULT_MODEL: Final = "claude-haiku-4-5"


def read_messages_reply(body: Any) -> Reply:
    """Text and token counts from a Messages API answer (any shape; missing parts are empty)."""
    if not isinstance(body, dict):
        return Reply(None)
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    texts: list[str] = []
    blocks = body.get("content")
    if isinstance(blocks, list):
        for block in blocks:
            if isinstance(block, dict) and block.get("type", "text") == "text":
                text = block.get("text")
                if isinstance(text, str):
                    texts.append(text)
    joined = "".join(texts)
    return Reply(
        joined if joined.strip() else None,
        token_count(usage.get("input_tokens")),
        token_count(usage.get("output_tokens")),
    )


class AnthropicAnalyzer(ChatAnalyzer):
    """Analyze and compress with an Anthropic model through the Messages API."""

    def __init__(
        self,
        *,
        model: str = ANTHROPIC_DEFAULT_MODEL,
        api_key: str,
        base_url: str = "",
        temperature: float = 0.0,
        max_tokens: int = 1024,
        timeout_seconds: float = 30.0,
        max_retries: int = 3,
        usage_sink: UsageSink | None = None,
        clock: Callable[[], datetime] = local_now,
        sleep: Callable[[float], None] = time.sleep,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if not api_key:
            raise ValueError("the Anthropic API needs an API key")
        super().__init__(
            provider="anthropic",
            model=model,
            base_url=base_url or ANTHROPIC_BASE_URL,
            api_key=api_key,
            temperature=temperature,
            max_tokens=max_tokens,
            timeout_seconds=timeout_seconds,
            max_retries=max_retries,
            usage_sink=usage_sink,
            clock=clock,
            sleep=sleep,
            ssl_context=ssl_context,
        )

    @property
    def endpoint(self) -> str:
        base = self.base_url
        # Accept a base URL given with or without the version segment.
        return f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"

    def _complete(self, prompt: Prompt) -> Reply:
        payload = {
            "model": self.model,
            "max_tokens": self._max_tokens,
            "temperature": self._temperature,
            "system": prompt.system,
            "messages": [{"role": "user", "content": prompt.user}],
        }
        headers = {
            "x-api-key": self._api_key or "",
            "anthropic-version": ANTHROPIC_VERSION,
            "content-type": "application/json",
        }
        return read_messages_reply(self._post(self.endpoint, payload, headers))
