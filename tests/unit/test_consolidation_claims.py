"""Claims and the offline contradiction rules (spec 001 知識矛盾検出・解決)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.core.consolidation.claims import Claim, claims_of, detect_conflicts, judge_claims
from kioku.core.consolidation.model import Conflict, Source

T0 = datetime(2025, 5, 1, 9, 0, tzinfo=UTC)


def source(sid: str, text: str, day: int = 0) -> Source:
    return Source(sid, text, T0 + timedelta(days=day))


def triples(text: str) -> list[tuple[str, str, str, str | None]]:
    return [(c.subject, c.relation, c.value, c.condition) for c in claims_of(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ken lives in Osaka.", ("ken", "residence", "osaka", None)),
        ("Ken moved to Tokyo last year.", ("ken", "residence", "tokyo", None)),
        (
            "Yesterday Ken relocated to Shibuya, Tokyo.",
            ("ken", "residence", "shibuya, tokyo", None),
        ),
        ("田中さんは大阪に住んでいます。", ("田中", "residence", "大阪", None)),
        ("田中さんは去年東京に引っ越しました。", ("田中", "residence", "東京", None)),
        ("Ken works at Acme Corp.", ("ken", "employer", "acme corp", None)),
        ("Mia works for the city.", ("mia", "employer", "city", None)),
        ("Ken joined Google in 2020.", ("ken", "employer", "google", None)),
        ("ケンくんはアクメで働いている。", ("ケン", "employer", "アクメ", None)),
        ("ケンはグーグルに入社した。", ("ケン", "employer", "グーグル", None)),
        ("ケンは大阪に住んでいて、猫を飼っている。", ("ケン", "residence", "大阪", None)),
        ("Ken is in charge of billing.", ("billing", "in_charge", "ken", None)),
        ("The owner of the billing service is Mia.", ("billing service", "in_charge", "mia", None)),
        ("請求の担当は鈴木様です。", ("請求", "in_charge", "鈴木", None)),
        ("担当はAさん", ("", "in_charge", "a", None)),
        ("プロジェクトAの担当は田中さん", ("プロジェクトa", "in_charge", "田中", None)),
        ("Ken's birthday is May 3.", ("ken", "birthday", "may 3", None)),
        ("The capital of Japan is Tokyo.", ("japan", "capital", "tokyo", None)),
        ("ケンの誕生日は5月3日です。", ("ケン", "誕生日", "5月3日", None)),
        ("Ken uses Vim for editing.", ("ken", "tool", "vim", None)),
        ("The team switched to Jira.", ("team", "tool", "jira", None)),
        ("ケンはVimを使っている。", ("ケン", "tool", "vim", None)),
        ("On weekdays Ken works at Acme", ("ken", "employer", "acme", "on weekdays")),
        ("Ken works at the bakery on weekends.", ("ken", "employer", "bakery", "on weekends")),
        ("In summer, Ken lives in Hokkaido.", ("ken", "residence", "hokkaido", "in summer")),
        ("At home Ken uses Emacs.", ("ken", "tool", "emacs", "at home")),
        ("平日はケンはアクメで働いている。", ("ケン", "employer", "アクメ", "on weekdays")),
        ("ケンは週末はパン屋で働いている。", ("ケン", "employer", "パン屋", "on weekends")),
        ("冬はケンは沖縄に住んでいる。", ("ケン", "residence", "沖縄", "in winter")),
        ("仕事ではケンはVSCodeを使っている。", ("ケン", "tool", "vscode", "at work")),
    ],
)
def test_claims_of(text: str, expected: tuple[str, str, str, str | None]) -> None:
    assert triples(text) == [expected]
    assert claims_of(text)[0].text == text


@pytest.mark.parametrize(
    "text",
    [
        "Ken does not live in Osaka.",
        "Does Ken live in Osaka?",
        "田中さんは大阪に住んでいません。",
        "田中さんは大阪に住んでいますか。",
        "He works at Acme.",
        "I had ramen for lunch.",
    ],
)
def test_no_claims(text: str) -> None:
    assert claims_of(text) == []


def claim(value: str, condition: str | None = None, text: str = "") -> Claim:
    return Claim("ken", "residence", value, condition, text or f"Ken lives in {value}.")


def test_judge_claims_strategies() -> None:
    assert judge_claims(claim("osaka"), claim("osaka")) is None
    assert judge_claims(claim("osaka"), Claim("mia", "residence", "tokyo", None, "")) is None
    assert judge_claims(claim("osaka"), Claim("ken", "employer", "tokyo", None, "")) is None
    superseded = judge_claims(claim("osaka"), claim("tokyo"))
    assert superseded is not None
    assert (superseded.contradicts, superseded.strategy) == (True, "supersede")
    assert "ken" in superseded.reason
    assert "osaka" in superseded.reason
    assert "tokyo" in superseded.reason
    assert "residence" in superseded.reason
    merged = judge_claims(
        claim("shibuya, tokyo", text="Ken lives in Shibuya, Tokyo."), claim("tokyo")
    )
    assert merged is not None
    assert merged.strategy == "merge"
    assert merged.merged_text == "Ken lives in Shibuya, Tokyo."
    both = judge_claims(claim("osaka", "on weekdays"), claim("kyoto", "on weekends"))
    assert both is not None
    assert both.strategy == "coexist"
    assert both.contradicts
    assert both.condition == "on weekdays: osaka; on weekends: kyoto"
    # A word inside a longer word is not containment.
    partial = judge_claims(claim("kyo"), claim("tokyo"))
    assert partial is not None
    assert partial.strategy == "supersede"
    ja = judge_claims(
        Claim("田中", "residence", "東京", None, "田中さんは東京に住んでいる。"),
        Claim("田中", "residence", "東京都渋谷区", None, "田中さんは東京都渋谷区に住んでいる。"),
    )
    assert ja is not None
    assert ja.merged_text == "田中さんは東京都渋谷区に住んでいる。"


def test_detect_conflicts_resolves_the_spec_cases() -> None:
    older = [
        source("o1", "Ken lives in Osaka."),
        source("o2", "担当はAさん"),
        source("o3", "On weekdays Ken works at Acme"),
        source("o4", "Mia lives in Tokyo."),
    ]
    newer = [
        source("n1", "Ken moved to Tokyo.", 3),
        source("n2", "担当はBさんです。", 2),
        source("n3", "On weekends Ken works at the bakery.", 2),
        source("n4", "Mia lives in Shibuya, Tokyo.", 2),
        source("n5", "Ken lives in Nagoya.", 1),
    ]
    found = [(c.older, c.newer, c.strategy) for c in detect_conflicts(older, newer)]
    assert found == [
        ("o1", "n1", "supersede"),
        ("o1", "n5", "supersede"),
        ("o2", "n2", "supersede"),
        ("o3", "n3", "coexist"),
        ("o4", "n4", "merge"),
        ("n5", "n1", "supersede"),  # among the newer, the earlier one is the older
    ]
    conflicts = {(c.older, c.newer): c for c in detect_conflicts(older, newer)}
    assert conflicts["o4", "n4"].merged_text == "Mia lives in Shibuya, Tokyo."
    assert conflicts["o3", "n3"].condition == "on weekdays: acme; on weekends: bakery"
    assert conflicts["o1", "n1"] == Conflict(
        "o1", "n1", "supersede", "ken's residence was 'osaka' and is now 'tokyo'."
    )


def test_a_new_person_in_charge_supersedes() -> None:
    (found,) = detect_conflicts(
        [source("k1", "プロジェクトAの担当は田中さん")],
        [source("k2", "プロジェクトAの担当は佐藤さん", 1)],
    )
    assert (found.older, found.newer, found.strategy) == ("k1", "k2", "supersede")
    assert "田中" in found.reason
    assert "佐藤" in found.reason


def test_detect_conflicts_skips_the_same_memory_and_agreement() -> None:
    same = source("m1", "Ken lives in Osaka.")
    assert detect_conflicts([same], [same]) == []
    assert detect_conflicts([same], [source("m2", "Ken lives in Osaka!")]) == []
    assert detect_conflicts([], []) == []


TEXTS = st.sampled_from(
    [
        "Ken lives in Osaka.",
        "Ken moved to Tokyo.",
        "Ken lives in Shibuya, Tokyo.",
        "On weekends Ken lives in Kyoto.",
        "Ken works at Acme.",
        "担当はAさん",
        "担当はBさんです。",
        "田中さんは大阪に住んでいます。",
        "I had ramen for lunch.",
    ]
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(TEXTS, max_size=4),
    st.lists(st.tuples(TEXTS, st.integers(0, 3)), max_size=4),
)
def test_detect_conflicts_invariants(
    old_texts: list[str], new_items: list[tuple[str, int]]
) -> None:
    older = [source(f"o{i}", t) for i, t in enumerate(old_texts)]
    newer = [source(f"n{i}", t, day) for i, (t, day) in enumerate(new_items)]
    conflicts = detect_conflicts(older, newer)
    assert conflicts == detect_conflicts(older, newer)
    pairs = [frozenset((c.older, c.newer)) for c in conflicts]
    assert len(pairs) == len(set(pairs))
    at = {s.id: s.at for s in [*older, *newer]}
    for c in conflicts:
        assert c.older != c.newer
        assert c.newer.startswith("n")
        assert at[c.older] <= at[c.newer] or c.older.startswith("o")
        assert (c.strategy == "merge") == (c.merged_text is not None)
        assert (c.strategy == "coexist") == (c.condition is not None)


CLAIMS = st.builds(
    Claim,
    st.sampled_from(["ken", "mia", ""]),
    st.sampled_from(["residence", "employer"]),
    st.sampled_from(["osaka", "tokyo", "shibuya, tokyo", "東京", "東京都"]),
    st.sampled_from([None, "on weekdays", "in summer"]),
    st.just("text"),
)


@settings(max_examples=150, deadline=None)
@given(CLAIMS, CLAIMS)
def test_judge_claims_invariants(older: Claim, newer: Claim) -> None:
    judgement = judge_claims(older, newer)
    assert judge_claims(older, older) is None
    same = older.subject == newer.subject and older.relation == newer.relation
    assert (judgement is not None) == (same and older.value != newer.value)
    assert (judge_claims(newer, older) is None) == (judgement is None)
    if judgement is not None:
        assert judgement.contradicts
        assert judgement.reason
        if judgement.strategy == "coexist":
            assert older.condition != newer.condition


@pytest.mark.parametrize(
    ("older", "newer", "relation"),
    [
        ("The deadline is Friday.", "The deadline was moved to Wednesday.", "deadline"),
        ("締め切りは金曜日です。", "締め切りは来週の水曜日に変更になりました。", "締め切り"),
        ("会議は毎週月曜日です。", "会議は火曜日に変更になりました。", "会議"),
        ("田中さんは東京在住です。", "田中さんは大阪に引っ越した。", "residence"),
    ],
)
def test_schedules_and_residence_said_without_an_owner_are_superseded(
    older: str, newer: str, relation: str
) -> None:
    [old] = [c for c in claims_of(older) if c.relation == relation]
    [new] = [c for c in claims_of(newer) if c.relation == relation]
    judged = judge_claims(old, new)
    assert judged is not None
    assert judged.strategy == "supersede"


def test_a_quality_is_not_a_schedule() -> None:
    assert claims_of("The meeting is important.") == []
    assert claims_of("The review is maybe later.") == []


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Sarah works at Google as a designer.", "Sarah left Google and now works at Apple."),
        ("Our team uses Jira for tracking bugs.", "We switched from Jira to Linear."),
        ("The staging server is staging-01.", "The staging server is now staging-02."),
        ("My phone number is 555-1234.", "My phone number is now 555-9876."),
    ],
)
def test_changes_said_in_other_words_are_superseded(older: str, newer: str) -> None:
    found = detect_conflicts(
        [Source("old", older, datetime(2026, 1, 1, tzinfo=UTC))],
        [Source("new", newer, datetime(2026, 2, 1, tzinfo=UTC))],
    )
    assert [(c.older, c.newer, c.strategy) for c in found] == [("old", "new", "supersede")]


def test_moving_house_is_not_a_change_of_tool() -> None:
    assert {c.relation for c in claims_of("Ken moved to Tokyo last year.")} == {"residence"}
