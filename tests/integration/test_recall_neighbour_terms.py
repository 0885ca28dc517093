"""Neighbour terms in recall: a turn found by the words of the turns around it (a real
SQLite home)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock

TOKYO = ZoneInfo("Asia/Tokyo")
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=TOKYO)
QUERY = "Did the kids enjoy the dinosaur exhibit?"


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=FixedClock(T0 + timedelta(days=1)), env={}) as k:
        # Floor 0: every candidate may be recalled, so what is found shows the match alone.
        retrieval = replace(k.config.retrieval, min_relevance=0.0, relevance_threshold=0.0)
        k.config = replace(k.config, retrieval=retrieval)
        yield k


def _turns(k: Kioku, session: str, start: datetime, texts: list[str]) -> list[str]:
    return [
        k.remember_turn(text, at=start + timedelta(minutes=i), session_id=session)[0].id
        for i, text in enumerate(texts)
    ]


def _store(k: Kioku) -> tuple[list[str], list[str]]:
    talk = _turns(
        k,
        "s1",
        T0,
        [
            "Melanie: How did the kids like the dinosaur exhibit at the museum?",
            "Caroline: They were stoked, we stayed until closing time.",
            "Melanie: Glad to hear it. I started a pottery class last week.",
        ],
    )
    # The same reply in another session, at the same moment: no neighbour lends it anything.
    other = _turns(
        k, "s2", T0 + timedelta(minutes=1), ["Caroline: They were stoked, we stayed for hours."]
    )
    _turns(
        k,
        "s3",
        T0 + timedelta(days=-3),
        [
            "Caroline: The bus was late again this morning.",
            "Melanie: Rain all day here, we baked a cake instead.",
            "Caroline: My sister painted a sunset over the lake.",
        ],
    )
    return talk, other


def _lexical(k: Kioku) -> dict[str, float]:
    return {i.memory.id: i.lexical for i in k.recall(QUERY, mark=False, top_k=20).items}


def test_a_reply_is_found_by_the_words_of_what_it_answers(kioku: Kioku) -> None:
    talk, other = _store(kioku)
    found = _lexical(kioku)
    assert found[talk[0]] == pytest.approx(1.0)  # the question holds the words itself
    assert 0.0 < found[talk[1]] < found[talk[0]]
    assert found.get(other[0], 0.0) == 0.0


def test_only_with_conversation_context(kioku: Kioku) -> None:
    talk, _ = _store(kioku)
    retrieval = replace(kioku.config.retrieval, context_weight=0.0)
    kioku.config = replace(kioku.config, retrieval=retrieval)
    assert _lexical(kioku).get(talk[1], 0.0) == 0.0


def test_an_off_topic_prompt_still_recalls_nothing(kioku: Kioku) -> None:
    _store(kioku)
    retrieval = replace(kioku.config.retrieval, min_relevance=0.1)
    kioku.config = replace(kioku.config, retrieval=retrieval)
    assert kioku.recall("What is the capital of Australia?", mark=False).items == ()


def test_the_session_read_around_a_match_uses_the_session_index(tmp_path: Path) -> None:
    """Recall reads the turns around its best matches by session and time: an index search,
    never a scan of the owner's memories (schema 13)."""
    from kioku.ports.store import MemoryFilter, Order

    with Kioku.open(tmp_path / "home", env={}) as kioku:
        kioku.remember_turn("Caroline: I went to a support group.", session_id="s1")
        kioku.remember_turn("Melanie: They were stoked for the dinosaur exhibit!", session_id="s1")
        store = kioku.store
        seen: list[str] = []
        conn = store._conn  # type: ignore[attr-defined]
        conn.set_trace_callback(seen.append)
        try:
            moment = datetime(2026, 1, 1, tzinfo=ZoneInfo("UTC"))
            store.activity_fields(
                MemoryFilter(
                    user_id=kioku.user_id,
                    agent_id=kioku.agent_id,
                    session_id="s1",
                    created_after=moment - timedelta(hours=2),
                    created_before=moment + timedelta(hours=2),
                    order=Order.CREATED_ASC,
                    limit=1000,
                    offset=0,
                )
            )
        finally:
            conn.set_trace_callback(None)
        [query] = [q for q in seen if "session_id" in q]
        plan = " ".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + query))
        assert "USING INDEX idx_memories_session" in plan


