"""The memory commands as a new user runs them: add, list, show, protect, unprotect, forget."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Run, clean_env

ADD = ("add", "--trigger", "t", "--content", "c", "--category", "work")


def test_add_then_show_gives_the_spec_values(kioku: Run) -> None:
    added = kioku(*ADD, "--intensity", "50", "--json")
    assert added.code == 0, added.err
    memory_id = added.json()["id"]
    shown = kioku("show", memory_id, "--json")
    assert shown.code == 0, shown.err
    data = shown.json()
    assert data["decay_coefficient"] == pytest.approx(0.885)
    assert data["retention_score"] == 50
    assert data["current_level"] == 1
    assert data["retention"]["days_until_next_level"] == 1
    assert data["created"].endswith("+09:00")  # ISO 8601 with the local offset


def test_add_prints_only_the_id_without_json(kioku: Run) -> None:
    added = kioku(*ADD, "--intensity", "30")
    assert added.code == 0
    assert added.out.strip().startswith("mem_")
    assert kioku("show", added.out.strip()).code == 0


def test_out_of_range_intensity_names_the_field_and_writes_nothing(kioku: Run) -> None:
    kioku(*ADD, "--intensity", "40")
    bad = kioku(*ADD, "--intensity", "150")
    assert bad.code == 2
    assert "emotional_intensity" in bad.err
    assert "0 to 100" in bad.err
    assert "--intensity" in bad.err
    assert len(bad.err.strip().splitlines()) == 1
    assert kioku("stats", "--json").json()["total"] == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--intensity", "40", "--category", "gossip"), "category"),
        (("--intensity", "40", "--category", "work", "--tags", "joy,bliss"), "emotional_tags"),
        (("--intensity", "40", "--category", "work", "--valence", "happy"), "emotional_valence"),
        (("--intensity", "40", "--category", "work", "--arousal", "-3"), "emotional_arousal"),
        (("--intensity", "40", "--category", "work", "--at", "yesterday"), "--at"),
        (("--intensity", "forty", "--category", "work"), "--intensity"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    kioku: Run, home: Path, args: tuple[str, ...], needle: str
) -> None:
    result = kioku("add", "--trigger", "t", "--content", "c", *args)
    assert result.code == 2, result
    assert needle in result.err
    assert not (home / "memories.db").exists()


def test_unknown_id_is_a_runtime_error(kioku: Run) -> None:
    assert kioku("init").code == 0
    for command in ("show", "protect", "unprotect", "forget"):
        result = kioku(command, "mem_20990101_000000_deadbeef")
        assert result.code == 1, command
        assert "no memory with id" in result.err
        assert "kioku list" in result.err


def test_list_filters(kioku: Run) -> None:
    kioku("add", "--trigger", "w", "--content", "c", "--intensity", "40", "--category", "work")
    kioku(
        "add", "--trigger", "e", "--content", "c", "--intensity", "80",
        "--category", "emotional", "--protected",
    )  # fmt: skip
    everything = kioku("list", "--json").json()
    assert [m["trigger"] for m in everything] == ["e", "w"]
    assert [m["trigger"] for m in kioku("list", "--category", "work", "--json").json()] == ["w"]
    assert [m["trigger"] for m in kioku("list", "--protected", "--json").json()] == ["e"]
    assert [m["trigger"] for m in kioku("list", "--unprotected", "--json").json()] == ["w"]
    assert kioku("list", "--level", "2", "--json").json() == []
    assert kioku("list", "--archived", "--json").json() == []
    assert len(kioku("list", "--limit", "1", "--json").json()) == 1
    text = kioku("list")
    assert "TRIGGER" in text.out
    assert "emotional" in text.out


def test_protect_unprotect_forget_round_trip(kioku: Run) -> None:
    memory_id = kioku(*ADD, "--intensity", "60", "--json").json()["id"]
    assert kioku("protect", memory_id, "--json").json()["protected"] is True
    refused = kioku("forget", memory_id)
    assert refused.code == 1
    assert "unprotect" in refused.err
    assert kioku("unprotect", memory_id, "--json").json()["protected"] is False
    assert kioku("forget", memory_id).code == 0
    assert kioku("show", memory_id).code == 1


def test_protection_cap_lists_the_oldest(kioku: Run) -> None:
    env = clean_env(KIOKU_PROTECTION__MAX_PROTECTED_MEMORIES="2")
    ids = [
        kioku(*ADD, "--intensity", "60", "--protected", "--json", env=env).json()["id"]
        for _ in range(2)
    ]
    extra = kioku(*ADD, "--intensity", "60", "--json", env=env).json()["id"]
    refused = kioku("protect", extra, env=env)
    assert refused.code == 1
    assert "limit (2)" in refused.err
    assert ids[0] in refused.err
    assert ids[1] in refused.err


def test_show_text_explains_retention(kioku: Run) -> None:
    memory_id = kioku(*ADD, "--intensity", "50", "--json").json()["id"]
    text = kioku("show", memory_id).out
    assert "retention" in text
    assert "→ L2 summary" in text
    assert "→ L4 archived" in text
    assert "decay_coefficient" in text
