"""``kioku import --from mem0`` on mem0's history database and on its JSON export."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from kioku import Kioku
from kioku.core.kinds import KnowledgeDetails
from kioku.ports.store import Order
from tests.importers.conftest import FIXTURES, Cli, mem0_history


def _knowledge(home: Path) -> list[tuple[str, datetime, tuple[str, ...]]]:
    with Kioku.open(home, env={}) as k:
        found = k.list(kind="knowledge", archived=None, order=Order.CREATED_ASC)
    assert all(isinstance(m.details, KnowledgeDetails) for m in found)
    return [(m.content, m.created, m.source_ids) for m in found]


def test_the_history_database_gives_the_latest_value_of_each_live_memory(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    db = mem0_history(tmp_path)
    before = db.read_bytes()
    done = cli("import", "--from", "mem0", str(db), "--json")
    assert done.code == 0, done.err
    report = done.json()
    assert (report["knowledge"], report["episodes"], report["ignored"]) == (2, 0, 1)
    stored = _knowledge(home)
    assert [text for text, _, _ in stored] == [
        "Likes spicy ramen, especially tonkotsu",  # updated: its latest value
        "Works as a nurse in Osaka",  # the deleted peanut allergy is left out
    ]
    # The time of the ADD row, kept to the second.
    assert stored[0][1] == datetime.fromisoformat("2024-07-01T10:15:30-07:00")
    assert stored[1][1] == datetime.fromisoformat("2024-08-02T09:00:00-07:00")
    assert stored[0][2][0].startswith("mem0:3f1c2a10-5b6d-4e8f-9a01-000000000001:")
    assert db.read_bytes() == before  # opened read-only
    again = cli("import", "--from", "mem0", str(tmp_path), "--json")  # the folder of history.db
    assert again.code == 0, again.err
    assert (again.json()["created"], again.json()["skipped"]) == (0, 2)


def test_a_json_export_of_memories_is_read_too(cli: Cli, home: Path) -> None:
    source = FIXTURES / "mem0" / "memories.json"
    done = cli("import", "--from", "mem0", str(source))
    assert done.code == 0, done.err
    assert done.out.startswith("imported 2 (0 episodes, 2 knowledge, 0 procedures)")
    stored = _knowledge(home)
    assert [text for text, _, _ in stored] == [
        "Prefers window seats on long flights",
        "Has a cat named Mochi",
    ]
    assert stored[1][1] == datetime.fromisoformat("2024-09-12T21:05:44-07:00")
    again = cli("import", "--from", "mem0", str(source))
    assert again.out.startswith("imported 0 (0 episodes, 0 knowledge, 0 procedures), skipped 2")


def test_a_changed_memory_comes_in_anew_and_an_erased_one_never_again(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    items = [
        {"id": "m1", "memory": "Drinks green tea", "created_at": "2024-01-02T03:04:05Z"},
        {"id": "m2", "memory": "Lives in Kobe", "created_at": "2024-01-03T03:04:05Z"},
    ]
    source = tmp_path / "memories.json"
    source.write_text(json.dumps(items), encoding="utf-8")
    assert cli("import", "--from", "mem0", str(source), "--json").json()["created"] == 2
    with Kioku.open(home, env={}) as k:
        (kobe,) = [m for m in k.list(kind="knowledge") if m.content == "Lives in Kobe"]
        k.forget(kobe.id)
    items[0]["memory"] = "Drinks green tea, no sugar"
    source.write_text(json.dumps(items), encoding="utf-8")
    again = cli("import", "--from", "mem0", str(source), "--json").json()
    assert (again["created"], again["skipped"]) == (1, 1)  # the new text; Kobe stays erased
    assert sorted(text for text, _, _ in _knowledge(home)) == [
        "Drinks green tea",
        "Drinks green tea, no sugar",
    ]
