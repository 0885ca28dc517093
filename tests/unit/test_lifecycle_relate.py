"""Spec 000's relation types, rule by rule (リレーションタイプ, リレーションの方向)."""

from __future__ import annotations

import pytest

from kioku.core.lifecycle.links import Node
from kioku.core.lifecycle.relate import (
    CONTINUE_GAP_SECONDS,
    Earlier,
    Fresh,
    Proposal,
    choose,
    markers,
    propose,
)

T = 1_780_000_000.0
DAY = 86_400.0


def fresh(text: str, category: str = "work", session: str | None = None) -> Fresh:
    return Fresh("new", T, category, session, text)


def earlier(
    mid: str, sim: float, *, ago: float = DAY, category: str = "work", session: str | None = None
) -> Earlier:
    return Earlier(mid, T - ago, category, session, sim)


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("前に話したDockerの件だけど", {"references"}),
        ("As we discussed, the index helps", {"references"}),
        ("Last time you mentioned a timeout", {"references"}),
        ("昨日の続きをやろう", {"continues"}),
        ("Let's pick up where we left off", {"continues"}),
        ("MongoDBはやめてSQLiteに変更する", {"contradicts"}),
        ("We will use Postgres instead", {"contradicts"}),
        ("We no longer need the cache", {"contradicts"}),
        ("今日はいい天気", set()),
        ("The deploy works now", set()),
        # Descriptions of the turn itself are not references to an earlier one.
        ("We talked about the index during the review", set()),
        ("I went shopping yesterday", set()),
    ],
)
def test_markers(text: str, kinds: set[str]) -> None:
    assert markers(text) == kinds


def test_next_turn_of_the_session_continues_it() -> None:
    new = fresh("and the logs say permission denied", session="s1")
    turns = [
        earlier("t1", 0.1, ago=600, session="s1"),
        earlier("t0", 0.9, ago=1200, session="s1"),
        earlier("other", 0.1, ago=60, session="s2"),
    ]
    [p] = propose(new, turns)
    assert (p.earlier, p.type) == ("t1", "continues")


def test_a_long_pause_ends_continuation() -> None:
    new = fresh("next question", session="s1")
    assert propose(new, [earlier("t1", 0.1, ago=CONTINUE_GAP_SECONDS + 1, session="s1")]) == []


def test_saying_it_continues_links_the_most_similar_recent_memory() -> None:
    new = fresh("Continuing from yesterday: the migration")
    found = propose(new, [earlier("old", 0.9, ago=10 * DAY), earlier("y", 0.6), earlier("z", 0.4)])
    assert [(p.earlier, p.type) for p in found] == [("y", "continues")]


def test_an_explicit_reference_links_the_best_match() -> None:
    new = fresh("前に話したMongoDBの件、もう一度教えて")
    found = propose(new, [earlier("a", 0.35), earlier("b", 0.7, ago=200 * DAY), earlier("c", 0.1)])
    assert [(p.earlier, p.type) for p in found] == [("b", "references")]
    assert propose(new, [earlier("c", 0.1)]) == []  # nothing similar enough


def test_a_decision_overturning_one_contradicts_it() -> None:
    new = fresh("やっぱりMongoDBはやめて、JSONファイルに変更する", category="decision")
    found = propose(
        new,
        [
            earlier("chat", 0.9, category="casual"),
            earlier("d1", 0.8, category="decision"),
            earlier("d2", 0.3, category="decision"),
        ],
    )
    assert [(p.earlier, p.type) for p in found] == [("d1", "contradicts")]


def test_a_decision_derives_from_the_discussion_before_it() -> None:
    new = fresh("We decided on blue-green deploys", category="decision")
    found = propose(
        new,
        [
            earlier("talk", 0.7, ago=2 * DAY),
            earlier("ancient", 0.95, ago=40 * DAY),
            earlier("d", 0.9, category="decision"),
        ],
    )
    assert [(p.earlier, p.type) for p in found] == [("talk", "derived_from")]


def test_one_type_per_pair_the_most_specific() -> None:
    # The previous turn of the session is also the decision it overturns.
    new = fresh("No longer using Redis; switch to SQLite", category="decision", session="s")
    [p] = propose(new, [earlier("d1", 0.8, ago=60, category="decision", session="s")])
    assert p.type == "contradicts"


def test_only_earlier_memories_are_candidates() -> None:
    new = fresh("as we discussed")
    assert propose(new, [Earlier("later", T + 60, "work", None, 0.9)]) == []


def test_choose_directs_by_score_and_keeps_the_cap() -> None:
    nodes = {"new": Node(90.0, T), "a": Node(30.0, T - DAY), "b": Node(88.0, T - DAY)}
    proposals = [
        Proposal("new", "a", "references", 0.6, "r"),
        Proposal("new", "b", "continues", 0.5, "c"),
    ]
    links = choose(proposals, [], nodes, max_relations=10, proximity=5.0)
    assert [(link.source, link.target, link.type) for link, _ in links] == [
        ("new", "a", "references"),  # higher score → lower
        ("new", "b", "continues"),  # scores within 5: newer → older
    ]
    # Turned the other way when the earlier memory scores higher.
    nodes["a"] = Node(99.0, T - DAY)
    [(link, _)] = choose(proposals[:1], [], nodes, max_relations=10, proximity=5.0)
    assert (link.source, link.target) == ("a", "new")
    # A pair already linked, or a memory at its cap, gets nothing new.
    assert choose(proposals[:1], [("a", "new")], nodes, max_relations=10, proximity=5.0) == []
    capped = choose(proposals, [("new", "x")], nodes, max_relations=2, proximity=5.0)
    assert len(capped) == 1
