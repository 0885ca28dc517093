"""OpenAI's Chat Completions API as an analyzer, and every server that speaks it.

``POST {base_url}/chat/completions`` with ``Authorization: Bearer KEY`` when a key is set (local
servers need none). The answer's text is ``choices[0].message.content``; token counts come from
``usage.prompt_tokens`` / ``usage.completion_tokens`` (zeros when a server leaves them out).

JSON mode is asked for with ``response_format``: ``{"type": "json_object"}`` by default, a JSON
schema for LM Studio (which refuses ``json_object``). Servers differ in what they accept, so a
``400``/``422`` answer that names ``response_format``, ``max_completion_tokens`` or
``temperature`` makes the analyzer adjust that one parameter, remember it, and send again.
"""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final, Literal

from kioku.ports.usage import UsageSink

from .base import ChatAnalyzer, Reply, local_now, token_count
from .errors import ProviderHTTPError
from .prompts import Prompt

__all__ = [
    "OPENAI_COMPAT_BASE_URLS",
    "OPENAI_COMPAT_DEFAULT_MODELS",
    "JsonMode",
    "OpenAICompatAnalyzer",
    "read_chat_reply",
]

log = logging.getLogger("kioku.llm")

JsonMode = Literal["json_object", "json_schema", "none"]

#: Where each OpenAI-compatible provider listens unless ``llm.base_url`` says otherwise.
OPENAI_COMPAT_BASE_URLS: Final = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
    "llamacpp": "http://localhost:8080/v1",
    "lmstudio": "http://localhost:1234/v1",
}
#: The model used when the configuration says ``default``; other providers need a model name.
OPENAI_COMPAT_DEFAULT_MODELS: Final = {"openai": "gpt-4o-mini", "ollama": "llama3.1"}
_JSON_MODES: Final[dict[str, JsonMode]] = {"lmstudio": "json_schema"}
_MAX_ADJUSTMENTS: Final = 3


def read_chat_reply(body: Any) -> Reply:
    """Text and token counts from a Chat Completions answer (missing parts are empty)."""
    if not isinstance(body, dict):
        return Reply(None)
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    text: str | None = None
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # content parts, as some servers send
            content = "".join(
                p.get("text", "") for p in content if isinstance(p, dict) and p.get("text")
            )
        if isinstance(content, str) and content.strip():
            text = content
    return Reply(
        text,
        token_count(usage.get("prompt_tokens")),
        token_count(usage.get("completion_tokens")),
    )


class OpenAICompatAnalyzer(ChatAnalyzer):
    """Analyze and compress through an OpenAI-compatible ``/chat/completions`` endpoint.

    ``provider`` is ``openai``, ``ollama``, ``vllm``, ``llamacpp``, ``lmstudio`` (each with a
    default ``base_url``) or any other name together with an explicit ``base_url``.
    """

    def __init__(
        self,
        *,
        provider: str = "openai",
        model: str,
        api_key: str | None = None,
        base_url: str = "",
        temperature: float = 0.0,
        max_tokens: int = 1024,
        timeout_seconds: float = 30.0,
        max_retries: int = 3,
        usage_sink: UsageSink | None = None,
        clock: Callable[[], datetime] = local_now,
        sleep: Callable[[float], None] = time.sleep,
        ssl_context: ssl.SSLContext | None = None,
        json_mode: JsonMode | None = None,
    ) -> None:
        url = base_url or OPENAI_COMPAT_BASE_URLS.get(provider, "")
        if not url:
            raise ValueError(f"provider {provider!r} needs a base_url")
        super().__init__(
            provider=provider,
            model=model,
            base_url=url,
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
        self._json_mode: JsonMode = json_mode or _JSON_MODES.get(provider, "json_object")
        self._tokens_field = "max_tokens"
        self._send_temperature = True

    @property
    def endpoint(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _payload(self, prompt: Prompt) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
        }
        if self._send_temperature:
            payload["temperature"] = self._temperature
        payload[self._tokens_field] = self._max_tokens
        if self._json_mode == "json_object":
            payload["response_format"] = {"type": "json_object"}
        elif self._json_mode == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": prompt.schema_name, "schema": prompt.schema},
            }
        return payload

    def _adjust(self, error_text: str) -> bool:
        """Change the one parameter a 400 answer complains about; False when none applies."""
        text = error_text.lower()
        if "response_format" in text and self._json_mode != "none":
            wants_schema = "json_schema" in text and self._json_mode == "json_object"
            self._json_mode = "json_schema" if wants_schema else "none"
        elif "max_completion_tokens" in text and self._tokens_field == "max_tokens":
            self._tokens_field = "max_completion_tokens"
        elif "temperature" in text and self._send_temperature:
            self._send_temperature = False
        else:
            return False
        log.info(
            "%s: the server refused a request parameter; sending again with json mode %s, %s%s",
            self.name,
            self._json_mode,
            self._tokens_field,
            "" if self._send_temperature else ", no temperature",
        )
        return True

    def _complete(self, prompt: Prompt) -> Reply:
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        for adjustment in range(_MAX_ADJUSTMENTS + 1):
            try:
                body = self._post(self.endpoint, self._payload(prompt), headers)
            except ProviderHTTPError as exc:
                if (
                    exc.status in (400, 422)
                    and adjustment < _MAX_ADJUSTMENTS
                    and self._adjust(exc.body)
                ):
                    continue
                raise
            return read_chat_reply(body)
        raise AssertionError("unreachable")  # pragma: no cover
