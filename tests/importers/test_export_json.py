"""``kioku export --format json``: one owner's memories as one JSON document, and nothing of
another owner's."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.lifecycle.links import Link
from kioku.ports.store import MemoryPatch
from tests.cli.conftest import run_kioku
from tests.importers.conftest import Cli

AT = datetime(2025, 3, 4, 9, 30, tzinfo=ZoneInfo("Asia/Tokyo"))


@pytest.fixture
def two_owners(home: Path) -> dict[str, str]:
    """alice: an episode, a knowledge item (archived) linked to it, a procedure; hanako: one
    episode. The ids by role."""
    with Kioku.open(home, clock=FixedClock(AT), env={}, user_id="alice") as k:
        episode = k.remember(
            "Moved to Sendai", "A new flat near the river", intensity=70, category="emotional"
        )
        fact = k.write_memory("knowledge", "The river path floods in June", title="river")
        steps = k.write_memory(
            "procedure", "", title="bins", description="put the bins out", steps=["sort", "carry"]
        )
        k.store.add_links([Link(fact.id, episode.id, "references")], AT)
        k.store.update(fact.id, MemoryPatch(archived_at=AT, current_level=4))
    with Kioku.open(home, clock=FixedClock(AT), env={}, user_id="hanako") as k:
        other = k.remember("花子の予定", "金曜は休み", intensity=30, category="casual")
    return {"episode": episode.id, "fact": fact.id, "procedure": steps.id, "other": other.id}


def _check_alice(doc: dict[str, Any], ids: dict[str, str]) -> None:
    assert doc["format"] == "kioku-json"
    assert doc["version"] == 1
    assert doc["scope"] == {"user_id": "alice", "agent_id": "default"}
    found = {m["id"]: m for m in doc["memories"]}
    assert set(found) == {ids["episode"], ids["fact"], ids["procedure"]}
    assert ids["other"] not in json.dumps(doc)  # nothing of hanako's, not even an id
    assert "花子" not in json.dumps(doc, ensure_ascii=False)
    assert all(m["scope"]["user_id"] == "alice" for m in doc["memories"])
    assert found[ids["fact"]]["archived_at"] is not None  # archived memories are there too
    assert found[ids["fact"]]["content"] == "The river path floods in June"
    assert found[ids["procedure"]]["steps"] == ["sort", "carry"]
    assert {"from": ids["fact"], "to": ids["episode"], "type": "references"} in doc["relations"]
    assert doc["activity"]
    assert all(line["user"] == "alice" for line in doc["activity"])
    assert doc["counts"]["episodes"] == 1
    assert doc["counts"]["knowledge"] == 1
    assert doc["counts"]["procedures"] == 1
    assert doc["counts"]["archived"] == 1
    assert doc["counts"]["activity_lines"] == len(doc["activity"])


def test_export_json_writes_one_owner_and_only_that_owner(
    cli: Cli, tmp_path: Path, two_owners: dict[str, str]
) -> None:
    target = tmp_path / "alice.json"
    done = cli("export", "--user", "alice", "--format", "json", str(target))
    assert done.code == 0, done.err
    assert done.out.startswith(f"exported 3 memories to {target} (1 episodes, 1 knowledge")
    assert target.stat().st_mode & 0o777 == 0o600
    _check_alice(json.loads(target.read_text(encoding="utf-8")), two_owners)
    stdout = cli("--user", "alice", "export", "--format", "json", "-")
    assert stdout.code == 0, stdout.err
    doc = json.loads(stdout.out)
    _check_alice(doc, two_owners)
    hanako = cli("export", "--user", "hanako", "--format", "json").json()
    assert [m["id"] for m in hanako["memories"]] == [two_owners["other"]]
    again = cli("export", "--user", "alice", "--format", "json", str(target))
    assert again.code == 2
    assert "exists" in again.err
    assert "--force" in again.err
    assert cli("export", "--user", "alice", "--format", "json", "--force", str(target)).code == 0


def test_an_owner_s_files_export_imports_into_a_new_store_with_the_same_json(
    cli: Cli, tmp_path: Path, two_owners: dict[str, str]
) -> None:
    assert cli("export", "--user", "alice", "--format", "files", str(tmp_path / "files")).code == 0
    fresh = tmp_path / "fresh"
    done = cli(
        "--home",
        str(fresh),
        "--user",
        "alice",
        "import",
        "--from",
        "files",
        str(tmp_path / "files"),
    )
    assert done.code == 0, done.err
    first = cli("export", "--user", "alice", "--format", "json").json()
    second = cli("--home", str(fresh), "export", "--user", "alice", "--format", "json").json()
    assert first["relations"]
    assert second["memories"] == first["memories"]
    assert second["relations"] == first["relations"]
    assert second["activity"] == first["activity"]


def test_the_real_command_exports_json_to_stdout(home: Path, two_owners: dict[str, str]) -> None:
    done = run_kioku("--home", str(home), "export", "--user", "alice", "--format", "json")
    assert done.code == 0, done.err
    _check_alice(json.loads(done.out), two_owners)


def test_a_json_export_imports_back_whole_once(
    cli: Cli, tmp_path: Path, two_owners: dict[str, str]
) -> None:
    target = tmp_path / "alice.json"
    assert cli("export", "--user", "alice", "--format", "json", str(target)).code == 0
    fresh = tmp_path / "fresh"
    dry = cli("--home", str(fresh), "import", "--from", "json", "--dry-run", str(target), "--json")
    assert dry.code == 0, dry.err
    assert (dry.json()["created"], dry.json()["knowledge"]) == (3, 1)
    assert not (fresh / "memories.db").exists()
    done = cli("--home", str(fresh), "--user", "alice", "import", "--from", "json", str(target))
    assert done.code == 0, done.err
    assert done.out.startswith("imported 3 memories")
    first = json.loads(target.read_text(encoding="utf-8"))
    second = cli("--home", str(fresh), "export", "--user", "alice", "--format", "json").json()
    assert second["memories"] == first["memories"]
    assert second["relations"] == first["relations"]
    assert second["activity"] == first["activity"]
    again = cli("--home", str(fresh), "--user", "alice", "import", "--from", "json", str(target))
    assert again.out.startswith("imported 0 memories")
    assert "skipped 3 already stored" in again.out


def test_a_bad_json_export_names_the_memory_and_the_field(
    cli: Cli, tmp_path: Path, two_owners: dict[str, str]
) -> None:
    target = tmp_path / "alice.json"
    assert cli("export", "--user", "alice", "--format", "json", str(target)).code == 0
    doc = json.loads(target.read_text(encoding="utf-8"))
    doc["memories"][1]["recall_count"] = "many"
    target.write_text(json.dumps(doc), encoding="utf-8")
    fresh = tmp_path / "fresh"
    done = cli("--home", str(fresh), "import", "--from", "json", str(target))
    assert done.code == 2
    assert f"{target}: memories[1]: recall_count: expected a whole number" in done.err
    if (fresh / "memories.db").exists():
        with Kioku.open(fresh, env={}) as k:
            assert k.count(archived=None, kind=None) == 0
