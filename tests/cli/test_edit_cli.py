"""``kioku edit`` run as a user runs it: only the fields given change, the old text is kept
as a version, search finds the new words, and bad input changes nothing."""

from __future__ import annotations

from tests.cli.conftest import Run


def _add(kioku: Run) -> str:
    added = kioku(
        "add",
        "--trigger",
        "dentist appointment",
        "--content",
        "the dentist is on Tuesday at nine",
        "--intensity",
        "40",
        "--category",
        "casual",
        "--json",
    )
    assert added.code == 0, added.err
    return str(added.json()["id"])


def test_edit_changes_only_what_is_given(kioku: Run) -> None:
    memory_id = _add(kioku)
    edited = kioku("edit", memory_id, "--content", "the dentist moved to Friday at ten", "--json")
    assert edited.code == 0, edited.err
    data = edited.json()
    assert data["content"] == "the dentist moved to Friday at ten"
    assert data["trigger"] == "dentist appointment"
    assert data["category"] == "casual"
    shown = kioku("show", memory_id)
    assert shown.code == 0, shown.err
    assert "moved to Friday" in shown.out
    assert "version 1" in shown.out  # the old text, kept
    found = kioku("search", "Friday", "--json")
    assert found.code == 0, found.err
    assert memory_id in found.out


def test_bad_edits_change_nothing(kioku: Run) -> None:
    memory_id = _add(kioku)
    before = kioku("show", memory_id, "--json").json()
    nothing = kioku("edit", memory_id)
    assert nothing.code == 2
    assert "at least one of" in nothing.err
    too_hot = kioku("edit", memory_id, "--intensity", "140")
    assert too_hot.code == 2
    assert "--intensity" in too_hot.err
    unknown = kioku("edit", memory_id, "--category", "nonsense-category")
    assert unknown.code == 2
    missing = kioku("edit", "mem_nothing_here", "--content", "x")
    assert missing.code == 1
    assert "no memory" in missing.err
    assert kioku("show", memory_id, "--json").json() == before
