"""A misbehaving LLM provider never costs a turn: the CLI against a real loopback server."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import clean_env, run_kioku
from tests.fakes.llm_server import FakeLlmServer, Reply

KEY = "sk-test-never-shown-0123"


def _env(server: FakeLlmServer, provider: str) -> dict[str, str]:
    base = server.url if provider == "anthropic" else server.v1_url
    return clean_env(
        KIOKU_LLM__PROVIDER=provider,
        KIOKU_LLM__MODEL="test-model",
        KIOKU_LLM__BASE_URL=base,
        KIOKU_LLM__TIMEOUT_SECONDS="5",
        KIOKU_LLM__MAX_RETRIES="0",
        ANTHROPIC_API_KEY=KEY,
        OPENAI_API_KEY=KEY,
    )


def test_malformed_json_twice_falls_back_to_offline_and_says_so(home: Path) -> None:
    for provider in ("anthropic", "openai"):
        with FakeLlmServer() as server:
            server.script(Reply.answer("this is not JSON"), Reply.answer("{still not json"))
            result = run_kioku(
                "--home",
                str(home),
                "remember",
                "--user",
                "これは覚えておいて：来週の木曜は母の誕生日",
                "--assistant",
                "わかりました",
                "--json",
                env=_env(server, provider),
            )
            assert result.code == 0, result.err
            assert len(server.requests) == 2  # the answer and its one retry
        memory = result.json()
        assert memory["analysis"]["analyzer"] == "offline"
        assert "offline analyzer" in result.err
        assert "warning" in result.err
        assert KEY not in result.err + result.out
        assert memory["protected"] is True
    listed = run_kioku("--home", str(home), "list", "--json").json()
    assert len(listed) == 2


def test_a_working_provider_is_used_and_its_usage_is_costed(home: Path) -> None:
    with FakeLlmServer() as server:
        env = _env(server, "anthropic")
        result = run_kioku(
            "--home", str(home), "remember", "--user", "We chose PostgreSQL.", "--json", env=env
        )
        assert result.code == 0, result.err
        assert server.requests[0].headers["x-api-key"] == KEY
    assert result.json()["analysis"]["analyzer"] == "anthropic:test-model"
    cost = run_kioku("--home", str(home), "stats", "--cost", "--json", env=env).json()["cost"]
    analyze = cost["lines"][0]
    assert (analyze["purpose"], analyze["calls"]) == ("analyze", 1)
    assert analyze["input_tokens"] > 0
    assert cost["total_usd"] > 0
    text = run_kioku("--home", str(home), "stats", "--cost", env=env).out
    assert "memory generation" in text


def test_an_unreachable_base_url_fails_at_startup(home: Path) -> None:
    with FakeLlmServer() as server:
        env = _env(server, "ollama")
    # The server is gone: nothing listens on its port any more.
    result = run_kioku("--home", str(home), "remember", "--user", "hi", env=env)
    assert result.code == 2
    assert "llm.base_url" in result.err
    assert not (home / "memories.db").exists()


def test_the_fallback_warning_is_said_once(home: Path) -> None:
    with FakeLlmServer() as server:
        server.script(Reply.answer("nope"), Reply.answer("nope"))
        result = run_kioku(
            "--home", str(home), "remember", "--user", "hi there", env=_env(server, "ollama")
        )
    assert result.code == 0, result.err
    assert result.err.count("offline analyzer analysed this turn") == 1
