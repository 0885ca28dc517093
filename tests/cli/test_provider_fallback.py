"""A misbehaving LLM provider never costs a turn: the CLI against a real loopback server."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.cli.conftest import clean_env, run_kioku
from tests.fakes.llm_server import FakeLlmServer, Reply

KEY = "sk-test-never-shown-0123"
TRANSCRIPT = Path(__file__).resolve().parent.parent / "fixtures" / "claude" / "normal.jsonl"


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
                f"わかりました（{provider}）",  # two turns, not one turn stored twice
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


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "warning" in line]


def test_an_unreachable_provider_falls_back_with_one_warning(home: Path) -> None:
    env = clean_env(
        KIOKU_LLM__PROVIDER="ollama",
        KIOKU_LLM__MODEL="test-model",
        KIOKU_LLM__BASE_URL=f"http://127.0.0.1:{_dead_port()}/v1",
    )
    result = run_kioku("--home", str(home), "remember", "--user", "hi", "--json", env=env)
    assert result.code == 0, result.err
    assert result.json()["analysis"]["analyzer"] == "offline"
    (warning,) = _warnings(result.err)
    assert "unreachable" in warning
    assert "connection refused" in warning
    assert "llm.base_url" in warning  # what to fix
    ingested = run_kioku("--home", str(home), "ingest", str(TRANSCRIPT), env=env)
    assert ingested.code == 0, ingested.err
    assert "added 3" in ingested.out
    assert len(_warnings(ingested.err)) == 1  # one for the run, not one per turn


def test_a_missing_key_falls_back_with_one_warning_naming_the_variable(home: Path) -> None:
    env = clean_env(KIOKU_LLM__PROVIDER="anthropic")
    env.pop("ANTHROPIC_API_KEY", None)
    result = run_kioku("--home", str(home), "remember", "--user", "hi", "--json", env=env)
    assert result.code == 0, result.err
    assert result.json()["analysis"]["analyzer"] == "offline"
    (warning,) = _warnings(result.err)
    assert "ANTHROPIC_API_KEY" in warning


def test_a_provider_failing_on_every_turn_is_said_once(home: Path) -> None:
    with FakeLlmServer() as server:
        server.script(*[Reply.raw(500, '{"error": "overloaded"}')] * 6)
        result = run_kioku(
            "--home", str(home), "ingest", str(TRANSCRIPT), env=_env(server, "ollama")
        )
        assert len(server.requests) >= 3  # asked for each turn until it paused
    assert result.code == 0, result.err
    assert "added 3" in result.out
    (warning,) = _warnings(result.err)
    assert "HTTP 500" in warning


def test_a_malformed_llm_section_is_still_a_usage_error(home: Path) -> None:
    env = clean_env(KIOKU_LLM__PROVIDER="openai-compatible", KIOKU_LLM__MODEL="m")
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


def test_an_import_waiting_for_its_provider_holds_no_lock(home: Path, tmp_path: Path) -> None:
    """Turns are analysed before their transaction: while the provider thinks, another
    process writes with a short busy timeout and is not refused."""
    import json
    import subprocess
    import sys
    import time

    source = tmp_path / "turns.jsonl"
    source.write_text(
        "".join(
            json.dumps({"user": f"turn {n} about the garden", "source_id": f"t{n}"}) + "\n"
            for n in range(3)
        )
    )
    assert run_kioku("--home", str(home), "init").code == 0
    with FakeLlmServer() as server:
        server.script(Reply(action="stall"))
        env = _env(server, "ollama")
        env["KIOKU_LLM__TIMEOUT_SECONDS"] = "4"
        importing = subprocess.Popen(
            [sys.executable, "-m", "kioku", "--home", str(home), "import", str(source), "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        deadline = time.monotonic() + 30
        while not server.requests:  # the import is waiting for the provider's first answer
            assert importing.poll() is None, importing.communicate()
            assert time.monotonic() < deadline, "the import never asked the provider"
            time.sleep(0.05)
        quick = clean_env(KIOKU_STORE__BUSY_TIMEOUT_MS="300")
        written = run_kioku("--home", str(home), "remember", "--user", "a quick note", env=quick)
        assert written.code == 0, written.err
        out, err = importing.communicate(timeout=60)
    assert importing.returncode == 0, err
    assert json.loads(out)["imported"] == 3
    listed = run_kioku("--home", str(home), "list", "--json").json()
    assert len(listed) == 4
