"""``kioku import --from claude-md`` and ``--from markdown`` on memory files and notes."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from kioku import Kioku
from kioku.core.kinds import ProcedureDetails
from kioku.core.model import Memory
from kioku.ports.store import Order
from tests.importers.conftest import MTIME, Cli, copy_fixture


def _stored(home: Path) -> list[Memory]:
    with Kioku.open(home, env={}) as k:
        return k.list(archived=None, order=Order.CREATED_ASC)


def test_a_project_s_claude_md_files_become_knowledge_and_procedures(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    project = copy_fixture("claude/project", tmp_path)
    done = cli("import", "--from", "claude-md", str(project), "--json")
    assert done.code == 0, done.err
    report = done.json()
    assert (report["knowledge"], report["procedures"], report["ignored"]) == (7, 1, 1)
    memories = _stored(home)
    assert all(m.created == MTIME for m in memories)  # the files' modification time
    texts = {m.content: m for m in memories if m.kind.value == "knowledge"}
    tests_rule = "Use `uv run pytest -q` to run the tests; never `python -m unittest`."
    assert texts[tests_rule].trigger == "Project: tidepool › Build and test"
    assert "Nested detail: frozen ones for values." in next(
        t for t in texts if t.startswith("Prefer dataclasses")
    )
    sqlite_rule = next(t for t in texts if t.startswith("The database for tests"))
    assert sqlite_rule.endswith("```sh\nuv run pytest -q -k harbour\n```")  # its code block
    assert "My sandbox URL is http://localhost:8123." in texts  # CLAUDE.local.md
    assert "Every bug fix comes with a test that fails without the fix." in texts  # rules
    assert not any("@docs" in m.content for m in memories)  # imports are not followed
    (release,) = [m for m in memories if m.kind.value == "procedure"]
    assert release.trigger == "Project: tidepool › Release"
    assert isinstance(release.details, ProcedureDetails)
    assert release.details.description == "To release a new version:"
    assert release.details.steps == (
        "Bump the version in `pyproject.toml`.",
        "Run the full test suite.",
        "Tag the commit as `vX.Y.Z` and push the tag.",
    )
    again = cli("import", "--from", "claude-md", str(project), "--json")
    assert (again.json()["created"], again.json()["skipped"]) == (0, 8)


def test_an_auto_memory_directory_reads_the_index_and_its_topic_files(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    memory = copy_fixture("claude/memory", tmp_path)
    done = cli("import", "--from", "claude-md", str(memory), "--json")
    assert done.code == 0, done.err
    assert (done.json()["knowledge"], done.json()["procedures"]) == (5, 0)
    by_text = {m.content: m.trigger for m in _stored(home)}
    assert by_text["The CI runs on Python 3.12 only."] == "Memory › Build"
    assert by_text["The harbour feed returns times in UTC, not local time."] == (
        "Debugging tidepool"  # the topic file's front matter name
    )
    one = cli("import", "--from", "claude-md", str(memory / "MEMORY.md"), "--json")
    assert (one.json()["created"], one.json()["skipped"]) == (0, 3)


def test_notes_become_one_memory_each_or_one_per_top_level_section(
    cli: Cli, home: Path, tmp_path: Path
) -> None:
    notes = copy_fixture("notes", tmp_path)
    (notes / ".draft.md").write_text("# Hidden\n\nnot a note yet\n", encoding="utf-8")
    (notes / "linked.md").symlink_to(notes / "ramen.md")
    done = cli("import", "--from", "markdown", str(notes), "--json")
    assert done.code == 0, done.err
    assert (done.json()["knowledge"], done.json()["procedures"]) == (3, 1)
    memories = {m.trigger: m for m in _stored(home)}
    assert sorted(memories) == ["Monday", "Ramen places", "Restore the photo backup", "Tuesday"]
    ramen = memories["Ramen places"]
    assert ramen.content.startswith("Fuunji near Shinjuku station")
    assert ramen.created.date().isoformat() == "2024-03-09"  # front matter date
    assert {"food", "tokyo"} <= set(ramen.keywords)  # front matter tags
    assert memories["Tuesday"].created == datetime.fromisoformat("2024-05-20T09:30:00+09:00")
    assert "plumber" in memories["Tuesday"].content
    assert "plumber" not in memories["Monday"].content
    backup = memories["Restore the photo backup"]
    assert backup.created == MTIME  # no date: the file's modification time
    assert isinstance(backup.details, ProcedureDetails)
    assert len(backup.details.steps) == 3
    again = cli("import", "--from", "markdown", str(notes))
    assert again.out.startswith("imported 0 (0 episodes, 0 knowledge, 0 procedures), skipped 4")
