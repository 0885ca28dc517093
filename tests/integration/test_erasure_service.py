"""Erasure through the Python API: tombstones at every path that stores a turn, per-person
erasure with its confirmation token, and the audit log."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.interfaces.claude_code.ingest import ingest_transcript
from kioku.ports.erasure import ErasedSourceError
from kioku.service.erasure.erasure import ErasureTokenError

FIXTURES = Path(__file__).parent.parent / "fixtures" / "claude"


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", env={}) as k:
        yield k


def test_an_erased_turn_is_known_and_never_stored_again(kioku: Kioku) -> None:
    memory, _ = kioku.remember_turn("the plum tree needs pruning", "in winter", source_ids=["s:1"])
    report = kioku.erase(memory.id)
    assert report.tombstoned == 1
    known = kioku.known_source_ids()
    assert "s:1" in known
    assert "s:2" not in known
    assert list(known) == []  # erased ids are not readable back
    again = kioku.remember_turn("the plum tree needs pruning", "in winter", source_ids=["s:1"])
    assert again.known  # treated as already known: not an error
    assert kioku.count() == 0
    with pytest.raises(ErasedSourceError):
        kioku.remember("t", "c", intensity=40, category="work", source_ids=["s:1"])
    assert kioku.count() == 0
    kioku.remember_turn("another turn", source_ids=["s:2"])
    assert kioku.count() == 1


def test_ingesting_a_transcript_again_after_forget(kioku: Kioku) -> None:
    first = ingest_transcript(kioku, FIXTURES / "japanese.jsonl")
    assert first.added >= 2
    kioku.forget(first.memory_ids[0])
    again = ingest_transcript(kioku, FIXTURES / "japanese.jsonl")
    assert again.added == 0
    assert kioku.count() == first.added - 1


def test_forget_writes_an_audit_row_without_text(kioku: Kioku) -> None:
    memory = kioku.remember("the velvetquince plan", "secret", intensity=40, category="work")
    report = kioku.erase(memory.id)
    assert report.scrub.index_merged
    assert report.scrub.wal_truncated
    (entry,) = kioku.store.read_audit()
    assert entry.action == "forget"
    assert entry.items == 1
    assert entry.details["memory_id"] == memory.id
    assert "velvetquince" not in repr(entry)
    assert kioku.user_id not in entry.subject


def test_forget_inside_a_transaction_scrubs_later(kioku: Kioku) -> None:
    memory = kioku.remember("t", "c", intensity=40, category="work")
    with kioku.store.atomic():
        report = kioku.erase(memory.id)
    assert not report.scrub.wal_truncated
    assert kioku.count() == 0
    assert kioku.store.scrub().wal_truncated


def test_erase_user_with_its_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}, user_id="gil", agent_id="a1") as gil:
        gil.remember_turn("gil's first turn", source_ids=["g:1"])
        gil.store.set_state("working_memory:gil:a1:s1", '{"window": "gil text"}')
    with Kioku.open(home, env={}, user_id="gil", agent_id="a2") as gil2:
        gil2.remember("gil on another agent", "c", intensity=40, category="work")
    with Kioku.open(home, env={}, user_id="hal") as hal:
        hal.remember("hal stays", "c", intensity=40, category="work")
        from kioku.service import keys

        gil_key = keys.create_key(hal, "gil's phone", "gil", "a1")[1]
        keys.create_key(hal, "gil's old laptop", "gil", "a2")
        keys.revoke_key(hal, keys.list_keys(hal)[-1].id)
        keys.create_key(hal, "hal's app", "hal", "default")
        plan = hal.plan_erasure("gil")
        assert (plan.memories, plan.by_agent, plan.source_ids) == (2, {"a1": 1, "a2": 1}, 1)
        with pytest.raises(ErasureTokenError):
            hal.erase_user("gil", "0" * 20)
        assert hal.plan_erasure("gil").memories == 2
        report = hal.erase_user("gil", plan.token)
        assert (report.erased, report.tombstoned, report.state_rows_deleted) == (2, 1, 1)
        # Gil's keys, the revoked one too, are gone with gil: names are gil's words.
        assert report.api_keys_deleted == 2
        assert [k.user_id for k in keys.list_keys(hal, include_revoked=True)] == ["hal"]
        with pytest.raises(keys.AuthError):
            keys.verify_key(hal, gil_key)
        assert hal.plan_erasure("gil").memories == 0
        assert hal.count() == 1
        assert hal.store.get_state("working_memory:gil:a1:s1") is None
        assert "g:1" in hal.store.tombstones()
        assert [e.action for e in hal.store.read_audit()] == ["erase_user"]
