"""Spec 001 手続きコンテンツ分類: procedural or semantic, sentences and ordered steps."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.core.consolidation.classify import (
    PROCEDURAL_PATTERNS,
    classify_sentences,
    is_procedural,
    ordered_steps,
    procedural_score,
    split_sentences,
)

#: One English and one Japanese text for each of the twelve patterns, in order.
COVERAGE = [
    ("Follow these steps", "手順を確認する"),
    ("how to reset the router", "設定方法を教えて"),
    ("run make build", "コマンドを打つ"),
    ("our release workflow", "ワークフローを見直す"),
    ("step 2 is easy", "ステップ1は簡単"),
    ("first open it, then close it", "まず開いて、次に閉じる"),
    ("install the package", "パッケージをインストールする"),
    ("deploy the service", "サービスをデプロイする"),
    ("configure the proxy", "プロキシを設定する"),
    ("$ make test", "```\nmake\n```"),
    ("execute the script", "スクリプトを実行する"),
    ("the release checklist", "チェックリストを確認"),
]


def test_there_are_twelve_compiled_patterns() -> None:
    assert len(PROCEDURAL_PATTERNS) == 12
    assert all(isinstance(p, re.Pattern) for p in PROCEDURAL_PATTERNS)


@pytest.mark.parametrize(("index", "texts"), list(enumerate(COVERAGE)))
def test_each_pattern_covers_english_and_japanese(index: int, texts: tuple[str, str]) -> None:
    for text in texts:
        assert PROCEDURAL_PATTERNS[index].search(text), (index, text)


@pytest.mark.parametrize(
    "text",
    [
        "To deploy: 1. run make build 2. push the image",
        "デプロイ手順: まずテストを実行し、次にイメージをビルドする",
        "How to set up:\n1. Install Python\n2. Create a venv",
        "First, pull the branch, then rebase it, and finally push.",
        "1) 依存を入れる\n2) テストを走らせる",
        "① 電源を切る\n② ケーブルを抜く",
        "$ pip install kioku\n$ kioku init",
    ],
)
def test_procedural_texts(text: str) -> None:
    assert is_procedural(text)


@pytest.mark.parametrize(
    "text",
    [
        "I had ramen for lunch",
        "今日は雨だった",
        "Alice lives in Osaka",
        "田中さんは大阪に住んでいます。",
        "I set up the meeting for Monday.",
        "First I went to the store, then I had lunch.",
        "For the first time, we went to Kyoto and then Osaka.",
        "Shopping list:\n- milk\n- eggs",
        "",
    ],
)
def test_small_talk_and_facts_are_not_procedural(text: str) -> None:
    assert not is_procedural(text)


def test_score_counts_distinct_patterns() -> None:
    assert procedural_score("I had ramen for lunch") == 0
    assert procedural_score("install install install") == 1
    assert procedural_score("To deploy: 1. run make build 2. push the image") >= 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello there. How are you? Fine!", ["Hello there.", "How are you?", "Fine!"]),
        ("今日は晴れ。明日は雨！本当？", ["今日は晴れ。", "明日は雨！", "本当？"]),
        (
            "Use a tool, e.g. grep. Mr. Smith agrees.",
            ["Use a tool, e.g. grep.", "Mr. Smith agrees."],
        ),
        ("Pi is 3.5 here. Use v1.2 now.", ["Pi is 3.5 here.", "Use v1.2 now."]),
        (
            "See https://example.com/a.b for it. Done.",
            ["See https://example.com/a.b for it.", "Done."],
        ),
        ("Steps:\n1. build\n2. push\n", ["Steps:", "1. build", "2. push"]),
        ("To deploy: 1. run make build 2. push it", ["To deploy: 1. run make build 2. push it"]),
        ("「行く。」と言った。次へ", ["「行く。」", "と言った。", "次へ"]),
        ("  \n \n", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_ordered_steps_from_lines_inline_and_sequences() -> None:
    text = "How to release:\n1. tag it\n\n2. push the tag\nThanks"
    found = ordered_steps(text)
    assert found is not None
    assert [text[a:b] for a, b in found.spans] == ["tag it", "push the tag"]
    assert text[: found.lead].strip() == "How to release:"
    inline = "To deploy: 1. run make build 2. push the image. Then relax."
    found = ordered_steps(inline)
    assert found is not None
    assert [inline[a:b] for a, b in found.spans] == ["run make build", "push the image"]
    ja = "デプロイ手順: まずテストを実行し、次にイメージをビルドし、最後に公開する。"
    found = ordered_steps(ja)
    assert found is not None
    assert [ja[a:b] for a, b in found.spans] == ["テストを実行し", "イメージをビルドし", "公開する"]
    assert ordered_steps("Alice lives in Osaka. Then nothing.") is None


def test_classify_sentences_keeps_facts_out_of_a_procedure() -> None:
    text = "Ken lives in Osaka. To deploy the app:\n1. run make build\n2. push the image"
    procedural, semantic = classify_sentences(text)
    assert semantic == ["Ken lives in Osaka."]
    assert procedural == ["To deploy the app:", "1. run make build", "2. push the image"]
    assert classify_sentences("今日は雨だった。傘を忘れた。") == (
        [],
        ["今日は雨だった。", "傘を忘れた。"],
    )


PIECES = st.sampled_from(
    [
        "Alice lives in Osaka.",
        "e.g.",
        "Mr.",
        "3.5",
        "1.",
        "2)",
        "①",
        "まず",
        "次に",
        "今日は雨だった。",
        "run make build",
        "https://x.io/a.b",
        "Really?",
        "ok!",
        "。",
        "- item",
        "```",
        "First,",
        "then",
    ]
)
GAPS = st.sampled_from(["", " ", "  ", "\n", "\n\n", "\t", " \n "])
TEXTS = st.lists(st.tuples(PIECES, GAPS), max_size=12).map(
    lambda parts: "".join(p + g for p, g in parts)
)


@settings(max_examples=150, deadline=None)
@given(TEXTS | st.text(max_size=80))
def test_sentences_are_stripped_substrings_in_order(text: str) -> None:
    cursor = 0
    for sentence in split_sentences(text):
        assert sentence
        assert sentence == sentence.strip()
        at = text.find(sentence, cursor)
        assert at >= 0
        cursor = at + len(sentence)


def interleaves(whole: list[str], left: list[str], right: list[str]) -> bool:
    """Whether ``whole`` is ``left`` and ``right`` merged, each in its own order."""
    if len(whole) != len(left) + len(right):
        return False
    # reachable[j]: after taking i of left, j of right is a way to match whole[: i + j].
    reachable = [True] + [False] * len(right)
    for j in range(1, len(right) + 1):
        reachable[j] = reachable[j - 1] and right[j - 1] == whole[j - 1]
    for i in range(1, len(left) + 1):
        reachable[0] = reachable[0] and left[i - 1] == whole[i - 1]
        for j in range(1, len(right) + 1):
            reachable[j] = (reachable[j] and left[i - 1] == whole[i + j - 1]) or (
                reachable[j - 1] and right[j - 1] == whole[i + j - 1]
            )
    return reachable[-1]


def test_the_interleaving_check() -> None:
    assert interleaves(["a", "b", "a"], ["b"], ["a", "a"])
    assert not interleaves(["a", "b"], ["a", "a"], [])
    assert not interleaves(["a", "b"], ["b", "a"], [])


@settings(max_examples=150, deadline=None)
@given(TEXTS | st.text(max_size=80))
def test_classify_sentences_is_a_partition_in_order(text: str) -> None:
    procedural, semantic = classify_sentences(text)
    assert interleaves(split_sentences(text), procedural, semantic)
    assert 0 <= procedural_score(text) <= 12


_WORDS = ["step", "run ", "How to", "setup", "手順", "まず", "次に", "設定", "①", "・", "```"]
_PIECES = st.sampled_from(
    [*"abcdefghijklmnopqrstuvwxyz ABCDEFGHIJ.,:;!?\n\t0123456789-*$>`~", *_WORDS]
)


@settings(max_examples=300)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_the_quick_check_never_hides_a_match(text: str) -> None:
    from kioku.core.consolidation.classify import PROCEDURAL_PATTERNS, procedural_score

    assert procedural_score(text) == sum(1 for p in PROCEDURAL_PATTERNS if p.search(text))
