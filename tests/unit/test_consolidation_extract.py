"""Extractive knowledge and procedure candidates (spec 001 日次固定化): lifted, never written."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.text.lexical import index_terms
from kioku.core.consolidation.entail import entailment
from kioku.core.consolidation.extract import collapse, extract_knowledge, extract_procedures
from kioku.core.consolidation.model import Source

T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)


def sources(*texts: str) -> list[Source]:
    return [Source(f"e{i}", text, T0 + timedelta(minutes=i)) for i, text in enumerate(texts)]


def knowledge_texts(*texts: str) -> list[str]:
    return [c.text for c in extract_knowledge(sources(*texts), index_terms)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Alice lives in Osaka with her two cats.", "Alice lives in Osaka with her two cats."),
        ("Ken moved to Tokyo last spring.", "Ken moved to Tokyo last spring."),
        ("We decided to use Postgres for billing.", "We decided to use Postgres for billing."),
        ("The rule is that every PR needs two reviews.", None),
        ("Never push to main on Fridays.", None),
        ("Mia is in charge of the billing service.", None),
        ("Ken's favourite editor is Vim.", None),
        ("Remember that the staging database resets nightly.", None),
        ("By the way, Bob works at Acme Corp.", "Bob works at Acme Corp."),
        ("田中さんは大阪に住んでいます。", None),
        ("ちなみに、鈴木さんは去年名古屋に引っ越した。", "鈴木さんは去年名古屋に引っ越した。"),
        ("これは覚えておいて：母の誕生日は3月5日です。", "母の誕生日は3月5日です。"),
        ("Remember this: my mom's birthday is March 5.", "my mom's birthday is March 5."),
        ("請求システムの担当は佐藤さんです。", None),
        ("来月からリモート勤務にすることにした。", None),
        ("本番環境には必ずレビュー後にマージするべきだ。", None),
        ("チームの方針はテスト駆動開発です。", None),
    ],
)
def test_lasting_statements_are_lifted(text: str, expected: str | None) -> None:
    assert knowledge_texts(text) == [expected or text]


@pytest.mark.parametrize(
    "text",
    [
        "I had ramen for lunch.",
        "今日は雨だった。",
        "Does Alice live in Osaka?",
        "田中さんは大阪に住んでいますか。",
        "Thanks, Alice lives in Osaka now!",
        "I'm so happy that Ken moved to Tokyo.",
        "Maybe Bob works at Acme Corp.",
        "I think we decided to use Postgres.",
        "たぶん田中さんは大阪に住んでいる。",
        "佐藤さんは東京に住んでいるかもしれない。",
        "鈴木さんは名古屋に引っ越したと思う。",
        "Ken uses it.",
        "To deploy: 1. run make build 2. push the image",
        "Alice lives in " + "the very big city of Osaka " * 12 + ".",
    ],
)
def test_what_is_not_knowledge_is_skipped(text: str) -> None:
    assert knowledge_texts(text) == []


def test_the_same_statement_from_several_sources_is_one_candidate() -> None:
    found = extract_knowledge(
        sources(
            "Hi! Alice lives in Osaka now. I had ramen.",
            "We decided to use Postgres for billing.",
            "alice lives  in \t Osaka now!",
        ),
        index_terms,
    )
    assert [(c.text, c.sources) for c in found] == [
        ("Alice lives in Osaka now.", ("e0", "e2")),
        ("We decided to use Postgres for billing.", ("e1",)),
    ]
    assert all(c.origin == "extractive" for c in found)
    assert found[0].title == "Alice lives in Osaka now"


def test_a_reply_repeating_the_fact_it_was_told_is_not_a_second_statement() -> None:
    told = "来週の木曜は母の誕生日\nわかりました。来週の木曜日がお母様の誕生日ですね。"
    assert knowledge_texts(told) == ["来週の木曜は母の誕生日"]
    both = "Ken moved to Tokyo last spring. Noted: Ken moved to Tokyo last spring, got it."
    assert knowledge_texts(both) == ["Ken moved to Tokyo last spring."]
    # Two facts of one source that share few terms are both kept.
    two = "Ken moved to Tokyo last spring. Mia works at Acme Corp."
    assert knowledge_texts(two) == ["Ken moved to Tokyo last spring.", "Mia works at Acme Corp."]


def test_at_most_max_per_source_from_each_source() -> None:
    text = (
        "Alice lives in Osaka. Bob works at Acme Corp. Ken uses Vim daily. Mia prefers green tea."
    )
    assert len(extract_knowledge(sources(text), index_terms)) == 3
    assert len(extract_knowledge(sources(text), index_terms, max_per_source=1)) == 1
    assert len(extract_knowledge(sources(text), index_terms, max_per_source=10)) == 4


def test_titles_are_short() -> None:
    long = "The rule is that " + "every single reviewer " * 8 + "must approve."
    (found,) = extract_knowledge(sources(long, "プロジェクトXの担当は山田さんです。"), index_terms)[
        :1
    ]
    assert len(found.title) <= 60
    assert long.startswith(found.title)
    (agreed,) = extract_knowledge(
        sources("Agreed: pgvector for the vectors, and the same tests run on both stores."),
        index_terms,
    )
    assert agreed.title == "Agreed: pgvector for the vectors"


def test_procedures_from_numbered_lines_and_inline_numbers() -> None:
    found = extract_procedures(
        sources(
            "To deploy the app:\n1. run  make build\n2. push the image\n3. restart the pods",
            "I had ramen for lunch.",
            "To deploy: 1. run make build 2. push the image",
        ),
        index_terms,
    )
    assert [(p.description, p.steps, p.sources) for p in found] == [
        (
            "To deploy the app",
            ("run make build", "push the image", "restart the pods"),
            ("e0",),
        ),
        ("To deploy", ("run make build", "push the image"), ("e2",)),
    ]
    assert found[0].title == "To deploy the app"


def test_procedures_from_sequences_in_both_languages() -> None:
    found = extract_procedures(
        sources(
            "デプロイ手順: まずテストを実行し、次にイメージをビルドする",
            "First, run the tests, then build the image, and finally push it.",
        ),
        index_terms,
    )
    assert [(p.description, p.steps) for p in found] == [
        ("デプロイ手順", ("テストを実行し", "イメージをビルドする")),
        (
            "First, run the tests, then build the image, and finally push it.",
            ("run the tests", "build the image", "push it"),
        ),
    ]


def test_the_same_steps_from_two_sources_are_one_procedure() -> None:
    steps = "How to release:\n1. tag the commit\n2. push the tag"
    (found,) = extract_procedures(sources(steps, steps.replace("\n", "\n\n")), index_terms)
    assert found.sources == ("e0", "e1")


@pytest.mark.parametrize(
    "text",
    [
        "Please install and configure the proxy.",
        "Shopping list:\n- milk\n- eggs",
        "First I went to the store, then I had lunch.",
        "Alice lives in Osaka.",
    ],
)
def test_no_procedure_without_two_steps(text: str) -> None:
    assert extract_procedures(sources(text), index_terms) == []


FRAGMENTS = st.sampled_from(
    [
        "By the way, Alice lives in Osaka.",
        "Ken moved to Tokyo last spring.",
        "We decided to use Postgres for billing.",
        "Never push to main on Fridays!",
        "Maybe Bob works at Acme.",
        "Does Mia use Vim?",
        "I had ramen for lunch.",
        "To deploy the app:",
        "1. run make build",
        "2. push the image",
        "① テストを実行",
        "② イメージをビルド",
        "- restart the pods",
        "First, pull the branch, then rebase it.",
        "ちなみに、田中さんは大阪に住んでいます。",
        "デプロイ手順: まずテストを実行し、次にイメージをビルドする",
        "担当は鈴木さんです。",
        "今日は雨だった。",
        "Mr. Smith's office is in Kyoto, e.g. near the station.",
    ]
)
GAPS = st.sampled_from([" ", "  ", "\n", "\n\n", "\t", " \n "])
TEXT = st.lists(st.tuples(FRAGMENTS, GAPS), min_size=1, max_size=6).map(
    lambda parts: "".join(f + g for f, g in parts)
)


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXT, min_size=1, max_size=4))
def test_every_candidate_is_lifted_from_its_sources(texts: list[str]) -> None:
    given_sources = sources(*texts)
    by_id = {s.id: collapse(s.text) for s in given_sources}
    for candidate in extract_knowledge(given_sources, index_terms):
        assert candidate.sources
        assert len(candidate.title) <= 60
        assert any(candidate.text in by_id[i] for i in candidate.sources)
        assert len(set(candidate.sources)) == len(candidate.sources)
        # What is lifted passes the offline validation against its own sources.
        texts = [s.text for s in given_sources if s.id in candidate.sources]
        assert entailment(texts, candidate.text, index_terms).entailment >= 0.99
    for procedure in extract_procedures(given_sources, index_terms):
        assert len(procedure.steps) >= 2
        assert len(procedure.title) <= 60
        for piece in (procedure.description, *procedure.steps):
            assert piece
            assert any(piece in by_id[i] for i in procedure.sources)
    again = extract_knowledge(given_sources, index_terms)
    assert again == extract_knowledge(given_sources, index_terms)
