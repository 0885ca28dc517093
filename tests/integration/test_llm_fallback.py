"""FallbackAnalyzer: a failing provider never loses a turn."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest

from kioku.adapters.analyzers.llm import (
    AnthropicAnalyzer,
    FallbackAnalyzer,
    OpenAICompatAnalyzer,
)
from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.ports.analyzer import Analysis, Analyzer, Compressed, Turn
from tests.fakes import STALL, FakeLlmServer, Reply, StubAnalyzer

KEY = "sk-ant-test-SECRET-fallback-42"
TURN = Turn(user="やった、できた！テストが全部通った！", assistant="おめでとうございます！")


@pytest.fixture
def server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer() as s:
        yield s


class Warnings:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def __call__(self, message: str) -> None:
        self.messages.append(message)


def anthropic(server: FakeLlmServer, **kw: object) -> AnthropicAnalyzer:
    options: dict[str, object] = {
        "api_key": KEY,
        "base_url": server.url,
        "timeout_seconds": 2.0,
        "max_retries": 1,
        "sleep": lambda _s: None,
    }
    options.update(kw)
    return AnthropicAnalyzer(**options)  # type: ignore[arg-type]


def test_malformed_twice_falls_back_with_a_warning(server: FakeLlmServer) -> None:
    server.script(Reply.answer("I'd rather chat."), Reply.answer("```json\n{oops}\n```"))
    stub, warn = StubAnalyzer(), Warnings()
    analyzer = FallbackAnalyzer(anthropic(server), stub, warn)
    assert isinstance(analyzer, Analyzer)
    assert analyzer.name == "anthropic:claude-haiku-4-5"

    analysis = analyzer.analyze(TURN)
    assert analysis.analyzer == "stub"
    assert analysis.trigger == TURN.user  # the turn is kept
    (warning,) = analysis.warnings
    assert warning.startswith("anthropic:claude-haiku-4-5 failed (malformed output twice")
    assert warning.endswith("the stub analyzer analysed this turn")
    assert warn.messages == [warning]
    assert stub.calls == ["analyze"]
    assert len(server.requests) == 2


def test_the_offline_analyzer_stands_in_for_a_failing_server(server: FakeLlmServer) -> None:
    server.script(*[Reply.raw(500, '{"error": "overloaded"}')] * 2)
    warn = Warnings()
    analysis = FallbackAnalyzer(
        anthropic(server), OfflineAnalyzer(segmenter="script"), warn
    ).analyze(TURN)
    assert analysis.analyzer == "offline"
    assert analysis.valence.value == "positive"
    assert "HTTP 500" in analysis.warnings[-1]
    assert analysis.warnings[-1].endswith("the offline analyzer analysed this turn")
    assert len(warn.messages) == 1


def test_a_stalled_server_falls_back_within_the_timeouts(server: FakeLlmServer) -> None:
    server.script(STALL, STALL)
    warn = Warnings()
    waits: list[float] = []
    primary = anthropic(server, timeout_seconds=0.5, max_retries=1, sleep=waits.append)
    analysis = FallbackAnalyzer(primary, StubAnalyzer(), warn).analyze(TURN)
    assert analysis.analyzer == "stub"
    assert "within 0.5 s" in analysis.warnings[0]
    assert len(server.requests) == 2  # the attempt and its one retry, each cut by the timeout
    assert len(waits) == 1  # one backoff between them, through the injected sleep


def test_a_server_that_went_away_falls_back() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    primary = OpenAICompatAnalyzer(
        provider="ollama",
        model="llama3.1",
        base_url=f"http://127.0.0.1:{port}/v1",
        max_retries=2,
        sleep=lambda _s: None,
    )
    warn = Warnings()
    analysis = FallbackAnalyzer(primary, StubAnalyzer(), warn).analyze(TURN)
    assert "connection refused" in analysis.warnings[0]
    assert warn.messages


def test_summarize_and_keywords_fall_back_too(server: FakeLlmServer) -> None:
    server.script(*[Reply.answer('{"trigger": ""}')] * 4)
    stub, warn = StubAnalyzer(), Warnings()
    analyzer = FallbackAnalyzer(anthropic(server), stub, warn)
    assert analyzer.summarize("trigger text", "content text") == Compressed(
        "trigger text", "content text"
    )
    assert analyzer.extract_keywords("t", "c") == Compressed("stub, trigger", "stub, content")
    assert stub.calls == ["summarize", "keywords"]
    (message,) = warn.messages  # the second failure in a row is not said again
    assert "summarised this memory" in message


def test_success_passes_through_without_warnings(server: FakeLlmServer) -> None:
    stub, warn = StubAnalyzer(), Warnings()
    analysis = FallbackAnalyzer(anthropic(server), stub, warn).analyze(TURN)
    assert analysis.analyzer == "anthropic:claude-haiku-4-5"
    assert analysis.warnings == ()
    assert stub.calls == []
    assert warn.messages == []


class Broken:
    """A primary with a programming error."""

    name = "broken"

    def analyze(self, turn: Turn) -> Analysis:
        raise TypeError("a bug")

    def summarize(self, trigger: str, content: str) -> Compressed:
        raise KeyError("a bug")

    def extract_keywords(self, trigger: str, content: str) -> Compressed:
        raise AttributeError("a bug")


def test_programming_errors_are_never_swallowed() -> None:
    stub, warn = StubAnalyzer(), Warnings()
    analyzer = FallbackAnalyzer(Broken(), stub, warn)
    with pytest.raises(TypeError):
        analyzer.analyze(TURN)
    with pytest.raises(KeyError):
        analyzer.summarize("t", "c")
    with pytest.raises(AttributeError):
        analyzer.extract_keywords("t", "c")
    assert stub.calls == []
    assert warn.messages == []


def test_repeated_failures_pause_the_primary(server: FakeLlmServer) -> None:
    server.script(*[Reply.raw(503, "")] * 4)
    now = [100.0]
    stub, warn = StubAnalyzer(), Warnings()
    primary = anthropic(server, max_retries=0)
    analyzer = FallbackAnalyzer(
        primary, stub, warn, trip_after=2, cooldown=60, monotonic=lambda: now[0]
    )
    analyzer.analyze(TURN)
    tripped = analyzer.analyze(TURN)
    assert len(server.requests) == 2
    assert "used for the next 60 s" in tripped.warnings[-1]
    assert len(warn.messages) == 1  # one warning for the run of failures, not one per turn

    paused = analyzer.analyze(TURN)  # the server is not asked
    assert len(server.requests) == 2
    assert "paused after 2 failures" in paused.warnings[0]
    assert paused.analyzer == "stub"

    now[0] += 61  # after the pause the primary is asked again
    assert analyzer.analyze(TURN).analyzer == "stub"  # the third scripted 503
    assert len(server.requests) == 3
    assert analyzer.analyze(TURN).analyzer == "stub"  # the fourth: paused again
    now[0] += 61  # the server has recovered
    assert analyzer.analyze(TURN).analyzer == "anthropic:claude-haiku-4-5"
    assert len(warn.messages) == 1
    server.script(Reply.raw(503, ""))  # a new failure after a success is said again
    analyzer.analyze(TURN)
    assert len(warn.messages) == 2


def test_the_key_appears_in_no_warning_or_log(
    server: FakeLlmServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server.script(
        Reply.raw(500, f"upstream said: bad key {KEY}"),
        Reply.raw(401, f'{{"error": "invalid x-api-key {KEY}"}}'),
    )
    warn = Warnings()
    analyzer = FallbackAnalyzer(anthropic(server), StubAnalyzer(), warn)
    analysis = analyzer.analyze(TURN)
    produced = [*analysis.warnings, *warn.messages, caplog.text, repr(analyzer)]
    assert all(KEY not in text for text in produced)
    assert "[redacted]" in analysis.warnings[0]
