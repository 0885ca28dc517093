"""JSON over HTTP on the standard library, with retries, for the LLM analyzers.

No SDK and no third-party client: ``http.client`` keeps the install and the hook path light.

* One attempt is bounded by ``timeout`` as a whole (connect, send, the answer's headers and its
  body), so a server that accepts and then stalls, or trickles bytes, is cut off.
* Retried, with exponential backoff and jitter (0.5 s × 2^n, at most 20 s): 408, 425, 429 and 5xx
  answers, refused/reset/dropped connections, and timeouts. A ``retry-after`` (seconds or an
  HTTP date) or ``retry-after-ms`` header is honoured, capped at 60 s.
* Not retried: other 4xx answers (a bad key or model will not get better), TLS errors.
* Every message is redacted: the values of credential headers and any ``secrets`` passed in
  never appear in an error or a log line, and URLs are shown without user info or query.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, Final
from urllib.parse import urlsplit

from kioku.errors import ConfigError

from .errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeoutError,
    ProviderUnreachableError,
)

__all__ = [
    "HttpTarget",
    "backoff_delay",
    "check_reachable",
    "parse_target",
    "post_json",
    "redact",
    "retry_after_seconds",
]

log = logging.getLogger("kioku.llm")

BACKOFF_BASE: Final = 0.5
BACKOFF_MAX: Final = 20.0
RETRY_AFTER_MAX: Final = 60.0
#: Answers larger than this are refused: an analysis is a few hundred bytes.
MAX_BODY_BYTES: Final = 8 * 1024 * 1024
#: Headers whose values are credentials.
SECRET_HEADERS: Final = frozenset({"authorization", "x-api-key", "api-key", "proxy-authorization"})
RETRY_STATUSES: Final = frozenset({408, 425, 429})
REDACTED: Final = "[redacted]"
_ERROR_BODY_CHARS: Final = 500


@dataclass(frozen=True, slots=True)
class HttpTarget:
    """A parsed ``http``/``https`` URL."""

    scheme: str
    host: str
    port: int
    path: str
    query: str = ""

    @property
    def request_path(self) -> str:
        """The path and query, as sent in the request line."""
        return f"{self.path}?{self.query}" if self.query else self.path

    @property
    def safe_url(self) -> str:
        """The URL without user info, query or fragment (fit for messages)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}{self.path}"


