"""The store contract for erasure: tombstones, the audit log, the backups manifest, scrubbing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from kioku.core.model import Relation, RelationType
from kioku.ports.erasure import ErasedSourceError
from kioku.ports.store import MemoryFilter, Store
from tests.contract.conftest import MakeMemory

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def test_delete_many_erases_memories_and_their_relations(
    store: Store, make_memory: MakeMemory
) -> None:
    a, b = make_memory(), make_memory()
    store.add_many([a, b])
    c = make_memory(relations=(Relation(a.id, RelationType.SAME_TOPIC),))
    store.add(c)
    assert store.delete_many([a.id, b.id, "mem_missing", a.id]) == 2
    remaining = store.list(MemoryFilter())
    assert [m.id for m in remaining] == [c.id]
    assert remaining[0].relations == ()
    assert store.delete_many([]) == 0


def test_a_tombstoned_source_id_is_refused_on_insert(store: Store, make_memory: MakeMemory) -> None:
    assert "s1:1" not in store.tombstones()
    assert store.add_tombstones(["s1:1", "s1:2", "s1:1"], NOW) == 2
    assert store.add_tombstones(["s1:1"], NOW) == 0
    tombstones = store.tombstones()
    assert "s1:1" in tombstones
    assert "s1:3" not in tombstones
    assert len(tombstones) == 2
    assert "s1:1" not in repr(tombstones)  # kept as digests
    with pytest.raises(ErasedSourceError):
        store.add(make_memory(source_ids=("s1:3", "s1:2")))
    store.add(make_memory(source_ids=("s1:3",)))
    assert store.count(MemoryFilter()) == 1


def test_the_insert_refusal_rolls_back_the_whole_batch(
    store: Store, make_memory: MakeMemory
) -> None:
    store.add_tombstones(["gone"], NOW)
    with pytest.raises(ErasedSourceError):
        store.add_many([make_memory(), make_memory(source_ids=("gone",))])
    assert store.count(MemoryFilter()) == 0


def test_secret_digest_is_stable_and_keyed(store: Store) -> None:
    first = store.secret_digest("user\0alice")
    assert first == store.secret_digest("user\0alice")
    assert first != store.secret_digest("user\0bob")
    assert "alice" not in first


def test_the_audit_log_is_appended_and_read_in_order(store: Store) -> None:
    one = store.append_audit(NOW, "forget", "d1", 1, {"memory_id": "m1"})
    two = store.append_audit(NOW, "erase_user", "d2", 5, {"backups_still_containing": []})
    assert two > one
    entries = store.read_audit()
    assert [(e.action, e.subject, e.items) for e in entries] == [
        ("forget", "d1", 1),
        ("erase_user", "d2", 5),
    ]
    assert entries[0].details == {"memory_id": "m1"}
    assert [e.seq for e in store.read_audit(limit=1)] == [two]


def test_the_backups_manifest_says_which_backups_hold_a_memory(
    store: Store, make_memory: MakeMemory, tmp_path: Path
) -> None:
    a, b = make_memory(), make_memory(user_id="bob")
    store.add(a)
    first = store.backup(tmp_path / "one.db")
    assert first.memories == 1
    store.add(b)
    second = store.backup(tmp_path / "two.db")
    assert second.memories == 2
    assert len(second.users) == 2
    assert "bob" not in second.users  # users are keyed digests
    assert [r.seq for r in store.backups()] == [first.seq, second.seq]
    assert [r.path for r in store.backups_containing([a.id])] == [
        str((tmp_path / "one.db").resolve()),
        str((tmp_path / "two.db").resolve()),
    ]
    assert [r.seq for r in store.backups_containing([b.id])] == [second.seq]
    assert store.backups_containing(["mem_never"]) == []


def test_a_backup_never_replaces_a_file_without_overwrite(
    store: Store, make_memory: MakeMemory, tmp_path: Path
) -> None:
    from kioku.errors import StoreError

    store.add(make_memory())
    target = tmp_path / "b.db"
    target.write_bytes(b"old")
    with pytest.raises(StoreError):
        store.backup(target)
    assert target.read_bytes() == b"old"
    assert store.backup(target, overwrite=True).memories == 1
    with pytest.raises(StoreError):
        store.backup(tmp_path / "missing" / "c.db")  # no directory is created
    assert not (tmp_path / "missing").exists()


def test_delete_log_and_delete_state(store: Store, make_memory: MakeMemory) -> None:
    from kioku.core.lifecycle.log import Event, LogEntry

    store.add_many([make_memory(user_id="u1"), make_memory(user_id="u2")])
    store.append_log(
        [
            LogEntry(event=Event.DELETE, memory_id="m1", at=NOW, user_id="u1", agent_id="a"),
            LogEntry(event=Event.DELETE, memory_id="m2", at=NOW, user_id="u2", agent_id="a"),
        ]
    )
    assert store.delete_log("u1") == 1
    assert [e.user_id for e in store.read_log()] == ["u2"]
    store.set_state("working_memory:u1:a:s", "{}")
    store.set_state("working_memory:u10:a:s", "{}")
    assert store.delete_state("working_memory:u1:") == 1
    assert store.get_state("working_memory:u10:a:s") == "{}"


def test_scrub_and_vacuum_report_what_they_did(store: Store, make_memory: MakeMemory) -> None:
    memory = make_memory()
    store.add(memory)
    store.delete(memory.id)
    report = store.scrub()
    assert report.index_merged
    assert report.wal_truncated
    before, after, again = store.vacuum()
    assert before >= 0
    assert after >= 0
    assert again.wal_truncated
    with store.atomic(), pytest.raises(Exception, match="atomic"):
        store.scrub()