def _prepared(k: Kioku, session: str, start: datetime, texts: list[str]) -> list[str]:
    """``texts`` as turns a minute apart, stored in one call."""
    turns = [
        k.prepare_turn(text, at=start + timedelta(minutes=i), session_id=session)
        for i, text in enumerate(texts)
    ]
    return [remembered[0].id for remembered in k.store_turns(turns)]


def test_the_turns_around_seeds_in_many_sessions_are_read_at_once(kioku: Kioku) -> None:
    """One statement reads around the seeds of every session, through the session index."""
    replies = [
        _turns(
            kioku,
            f"s{n}",
            T0 - timedelta(hours=3 * n),
            [
                f"Melanie: How did the kids like the dinosaur exhibit in town {n}?",
                f"Caroline: They were stoked, we stayed until closing time on day {n}.",
            ],
        )[1]
        for n in range(8)
    ]
    conn = kioku.store._conn  # type: ignore[attr-defined]
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        found = _lexical(kioku)
    finally:
        conn.set_trace_callback(None)
    assert all(found.get(reply, 0.0) > 0 for reply in replies)
    reads = [q for q in seen if "session_id =" in q]
    assert len(reads) == 1
    plan = " ".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + reads[0]))
    assert "USING INDEX idx_memories_session" in plan


def test_a_vector_match_borrows_the_words_around_it(kioku: Kioku) -> None:
    """A turn the vector search finds lends and borrows terms like a lexical match, even
    when the lexical seeds are all elsewhere."""
    from kioku.adapters.text.lexical import query_terms
    from kioku.ports.store import MemoryFilter
    from kioku.service.recall.neighbour_terms import SEEDS, widen

    for n in range(SEEDS + 5):  # better lexical matches than there are lexical seeds
        _turns(
            kioku, f"m{n}", T0 - timedelta(days=1, hours=3 * n), [f"Kids, dinosaur exhibit {n}."]
        )
    question, reply = _turns(
        kioku,
        "x",
        T0,
        [
            "Melanie: We talked for hours about school, work, the weather, our trip to "
            "the coast, the new neighbours and, at the very end, about the kids.",
            "Caroline: They were stoked.",
        ],
    )
    store = kioku.store
    flt = MemoryFilter(user_id=kioku.user_id, agent_id=kioku.agent_id, archived=False)
    terms = query_terms(QUERY)
    lexical = dict(store.search_lexical(terms, flt, 100))
    ranked = sorted(lexical, key=lambda key: -lexical[key])
    assert ranked.index(question) >= SEEDS
    assert reply not in lexical
    assert widen(store, flt, terms, lexical)[0].get(reply, 0.0) == 0.0
    widened, _ = widen(store, flt, terms, lexical, {reply: 0.9})
    assert widened[reply] > 0.0
    assert widened[question] > 0.0


def test_seeds_far_apart_in_a_long_session_each_have_their_turns_read(kioku: Kioku) -> None:
    """Each seed's turns are read, however far apart the seeds are in one session: a read
    per stretch around seeds, not one from the first seed to the last (at most 1,000 turns
    each)."""
    texts = [f"Caroline: line {i} of a long chat about gardening." for i in range(1300)]
    texts[5] = "Melanie: How did the kids like the dinosaur exhibit at the museum?"
    texts[6] = "Caroline: They were stoked, we stayed until closing time."
    texts[1250] = "Melanie: And the kids, did they like the dinosaur exhibit the second time?"
    texts[1251] = "Caroline: They were stoked again, even more."
    ids = _prepared(kioku, "long", T0 - timedelta(days=2), texts)
    found = _lexical(kioku)
    assert found.get(ids[6], 0.0) > 0.0
    assert found.get(ids[1251], 0.0) > 0.0
