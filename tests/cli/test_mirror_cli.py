"""``kioku export --layout files`` and ``kioku import --layout files``, run as the real command."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from tests.cli.conftest import run_kioku

AT = datetime(2026, 1, 15, 14, 30, tzinfo=ZoneInfo("Asia/Tokyo"))


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    """A home with a few memories of each kind (and one of another user), and its export."""
    root = tmp_path_factory.mktemp("mirror_cli")
    home = root / "home"
    with Kioku.open(home, clock=FixedClock(AT), env={}) as k:
        episode = k.remember(
            "新しい仕事が決まった",
            "とても嬉しい。四月から始まる。",
            intensity=80,
            category="emotional",
            valence="positive",
            tags=["joy"],
            protected=True,
        )
        knowledge = k.write_memory("knowledge", "The staging DB is db-stg-2", title="staging")
        procedure = k.write_memory(
            "procedure", "", title="deploy", description="release", steps=["test", "tag"]
        )
        k.report_procedure_outcome(procedure.id, True)
    with Kioku.open(home, clock=FixedClock(AT), env={}, user_id="hanako") as k:
        other = k.remember("花子の予定", "金曜は休み", intensity=30, category="casual")
    done = run_kioku("--home", str(home), "export", "--layout", "files", str(root / "out"))
    assert done.code == 0, done.err
    ids = {
        "episode": episode.id,
        "knowledge": knowledge.id,
        "procedure": procedure.id,
        "other": other.id,
    }
    return home, root / "out", ids


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "kioku.json"
    }


def _nothing_stored(home: Path) -> bool:
    if not (home / "memories.db").exists():
        return True
    with Kioku.open(home, env={}) as k:
        return k.count(archived=None) == 0


def test_the_help_documents_the_layout() -> None:
    done = run_kioku("export", "--help")
    assert done.code == 0
    for text in (
        "--layout [files]",
        "--force",
        "DIR/episodes/YYYY-MM-DD/<id>.md",
        "DIR/knowledge/<id>.md",
        "DIR/procedures/<id>.md",
        "DIR/users/<id>.md",
        "DIR/activity_log/YYYY-MM-DD.jsonl",
        "DIR/kioku.json",
        "YAML front matter",
    ):
        assert text in done.out, text
    assert "--layout [jsonl|files]" in run_kioku("import", "--help").out


def test_export_import_export_gives_the_same_files(
    filled: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    _, out, ids = filled
    assert (out / "episodes" / "2026-01-15" / f"{ids['episode']}.md").is_file()
    assert not list(out.rglob(f"{ids['other']}.md"))  # another user's memory stays home
    home2 = tmp_path / "home2"
    done = run_kioku("--home", str(home2), "import", "--layout", "files", str(out), "--json")
    assert done.code == 0, done.err
    report = done.json()
    assert report["imported"] == 3
    assert report["skipped"] == 0
    assert report["by_kind"] == {"episodes": 1, "knowledge": 1, "procedures": 1, "users": 0}
    again = run_kioku("--home", str(home2), "export", "--layout", "files", str(tmp_path / "two"))
    assert again.code == 0, again.err
    assert "exported 3 memories" in again.out
    assert _tree(tmp_path / "two") == _tree(out)
    manifest = json.loads((tmp_path / "two" / "kioku.json").read_text(encoding="utf-8"))
    assert manifest["scope"] == {"user_id": "default", "agent_id": "default"}
    assert manifest["counts"]["procedures"] == 1
    repeat = run_kioku("--home", str(home2), "import", "--layout", "files", str(out))
    assert repeat.code == 0
    assert "imported 0 memories" in repeat.out
    assert "skipped 3 already stored" in repeat.out


def test_export_writes_the_scope_asked_for(
    filled: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    home, _, ids = filled
    done = run_kioku("--home", str(home), "--user", "hanako", "export", str(tmp_path / "h"))
    assert done.code == 0, done.err
    names = sorted(p.name for p in (tmp_path / "h").rglob("*.md"))
    assert names == [f"{ids['other']}.md"]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("case", ["yaml", "missing", "type", "kind", "traversal"])
def test_a_bad_export_is_refused_with_the_file_and_field(
    filled: tuple[Path, Path, dict[str, str]], tmp_path: Path, case: str
) -> None:
    _, out, ids = filled
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    knowledge = copy / "knowledge" / f"{ids['knowledge']}.md"
    expected = f"knowledge/{ids['knowledge']}.md: "
    if case == "yaml":
        _edit(knowledge, "confidence: 0.7\n", "confidence: : 0.7\n")
        expected += "front matter: expected valid YAML"
    elif case == "missing":
        _edit(knowledge, "category: work\n", "")
        expected += "category is missing"
    elif case == "type":
        _edit(knowledge, "recall_count: 0\n", "recall_count: many\n")
        expected += "recall_count: expected a whole number, got 'many'"
    elif case == "kind":
        _edit(knowledge, "kind: knowledge\n", "kind: rumour\n")
        expected += "kind: expected one of episode, knowledge, procedure, profile"
    else:
        (copy / "procedures" / "mem_a\\..\\..\\escape.md").write_bytes(knowledge.read_bytes())
        expected = "procedures/mem_a\\..\\..\\escape.md: file name"
    home = tmp_path / "fresh"
    done = run_kioku("--home", str(home), "import", "--layout", "files", str(copy))
    assert done.code == 2, done.err
    assert f"kioku: error: {expected}" in done.err
    assert _nothing_stored(home)


def test_export_refuses_a_directory_that_is_not_empty_unless_forced(
    filled: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    home, _, _ = filled
    target = tmp_path / "busy"
    target.mkdir()
    (target / "keep.txt").write_text("mine", encoding="utf-8")
    done = run_kioku("--home", str(home), "export", str(target))
    assert done.code == 2
    assert "is not empty" in done.err
    assert "--force" in done.err
    assert [p.name for p in target.iterdir()] == ["keep.txt"]
    forced = run_kioku("--home", str(home), "export", "--force", str(target))
    assert forced.code == 0, forced.err
    assert (target / "kioku.json").is_file()
    assert (target / "keep.txt").is_file()


def test_files_imports_are_whole_so_skip_invalid_is_refused(
    filled: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    _, out, _ = filled
    home = tmp_path / "fresh"
    done = run_kioku("--home", str(home), "import", "--layout", "files", "--skip-invalid", str(out))
    assert done.code == 2
    assert "--skip-invalid" in done.err
    assert _nothing_stored(home)


def test_the_jsonl_layout_still_reads_a_file_of_turns(tmp_path: Path) -> None:
    turns = tmp_path / "turns.jsonl"
    turns.write_text('{"user": "明日は晴れるといいな", "source_id": "t1"}\n', encoding="utf-8")
    home = tmp_path / "home"
    done = run_kioku("--home", str(home), "import", str(turns))
    assert done.code == 0, done.err
    assert done.out.startswith("imported 1")
    missing = run_kioku("--home", str(home), "import", str(tmp_path / "nowhere.jsonl"))
    assert missing.code == 2
    assert "No such file" in missing.err
