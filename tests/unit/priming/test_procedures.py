"""Three-stage procedure matching of spec 001 (3段階マッチング（スキル注入）)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.core.priming import (
    ProcedureCandidate,
    ProcedureMatch,
    bracket_keywords,
    match_procedures,
)
from kioku.errors import ValidationError

#: Property tests check logic, not speed: no deadline; the costlier ones draw fewer examples.
QUICK = settings(deadline=None)
SMALL = settings(QUICK, max_examples=40)


def cand(cid: str, description: str, *terms: str) -> ProcedureCandidate:
    return ProcedureCandidate(cid, description, frozenset(terms))


DEPLOY = cand("deploy", "Deploy the web app to staging", "deploy", "web", "app", "staging")
BACKUP = cand("backup", "Back up the database every night", "back", "database", "night")
RELEASE = cand("release", "Release checklist: tag, build, deploy", "release", "tag", "build")
JA_DEPLOY = cand("ja-deploy", "本番環境へのデプロイ手順", "本番", "環境", "デプロイ", "手順")
ALL = [DEPLOY, BACKUP, RELEASE, JA_DEPLOY]


def ids(matches: list[ProcedureMatch]) -> list[str]:
    return [m.id for m in matches]


def test_stage_one_bracket_keyword_in_the_description() -> None:
    got = match_procedures("please do the [Deploy] now", frozenset(), ALL)
    assert ids(got) == ["deploy", "release"]
    assert all(m.stage == 1 and m.score == 1.0 for m in got)
    assert got[0].reason == "[deploy] in description"


def test_stage_one_with_full_width_brackets_and_japanese() -> None:
    got = match_procedures("［デプロイ］をやって", frozenset(), ALL)
    assert got == [ProcedureMatch("ja-deploy", 1, 1.0, "[デプロイ] in description")]
    # Full-width Latin letters fold too.
    assert ids(match_procedures("[ＳＴＡＧＩＮＧ]", frozenset(), ALL)) == ["deploy"]


def test_stage_one_scores_the_share_of_keywords_found() -> None:
    got = match_procedures("[deploy] [staging]", frozenset(), ALL)
    assert [(m.id, m.score) for m in got] == [("deploy", 1.0), ("release", 0.5)]
    assert got[0].reason == "[deploy], [staging] in description"


def test_a_keyword_that_no_description_holds_matches_nothing() -> None:
    assert match_procedures("[kubernetes]", frozenset(), ALL) == []
    assert match_procedures("[] and [ ]", frozenset(), ALL) == []


def test_stage_two_content_word_overlap() -> None:
    got = match_procedures("back up the database", frozenset({"database", "back"}), ALL)
    assert got == [ProcedureMatch("backup", 2, 2 / 3, "2 of 3 words shared")]


def test_stage_two_needs_the_minimum_overlap() -> None:
    words = frozenset({"staging"})  # 1 of 4 terms of DEPLOY: 0.25
    assert match_procedures("staging?", words, ALL) == []
    assert ids(match_procedures("staging?", words, ALL, min_overlap=0.25)) == ["deploy"]
    assert match_procedures("x", frozenset({"unrelated"}), ALL, min_overlap=0.0) == []


def test_stage_two_folds_terms_and_ranks_by_score() -> None:
    words = frozenset({"ＤＥＰＬＯＹ", "Web", "release", "tag"})
    got = match_procedures("...", words, ALL)
    assert [(m.id, m.stage, round(m.score, 3)) for m in got] == [
        ("release", 2, 0.667),
        ("deploy", 2, 0.5),
    ]


def test_stage_three_is_a_fallback_only() -> None:
    sims = {"deploy": 0.9, "backup": 0.7, "release": 0.5, "ja-deploy": 0.6}
    got = match_procedures("[staging] rollout", frozenset(), ALL, sims)
    assert [(m.id, m.stage) for m in got] == [("deploy", 1), ("backup", 3), ("ja-deploy", 3)]
    assert got[1].reason == "similar (0.70)"
    assert got[1].score == 0.7


def test_order_is_stage_then_score_then_id() -> None:
    candidates = [
        cand("z-sim", "nothing", "nothing"),
        cand("b-word", "alpha beta", "alpha", "beta"),
        cand("a-word", "alpha beta", "alpha", "beta"),
        cand("c-word", "alpha", "alpha"),
        cand("key", "gamma", "gamma"),
    ]
    got = match_procedures("[gamma]", frozenset({"alpha"}), candidates, {"z-sim": 0.99}, limit=9)
    # key: stage 1; c-word: 1 of 1 word; a-word, b-word: 1 of 2 (tie broken by id); z-sim: 3.
    assert [(m.id, m.stage) for m in got] == [
        ("key", 1),
        ("c-word", 2),
        ("a-word", 2),
        ("b-word", 2),
        ("z-sim", 3),
    ]
    shuffled = match_procedures(
        "[gamma]", frozenset({"alpha"}), candidates[::-1], {"z-sim": 0.99}, limit=9
    )
    assert shuffled == got


def test_limit() -> None:
    sims = {c.id: 0.9 for c in ALL}
    assert len(match_procedures("x", frozenset(), ALL, sims)) == 3
    assert len(match_procedures("x", frozenset(), ALL, sims, limit=10)) == 4
    assert match_procedures("x", frozenset(), ALL, sims, limit=0) == []


def test_a_repeated_id_is_reported_once_with_its_best_match() -> None:
    twice = [cand("p", "unrelated", "unrelated"), cand("p", "deploy steps", "deploy")]
    got = match_procedures("[deploy]", frozenset(), twice, {"p": 0.9}, limit=10)
    assert got == [ProcedureMatch("p", 1, 1.0, "[deploy] in description")]


def test_bracket_keywords() -> None:
    assert bracket_keywords("[Deploy] and ［デプロイ］ and [deploy] and [[wiki]] []") == [
        "deploy",
        "デプロイ",
        "wiki",
    ]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"limit": -1}, "limit"),
        ({"min_overlap": 1.5}, "min_overlap"),
        ({"min_overlap": math.nan}, "min_overlap"),
        ({"min_similarity": math.inf}, "min_similarity"),
        ({"similarities": {"deploy": math.nan}}, "similarity of 'deploy'"),
    ],
)
def test_bad_arguments_are_rejected(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        match_procedures("x", frozenset(), ALL, **kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field


words = st.sampled_from(["deploy", "web", "app", "staging", "database", "tag", "デプロイ"])
candidate_lists = st.lists(
    st.builds(
        ProcedureCandidate,
        st.sampled_from([f"p{i}" for i in range(6)]),
        st.text(alphabet="abcdeデプロイ ", max_size=20),
        st.frozensets(words, max_size=4),
    ),
    max_size=8,
)


@settings(SMALL)
@given(
    st.text(alphabet="abcde[]デプロイ ", max_size=30),
    st.frozensets(words, max_size=4),
    candidate_lists,
    st.dictionaries(st.sampled_from([f"p{i}" for i in range(6)]), st.floats(0, 1)),
    st.integers(min_value=0, max_value=8),
)
def test_matches_are_unique_sorted_and_limited(
    message: str,
    terms: frozenset[str],
    candidates: list[ProcedureCandidate],
    sims: dict[str, float],
    limit: int,
) -> None:
    got = match_procedures(message, terms, candidates, sims, limit=limit)
    assert len(got) <= limit
    assert len({m.id for m in got}) == len(got)
    keys = [(m.stage, -m.score, m.id) for m in got]
    assert keys == sorted(keys)
    assert all(m.stage in (1, 2, 3) and 0 <= m.score <= 1 and m.reason for m in got)
    assert all(m.stage != 3 or m.score >= 0.55 for m in got)
