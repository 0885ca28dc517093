"""The standard-library JSON/HTTP client against a real server on loopback."""

from __future__ import annotations

import logging
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest

from kioku.adapters.analyzers.llm.errors import (
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeoutError,
)
from kioku.adapters.analyzers.llm.http import (
    backoff_delay,
    check_reachable,
    post_json,
    retry_after_seconds,
)
from kioku.errors import ConfigError
from tests.fakes import CLOSE, STALL, FakeLlmServer, Reply

KEY = "sk-test-SECRET-1234567890abcdef"
OK = '{"ok": true}'


@pytest.fixture
def server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer() as s:
        yield s


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _url(server: FakeLlmServer) -> str:
    return f"{server.v1_url}/chat/completions"


def _post(server: FakeLlmServer, sleep: Sleeps, **kw: object) -> tuple[int, object]:
    options: dict[str, object] = {"timeout": 2.0, "max_retries": 3}
    options.update(kw)
    return post_json(
        _url(server),
        {"model": "m", "text": "こんにちは"},
        {"authorization": f"Bearer {KEY}"},
        options["timeout"],  # type: ignore[arg-type]
        options["max_retries"],  # type: ignore[arg-type]
        sleep,
        provider="test:m",
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_posts_json_and_returns_the_decoded_answer(server: FakeLlmServer) -> None:
    server.script(Reply.raw(200, OK))
    status, body = _post(server, Sleeps())
    assert (status, body) == (200, {"ok": True})
    (request,) = server.requests
    assert request.body == {"model": "m", "text": "こんにちは"}
    assert request.headers["content-type"] == "application/json"
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_429_waits_as_long_as_retry_after_says(server: FakeLlmServer) -> None:
    server.script(Reply.raw(429, '{"error": "slow down"}', retry_after="1"), Reply.raw(200, OK))
    sleeps = Sleeps()
    assert _post(server, sleeps) == (200, {"ok": True})
    assert sleeps.waits == [1.0]
    assert len(server.requests) == 2


def test_429_really_waits_with_the_default_sleep(server: FakeLlmServer) -> None:
    server.script(Reply.raw(429, "", retry_after="1"), Reply.raw(200, OK))
    started = time.monotonic()
    status, _ = post_json(_url(server), {}, {}, 2.0, 1)
    assert status == 200
    assert time.monotonic() - started >= 0.9


def test_retry_after_as_an_http_date_and_the_cap() -> None:
    now = datetime(2026, 1, 18, 9, 0, tzinfo=UTC)
    soon = format_datetime(now + timedelta(seconds=30), usegmt=True)
    later = format_datetime(now + timedelta(hours=2), usegmt=True)
    assert retry_after_seconds({"retry-after": soon}, now=now.timestamp) == pytest.approx(30)
    assert retry_after_seconds({"Retry-After": later}, now=now.timestamp) == 60
    assert retry_after_seconds({"retry-after": "3600"}) == 60
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_is_exponential_with_bounded_jitter() -> None:
    assert backoff_delay(0, lambda: 0.0) == 0.25
    assert backoff_delay(0, lambda: 1.0) == 0.5
    assert backoff_delay(3, lambda: 1.0) == 4.0
    assert backoff_delay(30, lambda: 1.0) == 20.0


def test_500_twice_then_success(server: FakeLlmServer) -> None:
    server.script(Reply.raw(500, "oops"), Reply.raw(503, ""), Reply.raw(200, OK))
    sleeps = Sleeps()
    assert _post(server, sleeps) == (200, {"ok": True})
    assert len(server.requests) == 3
    assert len(sleeps.waits) == 2
    assert 0.25 <= sleeps.waits[0] <= 0.5
    assert 0.5 <= sleeps.waits[1] <= 1.0


def test_gives_up_after_the_last_retry(server: FakeLlmServer) -> None:
    server.script(*[Reply.raw(500, '{"error": "down"}')] * 3)
    sleeps = Sleeps()
    with pytest.raises(ProviderHTTPError) as info:
        _post(server, sleeps, max_retries=2)
    assert info.value.status == 500
    assert "HTTP 500" in str(info.value)
    assert "3 attempts" in str(info.value)
    assert len(server.requests) == 3
    assert len(sleeps.waits) == 2


def test_client_errors_are_not_retried_and_never_show_the_key(
    server: FakeLlmServer, caplog: pytest.LogCaptureFixture
) -> None:
    # Some providers quote the key they were given; the message must not.
    server.script(Reply.raw(401, f'{{"error": "Incorrect API key provided: {KEY}"}}'))
    sleeps = Sleeps()
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ProviderHTTPError) as info:
        _post(server, sleeps)
    assert len(server.requests) == 1
    assert sleeps.waits == []
    assert info.value.status == 401
    text = f"{info.value} {info.value!r} {info.value.body} {info.value.hint}"
    assert KEY not in text
    assert "[redacted]" in text
    assert "llm.api_key_env" in str(info.value)
    assert KEY not in caplog.text