def parse_target(url: str) -> HttpTarget:
    """Parse an ``http``/``https`` URL; :class:`ValueError` says what is wrong with it."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ValueError("the URL must start with http:// or https://")
    host = parts.hostname
    if not host:
        raise ValueError("the URL has no host")
    try:
        port = parts.port or (443 if scheme == "https" else 80)
    except ValueError:
        raise ValueError("the URL has an invalid port") from None
    return HttpTarget(scheme, host, port, parts.path or "/", parts.query)


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret (and the token part of ``Bearer …``) replaced."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def _secrets_of(headers: Mapping[str, str], extra: Iterable[str]) -> tuple[str, ...]:
    found = [s.strip() for s in extra if s and s.strip()]
    for name, value in headers.items():
        if name.lower() in SECRET_HEADERS and value:
            found.append(value)
            scheme, _, token = value.partition(" ")
            if token.strip() and scheme.lower() in ("bearer", "basic", "token"):
                found.append(token.strip())
    return tuple(found)


def backoff_delay(retry: int, rand: Callable[[], float] = random.random) -> float:
    """The wait before retry number ``retry`` (0-based): half fixed, half jitter."""
    base: float = min(BACKOFF_MAX, BACKOFF_BASE * 2.0 ** min(retry, 16))
    return base / 2 + rand() * base / 2


def retry_after_seconds(
    headers: Mapping[str, str], now: Callable[[], float] = time.time
) -> float | None:
    """The wait a ``retry-after-ms`` or ``retry-after`` header asks for, capped at 60 s."""
    lowered = {k.lower(): v for k, v in headers.items()}
    wait: float | None = None
    ms = lowered.get("retry-after-ms", "").strip()
    if ms:
        try:
            wait = float(ms) / 1000.0
        except ValueError:
            wait = None
    value = lowered.get("retry-after", "").strip()
    if wait is None and value:
        try:
            wait = float(value)
        except ValueError:
            try:
                wait = parsedate_to_datetime(value).timestamp() - now()
            except (TypeError, ValueError, IndexError, OverflowError):
                wait = None
    if wait is None or wait != wait:  # absent, unreadable or NaN
        return None
    return max(0.0, min(RETRY_AFTER_MAX, wait))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(exc, ConnectionResetError | BrokenPipeError | ConnectionAbortedError):
        return "connection reset"
    if isinstance(exc, http.client.IncompleteRead):
        return "the answer was cut off"
    if isinstance(exc, socket.gaierror):
        return "the host name could not be resolved"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate not trusted ({exc.verify_message})"
    detail = str(exc).strip()
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _set_timeout(sock: socket.socket | None, deadline: float) -> None:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("deadline reached")
    if sock is not None:
        sock.settimeout(remaining)


class _TooLargeError(Exception):
    pass


def _send_once(
    target: HttpTarget,
    body: bytes,
    headers: Mapping[str, str],
    timeout: float,
    ssl_context: ssl.SSLContext | None,
) -> tuple[int, dict[str, str], bytes]:
    deadline = time.monotonic() + timeout
    conn: http.client.HTTPConnection
    if target.scheme == "https":
        context = ssl_context or ssl.create_default_context()
        conn = http.client.HTTPSConnection(
            target.host, target.port, timeout=timeout, context=context
        )
    else:
        conn = http.client.HTTPConnection(target.host, target.port, timeout=timeout)
    response: http.client.HTTPResponse | None = None
    try:
        conn.connect()
        # Keep the socket: the connection may drop its reference once the answer starts.
        sock = conn.sock
        _set_timeout(sock, deadline)
        conn.request("POST", target.request_path, body=body, headers=dict(headers))
        _set_timeout(sock, deadline)
        response = conn.getresponse()
        chunks: list[bytes] = []
        size = 0
        while not response.isclosed():  # closed once the whole body has been read
            _set_timeout(sock, deadline)
            chunk = response.read(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise _TooLargeError
            chunks.append(chunk)
        answer_headers = {k.lower(): v for k, v in response.getheaders()}
        return response.status, answer_headers, b"".join(chunks)
    finally:
        if response is not None:
            response.close()
        conn.close()


def _hint_for(status: int) -> str | None:
    if status in (401, 403):
        return "check the API key (llm.api_key_env or llm.api_key)"
    if status == 404:
        return "check llm.base_url and llm.model"
    return None


def post_json(
    url: str,
    payload: Mapping[str, Any],
    headers: Mapping[str, str],
    timeout: float,
    max_retries: int,
    sleep: Callable[[float], None] = time.sleep,
    *,
    provider: str = "llm",
    secrets: Iterable[str] = (),
    ssl_context: ssl.SSLContext | None = None,
    rand: Callable[[], float] = random.random,
) -> tuple[int, Any]:
    """POST ``payload`` as JSON and return ``(status, decoded JSON answer)`` for a 2xx answer.

    Makes up to ``max_retries + 1`` attempts, each bounded by ``timeout`` seconds. Raises
    :class:`ProviderHTTPError`, :class:`ProviderTimeoutError` or :class:`ProviderConnectionError`
    (all :class:`ProviderError`) when it gives up; ``provider`` names the caller in messages.
    """
    all_headers = {
        "content-type": "application/json",
        "accept": "application/json",
        "user-agent": "kioku",
    }
    all_headers.update({k.lower(): v for k, v in headers.items()})
    hidden = _secrets_of(all_headers, secrets)
    try:
        target = parse_target(url)
    except ValueError as exc:
        shown = redact(url.split("?", 1)[0], hidden)
        raise ProviderConnectionError(provider, f"cannot call {shown!r}: {exc}") from None
    body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    attempts = max(0, max_retries) + 1
    where = target.safe_url

    def fail(problem: str) -> str:
        return redact(problem, hidden)

    last: ProviderError | None = None
    for attempt in range(attempts):
        wait: float | None = None
        try:
            status, answer_headers, raw = _send_once(
                target, body, all_headers, timeout, ssl_context
            )
        except _TooLargeError:
            raise ProviderError(
                provider, f"the answer from {where} exceeded {MAX_BODY_BYTES} bytes"
            ) from None
        except TimeoutError:
            last = ProviderTimeoutError(
                provider,
                f"no complete answer from {where} within {timeout:g} s "
                f"({attempt + 1} attempt{'s' if attempt else ''})",
                hint="raise llm.timeout_seconds or check the server",
            )
        except ssl.SSLError as exc:
            if not isinstance(exc, ssl.SSLEOFError):
                raise ProviderConnectionError(
                    provider,
                    fail(f"TLS with {where} failed: {_describe(exc)}"),
                    hint="check llm.base_url (http or https) and the system's CA certificates",
                ) from None
            last = ProviderConnectionError(provider, fail(f"{where}: {_describe(exc)}"))
        except (OSError, http.client.HTTPException) as exc:
            last = ProviderConnectionError(
                provider,
                fail(
                    f"cannot reach {where}: {_describe(exc)} ({attempt + 1} attempt"
                    f"{'s' if attempt else ''})"
                ),
                hint="check that the server runs and llm.base_url is right",
            )
        else:
            if 200 <= status < 300:
                try:
                    return status, json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    raise ProviderError(
                        provider, f"the answer from {where} (HTTP {status}) was not JSON"
                    ) from None
            # Redact the whole body before cutting it, so no part of a key survives the cut.
            excerpt = " ".join(fail(raw.decode("utf-8", "replace")).split())[:_ERROR_BODY_CHARS]
            retryable = status in RETRY_STATUSES or 500 <= status <= 599
            if not retryable:
                raise ProviderHTTPError(
                    provider,
                    f"HTTP {status} from {where}" + (f": {excerpt}" if excerpt else ""),
                    status=status,
                    body=excerpt,
                    hint=_hint_for(status),
                )
            last = ProviderHTTPError(
                provider,
                f"HTTP {status} from {where} after {attempt + 1} attempt"
                f"{'s' if attempt else ''}" + (f": {excerpt}" if excerpt else ""),
                status=status,
                body=excerpt,
            )
            wait = retry_after_seconds(answer_headers)
        if attempt + 1 < attempts:
            delay = wait if wait is not None else backoff_delay(attempt, rand)
            log.debug(
                "%s: %s; retry %d of %d in %.2f s",
                provider,
                last.reason,
                attempt + 1,
                attempts - 1,
                delay,
            )
            sleep(delay)
    assert last is not None
    raise last


def check_reachable(base_url: str, timeout: float, *, setting: str = "llm.base_url") -> None:
    """Connect to the host and port of ``base_url`` once (used at start-up): a
    :class:`ConfigError` naming ``setting`` when the URL is invalid, a
    :class:`ProviderUnreachableError` (a ConfigError too) when nothing answers there."""
    try:
        target = parse_target(base_url)
    except ValueError as exc:
        raise ConfigError(
            setting, base_url, "an http:// or https:// URL", hint=f"{exc}; fix {setting}"
        ) from None
    try:
        socket.create_connection((target.host, target.port), timeout=timeout).close()
    except OSError as exc:
        raise ProviderUnreachableError(
            setting,
            target.safe_url,
            "the URL of a running server",
            hint=(
                f"cannot connect to {target.host}:{target.port} ({_describe(exc)}); "
                f"start the server or fix {setting}"
            ),
        ) from None
