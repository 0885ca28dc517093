"""remember / analyze / stats --cost as a new user runs them (offline analyzer)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Run, clean_env, run_kioku


def test_analyze_detects_a_request_to_remember(kioku: Run) -> None:
    result = kioku(
        "analyze",
        "--user",
        "これは覚えておいて：来週の木曜は母の誕生日",
        "--assistant",
        "わかりました",
        "--json",
    )
    assert result.code == 0, result.err
    data = result.json()
    assert data["protected"] is True
    assert data["language"] == "ja"
    assert data["analyzer"] == "offline"
    assert 0 <= data["emotional_intensity"] <= 100


def test_analyze_stores_nothing(kioku: Run, home: Path) -> None:
    kioku("init")
    assert kioku("analyze", "--user", "hello there").code == 0
    assert kioku("stats", "--json").json()["total"] == 0


def test_remember_analyses_and_stores_a_turn(kioku: Run) -> None:
    result = kioku(
        "remember",
        "--user",
        "The deploy failed again with the same Docker error. I'm so frustrated!",
        "--assistant",
        "Let's check the volume permissions together.",
        "--at",
        "2026-01-18T18:00:00+09:00",
        "--session",
        "s-1",
        "--json",
    )
    assert result.code == 0, result.err
    memory = result.json()
    assert memory["emotional_valence"] == "negative"
    assert memory["session_id"] == "s-1"
    assert memory["created"] == "2026-01-18T18:00:00+09:00"
    assert memory["memory_days"] == 9 / 24
    assert memory["retention_score"] == memory["emotional_intensity"]
    assert memory["analysis"]["analyzer"] == "offline"
    shown = kioku("show", memory["id"], "--json").json()
    assert shown["trigger"] == memory["trigger"]


def test_remember_text_output_is_one_line(kioku: Run) -> None:
    result = kioku("remember", "--user", "おはよう、今日は寒いね", "--assistant", "暖かくしてね")
    assert result.code == 0, result.err
    lines = result.out.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("mem_")


def test_analyze_jsonl_one_result_per_line_in_order(kioku: Run, tmp_path: Path) -> None:
    source = tmp_path / "turns.jsonl"
    source.write_text(
        "\n".join(
            [
                json.dumps({"user": "やった、できた！", "id": "a"}, ensure_ascii=False),
                json.dumps({"user": "ふざけんな！", "assistant": "落ち着いて"}, ensure_ascii=False),
                "",
                json.dumps({"user": "了解、やっておく"}, ensure_ascii=False),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    result = kioku("analyze", "--jsonl", str(source))
    assert result.code == 0, result.err
    rows = [json.loads(line) for line in result.out.splitlines()]
    assert [r["line"] for r in rows] == [1, 2, 4]
    assert rows[0]["id"] == "a"
    assert [r["emotional_valence"] for r in rows] == ["positive", "negative", "neutral"]


def test_analyze_jsonl_reports_bad_lines_and_exits_1(kioku: Run, tmp_path: Path) -> None:
    source = tmp_path / "turns.jsonl"
    source.write_bytes(b'{"user": "fine"}\nnot json\n{"user": 3}\n{"user": "\xff\xfe ok"}\n')
    result = kioku("analyze", "--jsonl", str(source))
    assert result.code == 1
    rows = [json.loads(line) for line in result.out.splitlines()]
    assert [("error" in r) for r in rows] == [False, True, True, False]
    assert "2 line(s)" in result.err


def test_analyze_needs_exactly_one_input(kioku: Run) -> None:
    assert kioku("analyze").code == 2
    assert kioku("analyze", "--user", "x", "--jsonl", "-").code == 2


def test_bad_turn_input_never_crashes(kioku: Run) -> None:
    for text in ("مرحبا بالعالم", "😀😀😀", "x" * 100_000, "a\x01b"):
        result = kioku("remember", "--user", text, "--json")
        assert result.code == 0, (text[:10], result.err)
        memory = result.json()
        assert memory["trigger"].strip()
        assert memory["content"].strip()


def test_an_empty_turn_is_refused_and_nothing_is_stored(kioku: Run) -> None:
    for text in ("", "   ", "\x01\x02\x7f", "\u200b\ufeff", "\n\t"):
        result = kioku("remember", "--user", text, "--assistant", " ")
        assert result.code == 2, (text, result.err)
        assert "empty turn is not stored" in result.err
        assert "--user" in result.err
        assert "internal error" not in result.err
    kioku("init")
    assert kioku("stats", "--json").json()["total"] == 0


def test_a_reply_without_user_words_is_a_turn(kioku: Run) -> None:
    result = kioku("remember", "--user", "", "--assistant", "Welcome back! Shall we go on?")
    assert result.code == 0, result.err


def test_stats_cost_with_no_paid_calls(kioku: Run) -> None:
    kioku("remember", "--user", "hello")
    text = kioku("stats", "--cost")
    assert text.code == 0
    assert "no paid provider calls" in text.out
    data = kioku("stats", "--cost", "--json").json()
    assert data["cost"]["total_usd"] == 0
    assert [line["purpose"] for line in data["cost"]["lines"]] == [
        "analyze",
        "summarize",
        "keywords",
        "embed",
        "profile",
    ]


def test_unknown_provider_fails_at_startup_naming_the_setting(home: Path) -> None:
    env = clean_env(KIOKU_LLM__PROVIDER="gemini-ultra")
    result = run_kioku("--home", str(home), "remember", "--user", "hi", env=env)
    assert result.code == 2
    assert "llm.provider" in result.err
    assert not (home / "memories.db").exists()


def test_compress_spec_level1_example_is_70_percent_shorter(kioku: Run, home: Path) -> None:
    result = kioku(
        "compress",
        "--trigger",
        "「記憶システムのストレージ、MongoDBにしたらどう思う？」と聞かれた",
        "--content",
        "技術選定について意見を求められた。JSONで十分という結論になり、"
        "設計の妥当性が確認できて少し安心した",
        "--json",
    )
    assert result.code == 0, result.err
    data = result.json()
    assert data["reduction"] >= 0.70
    assert "MongoDB" in data["trigger"] + data["content"]
    assert "JSON" in data["trigger"] + data["content"]
    assert not home.exists()  # nothing stored


def test_compress_to_keywords(kioku: Run) -> None:
    result = kioku(
        "compress", "--to", "3", "--trigger", "Python文法について質問を受けた",
        "--content", "リスト内包表記について説明した", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    data = result.json()
    assert "Python" in data["trigger"]
    assert 2 <= len(data["content"].split(", ")) <= 3