def test_a_stalled_answer_is_cut_by_the_timeout(server: FakeLlmServer) -> None:
    server.script(STALL, STALL)
    started = time.monotonic()
    with pytest.raises(ProviderTimeoutError) as info:
        _post(server, Sleeps(), timeout=0.5, max_retries=1)
    # each attempt waited out its timeout (a lower bound: a busy machine cannot break it)
    assert time.monotonic() - started >= 0.9
    assert len(server.requests) == 2
    assert "0.5 s" in str(info.value)


def test_a_dropped_connection_is_retried(server: FakeLlmServer) -> None:
    server.script(CLOSE, Reply.raw(200, OK))
    assert _post(server, Sleeps()) == (200, {"ok": True})
    assert len(server.requests) == 2


def test_connection_refused_is_retried_then_reported(caplog: pytest.LogCaptureFixture) -> None:
    sleeps = Sleeps()
    caplog.set_level(logging.DEBUG, logger="kioku.llm")
    url = f"http://127.0.0.1:{free_port()}/v1/chat/completions"
    with pytest.raises(ProviderConnectionError) as info:
        post_json(url, {}, {"x-api-key": KEY}, 1.0, 2, sleeps, provider="test:m")
    assert len(sleeps.waits) == 2
    assert "connection refused" in str(info.value)
    assert "retry 1 of 2" in caplog.text
    assert KEY not in caplog.text
    assert KEY not in str(info.value)


def test_an_answer_that_is_not_json_is_a_provider_error(server: FakeLlmServer) -> None:
    server.script(Reply.raw(200, "<html>proxy login</html>"))
    with pytest.raises(ProviderError, match="not JSON"):
        _post(server, Sleeps())


def test_a_bad_url_is_a_provider_error() -> None:
    with pytest.raises(ProviderConnectionError, match="http:// or https://"):
        post_json("ftp://example.com/x", {}, {}, 1.0, 0)


def test_check_reachable_passes_for_a_running_server(server: FakeLlmServer) -> None:
    check_reachable(server.v1_url, 1.0)


def test_check_reachable_names_the_setting_when_nothing_listens() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ConfigError) as info:
        check_reachable(url, 1.0)
    assert info.value.key == "llm.base_url"
    assert "llm.base_url" in str(info.value)
    assert "connection refused" in str(info.value)


def test_check_reachable_rejects_a_url_that_is_not_http() -> None:
    with pytest.raises(ConfigError) as info:
        check_reachable("localhost:11434", 1.0, setting="llm.base_url")
    assert info.value.key == "llm.base_url"


# -- https -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def tls_server(certificate: tuple[Path, Path]) -> Iterator[FakeLlmServer]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*certificate)
    with FakeLlmServer(tls=context) as s:
        yield s


def test_https_with_a_trusted_certificate(
    tls_server: FakeLlmServer, certificate: tuple[Path, Path]
) -> None:
    tls_server.script(Reply.raw(200, OK))
    trust = ssl.create_default_context(cafile=str(certificate[0]))
    url = f"{tls_server.v1_url}/chat/completions"
    assert url.startswith("https://")
    assert post_json(url, {"a": 1}, {}, 2.0, 0, ssl_context=trust) == (200, {"ok": True})
    assert tls_server.requests[0].body == {"a": 1}


def test_https_with_an_untrusted_certificate_fails_at_once(tls_server: FakeLlmServer) -> None:
    sleeps = Sleeps()
    url = f"{tls_server.v1_url}/chat/completions"
    with pytest.raises(ProviderConnectionError, match="TLS") as info:
        post_json(url, {}, {"x-api-key": KEY}, 2.0, 3, sleeps)
    assert sleeps.waits == []
    assert KEY not in str(info.value)


def test_a_secret_in_the_url_query_is_not_shown() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1/chat/completions?api-key={KEY}"
    with pytest.raises(ProviderConnectionError) as info:
        post_json(url, {}, {}, 1.0, 0)
    assert KEY not in str(info.value)
    assert "/v1/chat/completions" in str(info.value)


def test_no_http_library_or_sdk_is_imported() -> None:
    code = (
        "import sys, kioku.adapters.analyzers.llm\n"
        "heavy = ('httpx', 'requests', 'aiohttp', 'anthropic', 'openai', 'urllib3')\n"
        "print(','.join(m for m in heavy if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
