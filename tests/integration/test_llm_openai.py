"""OpenAICompatAnalyzer (OpenAI, Ollama, vLLM, llama.cpp, LM Studio) against the fake server."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from kioku.adapters.analyzers.llm import (
    KNOWN_PROVIDERS,
    OpenAICompatAnalyzer,
    ProviderHTTPError,
    build_llm_analyzer,
)
from kioku.config.schema import LlmConfig
from kioku.core.model import Valence
from kioku.errors import ConfigError
from kioku.ports.analyzer import Turn
from tests.fakes import FakeLlmServer, RecordingSink, Reply, Request, default_answer

KEY = "sk-proj-test-SECRET-abcdef123456"
NOW = datetime(2026, 1, 18, 18, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
TOKENS_REFUSED = "Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens' instead."
TURN = Turn(
    user="How do list comprehensions work in Python?",
    assistant="They build a list from an iterable: [x * 2 for x in xs if x > 0].",
)


@pytest.fixture
def server() -> Iterator[FakeLlmServer]:
    with FakeLlmServer() as s:
        yield s


def make(server: FakeLlmServer, **kw: object) -> OpenAICompatAnalyzer:
    options: dict[str, object] = {
        "provider": "openai",
        "model": "gpt-4o-mini",
        "api_key": KEY,
        "base_url": server.v1_url,
        "timeout_seconds": 2.0,
        "max_retries": 1,
        "clock": lambda: NOW,
        "sleep": lambda _s: None,
    }
    options.update(kw)
    return OpenAICompatAnalyzer(**options)  # type: ignore[arg-type]


def test_analyze_happy_path(server: FakeLlmServer) -> None:
    sink = RecordingSink()
    analysis = make(server, usage_sink=sink).analyze(TURN)
    assert analysis.valence is Valence.POSITIVE
    assert (analysis.intensity, analysis.arousal, analysis.category) == (35, 40, "work")
    assert analysis.language == "en"
    assert analysis.analyzer == "openai:gpt-4o-mini"

    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["model"] == "gpt-4o-mini"
    assert body["temperature"] == 0
    assert body["max_tokens"] == 1024
    assert body["response_format"] == {"type": "json_object"}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "JSON" in body["messages"][0]["content"]  # json_object mode requires the word
    assert json.dumps(TURN.user)[1:-1] in request.user

    (usage,) = sink.records
    assert (usage.provider, usage.model, usage.purpose) == ("openai", "gpt-4o-mini", "analyze")
    assert (usage.input_tokens, usage.output_tokens, usage.at) == (120, 45, NOW)


def test_missing_usage_counts_zero(server: FakeLlmServer) -> None:
    server.script(Reply.answer(default_answer(Request("/v1/chat/completions", {}, {})), usage=None))
    sink = RecordingSink()
    make(server, usage_sink=sink).analyze(TURN)
    assert (sink.records[0].input_tokens, sink.records[0].output_tokens) == (0, 0)


def test_summarize_and_keywords_round_trip(server: FakeLlmServer) -> None:
    sink = RecordingSink()
    analyzer = make(server, usage_sink=sink)
    server.script(
        Reply.answer({"trigger": "Asked about Python syntax.", "content": "Explained it."}),
        Reply.answer({"trigger": ["Python", "syntax"], "content": "list comprehension、example"}),
    )
    summary = analyzer.summarize("a long trigger", "a long content")
    assert (summary.trigger, summary.content) == ("Asked about Python syntax.", "Explained it.")
    keywords = analyzer.extract_keywords(summary.trigger, summary.content)
    assert (keywords.trigger, keywords.content) == ("Python, syntax", "list comprehension, example")
    assert [u.purpose for u in sink.records] == ["summarize", "keywords"]


def test_malformed_once_then_valid(server: FakeLlmServer) -> None:
    answer = default_answer(Request("/v1/chat/completions", {}, {}))
    server.script(Reply.answer({**answer, "category": "banter"}))
    assert make(server).analyze(TURN).category == "work"
    assert len(server.requests) == 2
    assert "category is not one of" in server.requests[1].user


def test_local_server_without_a_key_sends_no_authorization(server: FakeLlmServer) -> None:
    analyzer = make(server, provider="ollama", model="llama3.1", api_key=None)
    assert analyzer.analyze(TURN).analyzer == "ollama:llama3.1"
    assert "authorization" not in server.requests[0].headers


def test_lm_studio_gets_a_json_schema(server: FakeLlmServer) -> None:
    make(server, provider="lmstudio", model="qwen2.5-7b-instruct", api_key=None).analyze(TURN)
    response_format = server.requests[0].body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "memory_analysis"
    assert "emotional_tags" in response_format["json_schema"]["schema"]["properties"]


def test_a_refused_response_format_is_adjusted_once_and_remembered(server: FakeLlmServer) -> None:
    refusal = json.dumps({"error": "'response_format.type' must be 'json_schema' or 'text'"})
    server.script(Reply.raw(400, refusal))
    analyzer = make(server, provider="openai-compatible", model="m", api_key=None)
    analyzer.analyze(TURN)
    analyzer.summarize("t", "c")
    formats = [r.body.get("response_format", {}).get("type") for r in server.requests]
    assert formats == ["json_object", "json_schema", "json_schema"]


def test_max_completion_tokens_and_temperature_are_adjusted(server: FakeLlmServer) -> None:
    server.script(
        Reply.raw(400, json.dumps({"error": {"message": TOKENS_REFUSED}})),
        Reply.raw(400, json.dumps({"error": {"message": "Unsupported value: 'temperature'"}})),
    )
    make(server, model="o4-mini").analyze(TURN)
    last = server.requests[-1].body
    assert "max_tokens" not in last
    assert last["max_completion_tokens"] == 1024
    assert "temperature" not in last
    assert len(server.requests) == 3


def test_other_client_errors_are_raised(server: FakeLlmServer) -> None:
    server.script(Reply.raw(404, '{"error": "model \'nope\' not found"}'))
    with pytest.raises(ProviderHTTPError) as info:
        make(server, model="nope").analyze(TURN)
    assert info.value.status == 404
    assert "llm.model" in str(info.value)


# -- the factory ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "provider", ["ollama", "vllm", "llamacpp", "lmstudio", "openai-compatible"]
)
def test_factory_builds_local_providers_without_a_key(server: FakeLlmServer, provider: str) -> None:
    config = LlmConfig(provider=provider, model="local-model", base_url=server.v1_url)
    # A hosted provider's key is never sent to a local server.
    analyzer = build_llm_analyzer(config, env={"OPENAI_API_KEY": KEY}, usage_sink=None)
    assert analyzer.name == f"{provider}:local-model"
    analyzer.analyze(TURN)
    assert "authorization" not in server.requests[-1].headers


def test_factory_openai_reads_the_key_and_defaults_the_model(server: FakeLlmServer) -> None:
    config = LlmConfig(provider="openai", base_url=server.v1_url)
    analyzer = build_llm_analyzer(config, env={"OPENAI_API_KEY": KEY}, usage_sink=None)
    assert analyzer.name == "openai:gpt-4o-mini"
    analyzer.analyze(TURN)
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"


def test_factory_local_server_with_a_named_key(server: FakeLlmServer) -> None:
    config = LlmConfig(
        provider="vllm", model="m", base_url=server.v1_url, api_key_env="VLLM_API_KEY"
    )
    build_llm_analyzer(config, env={"VLLM_API_KEY": "token-1"}, usage_sink=None).analyze(TURN)
    assert server.requests[0].headers["authorization"] == "Bearer token-1"
    with pytest.raises(ConfigError) as info:
        build_llm_analyzer(config, env={}, usage_sink=None)
    assert "VLLM_API_KEY" in str(info.value)


def test_factory_ollama_defaults_to_llama31(server: FakeLlmServer) -> None:
    config = LlmConfig(provider="ollama", base_url=server.v1_url)
    assert build_llm_analyzer(config, env={}, usage_sink=None).name == "ollama:llama3.1"


def test_factory_rejects_an_unknown_provider() -> None:
    with pytest.raises(ConfigError) as info:
        build_llm_analyzer(LlmConfig(provider="gemini-ish"), env={}, usage_sink=None)
    assert info.value.key == "llm.provider"
    for known in KNOWN_PROVIDERS:
        assert known in str(info.value)


def test_factory_requires_a_model_where_there_is_no_default(server: FakeLlmServer) -> None:
    with pytest.raises(ConfigError) as info:
        build_llm_analyzer(
            LlmConfig(provider="vllm", base_url=server.v1_url), env={}, usage_sink=None
        )
    assert info.value.key == "llm.model"


def test_factory_openai_compatible_requires_a_base_url() -> None:
    with pytest.raises(ConfigError) as info:
        build_llm_analyzer(
            LlmConfig(provider="openai-compatible", model="m"), env={}, usage_sink=None
        )
    assert info.value.key == "llm.base_url"


def test_factory_fails_at_startup_when_nothing_listens() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = LlmConfig(provider="ollama", base_url=f"http://127.0.0.1:{port}/v1")
    with pytest.raises(ConfigError) as info:
        build_llm_analyzer(config, env={}, usage_sink=None)
    assert info.value.key == "llm.base_url"
    assert "llm.base_url" in str(info.value)
    # The check can be left to the caller.
    built = build_llm_analyzer(config, env={}, usage_sink=None, check_reachable=False)
    assert built.name == "ollama:llama3.1"


def test_factory_rejects_a_base_url_that_is_not_http() -> None:
    config = LlmConfig(provider="ollama", base_url="localhost:11434")
    with pytest.raises(ConfigError) as info:
        build_llm_analyzer(config, env={}, usage_sink=None, check_reachable=False)
    assert info.value.key == "llm.base_url"
