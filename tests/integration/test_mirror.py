"""The human-readable mirror (spec 001's tree): export, import, and both again, on real homes."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.activity import ActivityEvent, EventType, to_jsonl
from kioku.core.kinds import Preference, ProfileDetails, ProfileFact
from kioku.core.model import Kind, Level, Memory, Relation, RelationType, Valence
from kioku.ports.store import ActivityQuery, ActivityRow, MemoryFilter, Original
from kioku.service.mirror import (
    MirrorError,
    MirrorFileError,
    export_files,
    import_files,
    render_memory,
)
from kioku.service.mirror.parse import parse_memory

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 1, 18, 18, 0, tzinfo=TOKYO)
DAY1 = datetime(2026, 1, 10, 9, 30, tzinfo=TOKYO)
DAY2 = datetime(2026, 1, 11, 21, 5, tzinfo=TOKYO)


def _open(home: Path, **kwargs: object) -> Kioku:
    return Kioku.open(home, clock=FixedClock(NOW), env={}, **kwargs)  # type: ignore[arg-type]


def _episode(k: Kioku, trigger: str, content: str, **fields: object) -> Memory:
    return k.remember(trigger, content, intensity=60, category="work", **fields)  # type: ignore[arg-type]


def _fill(k: Kioku) -> dict[str, str]:
    """A store with every kind and shape of memory the layout must carry; the ids by role."""
    ids: dict[str, str] = {}
    first = _episode(
        k,
        "プロジェクトの締め切りが一週間延びた",
        "ほっとした。来週の金曜までに仕上げる。",
        valence="positive",
        tags=["relief", "joy"],
        keywords=["締め切り", "延長"],
        at=DAY1,
        session_id="sess-1",
        source_ids=["turn-1"],
        source_timestamps=[DAY1],
    )
    ids["first"] = first.id
    ids["protected"] = _episode(
        k, "母の誕生日", "毎年三月三日。花を贈る。", protected=True, at=DAY1 + timedelta(hours=1)
    ).id
    related = _episode(k, "Follow-up on the deadline", "Asked for the new plan.", at=DAY2)
    linked = replace(
        related,
        id="mem_20260111_210500_0000beef",
        relations=(Relation(first.id, RelationType.CONTINUES),),
        recall_count=3,
        recalled_since_last_batch=True,
        embedding=None,
    )
    k.store.add(linked)  # stored as it is: without a vector
    ids["related"] = linked.id
    odd = replace(
        related,
        id="mem_20260111_210600_0000cafe",
        created=DAY2 + timedelta(minutes=1),
        trigger="  a trigger with\na line break ",
        content="---\nnot: front matter\r\n---\n  indented\n\ntrailing line feed\n",
        relations=(Relation(ids["related"], RelationType.SAME_TOPIC),),
        embedding=None,
        keywords=("yes", "null", "1.0", "- item", "# hash", "key: value", " lead", "end ", "😀"),
        session_id="sess: 1 # not a comment",
        source_ids=("no", "0x1F", "~", "'quoted'", '"double"'),
    )
    ids["odd"] = k.remember(odd).id
    for level in (Level.SUMMARY, Level.TRACE, Level.ARCHIVED):
        base = replace(
            first,
            id=f"mem_20260110_0{level}0000_0000000{level}",
            created=DAY1 - timedelta(days=level),
            trigger=f"要約 {level}",
            content=f"圧縮された内容 レベル{level}",
            current_level=level,
            memory_days=12.25 * level,
            retention_score=41.5 / level,
            archived_at=NOW - timedelta(days=1) if level == Level.ARCHIVED else None,
            revival_requested=level == Level.ARCHIVED,
            revival_requested_at=NOW if level == Level.ARCHIVED else None,
            emotional_valence=Valence.NEGATIVE,
            embedding=None,
        )
        ids[f"level{level}"] = k.remember(base).id
    k.store.put_originals(
        [
            Original(ids["level4"], "元のトリガー", "元の内容、長い文章。\n二行目。"),
            Original(ids["odd"], "before: it was\n", "  tabs\there\r\nand\u2028more \n\n"),
        ],
        NOW,
    )
    old = k.write_memory("knowledge", "ステージングDBは db-stg-1", title="staging DB")
    new = k.write_memory("knowledge", "ステージングDBは db-stg-2", title="staging DB")
    k.supersede(old.id, new.id)
    ids["old_knowledge"], ids["new_knowledge"] = old.id, new.id
    proc = k.write_memory(
        "procedure",
        "",
        title="deploy",
        description="[deploy] release the web app",
        steps=["run the tests", "tag the release", "push the tag"],
        keywords=["deploy"],
    )
    for success in (True, True, False):
        k.report_procedure_outcome(proc.id, success)
    ids["procedure"] = proc.id
    profile = replace(
        first,
        id="mem_20260112_100000_000000aa",
        kind=Kind.PROFILE,
        created=NOW - timedelta(days=6),
        trigger="田中さん",
        content="住まい: 大阪\nlikes: ラーメン",
        details=ProfileDetails(
            person="田中さん",
            aliases=("Tanaka",),
            preferences=(
                Preference("food", "ラーメン", 1, count=3, sources=(first.id,), last_said=DAY2),
                Preference("weather", "雨", -1),
            ),
            facts=(ProfileFact("住まい", "大阪", (first.id,), 0.9, DAY1, DAY2),),
            mentions=(("assistant", 2), ("user", 5)),
        ),
        emotional_tags=(),
        keywords=(),
        embedding=None,
    )
    ids["profile"] = k.remember(profile).id
    lines = [
        to_jsonl(
            ActivityEvent(
                ts=DAY1,
                type=EventType.MESSAGE_RECEIVED,
                content="締め切りが延びたよ",
                from_="user",
                channel="chat",
                session_id="sess-1",
                memory_ids=(first.id,),
            )
        ),
        '{"ts":"2026-01-11T21:05:00+09:00","type":"response_sent","redacted":true}',
    ]
    k.store.append_activity(
        [
            ActivityRow(
                DAY1, "message_received", k.user_id, k.agent_id, lines[0], "sess-1", (first.id,)
            ),
            ActivityRow(DAY2, "response_sent", k.user_id, k.agent_id, lines[1]),
        ]
    )
    return ids


def _everything(k: Kioku) -> dict[str, Memory]:
    return {m.id: m for m in k.store.iter(MemoryFilter(archived=None))}


def _by_day(k: Kioku) -> list[tuple[str, str]]:
    return sorted(((a.day, a.line) for a in k.store.read_activity(ActivityQuery())), key=_day)


def _day(item: tuple[str, str]) -> str:
    return item[0]


def _files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != "kioku.json"
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str], Path]:
    """One filled home and its export, made once; tests work on copies of them."""
    root = tmp_path_factory.mktemp("mirror")
    with _open(root / "home") as k:
        ids = _fill(k)
        export_files(k, root / "out")
    return root / "home", ids, root / "out"


@pytest.fixture
def source(
    built: tuple[Path, dict[str, str], Path], tmp_path: Path
) -> Iterator[tuple[Kioku, dict[str, str]]]:
    shutil.copytree(built[0], tmp_path / "home")
    with _open(tmp_path / "home") as k:
        yield k, built[1]


@pytest.fixture
def exported(built: tuple[Path, dict[str, str], Path], tmp_path: Path) -> Path:
    shutil.copytree(built[2], tmp_path / "out")
    return tmp_path / "out"


def test_a_round_trip_is_lossless(source: tuple[Kioku, dict[str, str]], tmp_path: Path) -> None:
    k, ids = source
    report = export_files(k, tmp_path / "one")
    assert report.counts["episodes"] == 8
    assert report.counts["archived"] == 1
    with Kioku.open(tmp_path / "fresh", clock=FixedClock(NOW + timedelta(days=3)), env={}) as k2:
        result = import_files(k2, tmp_path / "one")
        assert result.memories == len(_everything(k)) == 12
        assert result.skipped_existing == 0
        assert result.without_vector == 0
        assert (result.originals, result.activity_lines) == (
            2,
            len(k.store.read_activity(ActivityQuery())),
        )
        export_files(k2, tmp_path / "two")
        before, after = _everything(k), _everything(k2)
        assert after == before  # every compared field, the vectors included
        assert {i: m.updated_at for i, m in after.items()} == {
            i: m.updated_at for i, m in before.items()
        }
        assert after[ids["first"]].embedding is not None
        assert after[ids["related"]].embedding is None
        kept = [ids["level4"], ids["odd"]]
        assert k2.store.originals(kept) == k.store.originals(kept)
        # Each day's lines in their order (the files keep no order between days).
        assert _by_day(k2) == _by_day(k)
    assert _files(tmp_path / "two") == _files(tmp_path / "one")
    one = (tmp_path / "one" / "kioku.json").read_text(encoding="utf-8")
    two = (tmp_path / "two" / "kioku.json").read_text(encoding="utf-8")
    assert one != two
    assert one.replace("2026-01-18T18:00", "X") == two.replace("2026-01-21T18:00", "X")


def test_the_tree_and_its_files_read_as_spec_001_says(
    source: tuple[Kioku, dict[str, str]], exported: Path
) -> None:
    _, ids = source
    names = set(_files(exported))
    assert f"episodes/2026-01-10/{ids['first']}.md" in names
    assert f"episodes/2026-01-06/{ids['level4']}.md" in names  # archived ones too
    assert f"knowledge/{ids['old_knowledge']}.md" in names
    assert f"procedures/{ids['procedure']}.md" in names
    assert f"users/{ids['profile']}.md" in names
    assert {"activity_log/2026-01-10.jsonl", "activity_log/2026-01-11.jsonl"} <= names
    knowledge = (exported / f"knowledge/{ids['old_knowledge']}.md").read_text(encoding="utf-8")
    assert knowledge.startswith("---\nid: ")
    assert f"superseded_by: {ids['new_knowledge']}\n" in knowledge
    assert "\ncreated_at: '2026-01-18T18:00:00+09:00'\n" in knowledge
    assert knowledge.endswith("---\n# staging DB\n\nステージングDBは db-stg-1\n")
    procedure = (exported / f"procedures/{ids['procedure']}.md").read_text(encoding="utf-8")
    assert "\nsuccess_count: 2\nfailure_count: 1\n" in procedure
    assert "steps:\n- run the tests\n- tag the release\n- push the tag\n" in procedure
    archived = (exported / f"episodes/2026-01-06/{ids['level4']}.md").read_text(encoding="utf-8")
    assert "original:\n  trigger: 元のトリガー\n" in archived
    assert "\ncurrent_level: 4\n" in archived
    assert "embedding_model: offline:" in archived
    assert "vector" not in archived
    profile = (exported / f"users/{ids['profile']}.md").read_text(encoding="utf-8")
    assert "mentions:\n  assistant: 2\n  user: 5\n" in profile
    line = (exported / "activity_log/2026-01-11.jsonl").read_text(encoding="utf-8")
    assert line == '{"ts":"2026-01-11T21:05:00+09:00","type":"response_sent","redacted":true}\n'


def test_files_and_directories_are_owner_only_and_no_temporary_file_is_left(
    exported: Path,
) -> None:
    for path in [exported, *exported.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path
        assert not path.name.startswith(".")


def test_a_trigger_the_heading_cannot_hold_is_kept_in_the_front_matter(
    source: tuple[Kioku, dict[str, str]],
) -> None:
    k, ids = source
    text = render_memory(k.get(ids["odd"])).decode()
    assert "\ntrigger: '  a trigger with\n" in text or '\ntrigger: "  a trigger with' in text
    assert "\n---\n# a trigger with a line break\n\n---\nnot: front matter\r\n" in text
    plain = render_memory(k.get(ids["first"])).decode()
    assert "\ntrigger:" not in plain
    assert "\n# プロジェクトの締め切りが一週間延びた\n\n" in plain


def test_importing_twice_skips_what_is_stored(
    source: tuple[Kioku, dict[str, str]], exported: Path
) -> None:
    k, _ = source
    before = len(k.store.read_activity(ActivityQuery()))
    report = import_files(k, exported)
    assert report.memories == 0
    assert report.skipped_existing == 12
    assert report.activity_lines == 0
    assert report.activity_skipped == before
    assert len(k.store.read_activity(ActivityQuery())) == before


def test_an_import_goes_to_the_callers_scope(exported: Path, tmp_path: Path) -> None:
    with _open(tmp_path / "other", user_id="hanako") as k:
        assert import_files(k, exported).memories == 12
        owners = {(m.user_id, m.agent_id) for m in k.store.iter(MemoryFilter(archived=None))}
        assert owners == {("hanako", "default")}
        rows = k.store.read_activity(ActivityQuery(user_id="hanako"))
        assert len(rows) == len(k.store.read_activity(ActivityQuery()))  # all in the scope


def test_vectors_of_another_model_are_not_guessed(exported: Path, tmp_path: Path) -> None:
    for path in exported.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("embedding_model: offline:", "embedding_model: other:"))
    with _open(tmp_path / "fresh") as k:
        report = import_files(k, exported)
        assert report.without_vector > 0
        assert report.embedded == 0
        assert all(m.embedding is None for m in _everything(k).values())


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _broken(exported: Path, ids: dict[str, str], case: str) -> str:
    """Break the export one way; the path of the file that should be named."""
    knowledge = f"knowledge/{ids['new_knowledge']}.md"
    procedure = f"procedures/{ids['procedure']}.md"
    if case == "yaml":
        _edit(exported / knowledge, "version: 2\n", "version: [2\n")
    elif case == "missing":
        _edit(exported / procedure, "success_count: 2\n", "")
    elif case == "type":
        _edit(exported / knowledge, "confidence: 0.7\n", "confidence: high\n")
    elif case == "kind":
        _edit(exported / knowledge, "kind: knowledge\n", "kind: memo\n")
    elif case == "id":
        _edit(exported / knowledge, f"id: {ids['new_knowledge']}", "id: ../../etc/passwd")
    elif case == "name":
        (exported / "knowledge" / "mem_x\\..\\..\\evil.md").write_text("x", encoding="utf-8")
        return "knowledge/mem_x\\..\\..\\evil.md"
    elif case == "day":
        day = exported / "episodes" / "2026-01-10"
        day.rename(exported / "episodes" / "2026-01-12")
        return f"episodes/2026-01-12/{ids['first']}.md"
    elif case == "relation":
        _edit(exported / f"episodes/2026-01-11/{ids['related']}.md", ids["first"], "mem_nowhere")
        return f"episodes/2026-01-11/{ids['related']}.md"
    elif case == "activity":
        _edit(exported / "activity_log/2026-01-11.jsonl", "2026-01-11T21:05", "2026-01-12T21:05")
        return "activity_log/2026-01-11.jsonl"
    return knowledge if case in ("yaml", "type", "kind", "id") else procedure


@pytest.mark.parametrize(
    ("case", "field"),
    [
        ("yaml", "front matter"),
        ("missing", "success_count"),
        ("type", "confidence"),
        ("kind", "kind"),
        ("id", "id"),
        ("name", "file name"),
        ("day", "created"),
        ("relation", "relations[0].id"),
        ("activity", "line 1: ts"),
    ],
)
def test_a_bad_file_is_named_and_nothing_is_written(
    source: tuple[Kioku, dict[str, str]], exported: Path, tmp_path: Path, case: str, field: str
) -> None:
    path = _broken(exported, source[1], case)
    with _open(tmp_path / "fresh") as k:
        with pytest.raises(MirrorFileError) as info:
            import_files(k, exported)
        assert (info.value.path, info.value.field) == (path, field)
        assert str(info.value).startswith(f"{path}: {field}")
        assert info.value.exit_code == 2
        assert k.count(archived=None) == 0
        assert k.store.read_activity(ActivityQuery()) == []


def test_links_in_the_export_are_not_followed(exported: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    target = next((exported / "knowledge").iterdir())
    outside.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(outside)
    with _open(tmp_path / "fresh") as k, pytest.raises(MirrorFileError) as info:
        import_files(k, exported)
    assert info.value.path == f"knowledge/{target.name}"


def test_an_export_refuses_a_directory_that_is_not_empty(
    source: tuple[Kioku, dict[str, str]], tmp_path: Path
) -> None:
    target = tmp_path / "busy"
    target.mkdir()
    (target / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(MirrorError) as info:
        export_files(source[0], target)
    assert info.value.exit_code == 2
    assert "not empty" in str(info.value)
    assert [p.name for p in target.iterdir()] == ["notes.txt"]


def test_force_refreshes_an_export_and_leaves_other_files(
    source: tuple[Kioku, dict[str, str]], exported: Path
) -> None:
    k, ids = source
    (exported / "notes.txt").write_text("mine", encoding="utf-8")
    k.forget(ids["procedure"])
    report = export_files(k, exported, force=True)
    assert report.removed == 1
    assert not (exported / "procedures" / f"{ids['procedure']}.md").exists()
    assert (exported / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_force_never_writes_through_a_link(
    source: tuple[Kioku, dict[str, str]], tmp_path: Path
) -> None:
    target, elsewhere = tmp_path / "t", tmp_path / "elsewhere"
    target.mkdir()
    elsewhere.mkdir()
    (target / "knowledge").symlink_to(elsewhere)
    with pytest.raises(MirrorError) as info:
        export_files(source[0], target, force=True)
    assert "symbolic link" in str(info.value)
    assert list(elsewhere.iterdir()) == []
    assert not (target / "kioku.json").exists()


def test_an_export_without_its_manifest_is_not_imported(exported: Path, tmp_path: Path) -> None:
    os.unlink(exported / "kioku.json")
    with _open(tmp_path / "fresh") as k, pytest.raises(MirrorError) as info:
        import_files(k, exported)
    assert "kioku.json" in str(info.value)


def test_a_newer_format_is_refused(exported: Path, tmp_path: Path) -> None:
    _edit(exported / "kioku.json", '"version": 1', '"version": 99')
    with _open(tmp_path / "fresh") as k, pytest.raises(MirrorFileError) as info:
        import_files(k, exported)
    assert (info.value.path, info.value.field) == ("kioku.json", "version")


def test_a_copy_that_lost_files_is_imported_with_a_warning(exported: Path, tmp_path: Path) -> None:
    shutil.rmtree(exported / "users")
    heard: list[str] = []
    with _open(tmp_path / "fresh", on_warning=heard.append) as k:
        assert import_files(k, exported).memories == 11
    assert any("1 users" in message for message in heard)


def test_an_id_that_cannot_be_a_file_name_stops_the_export_before_any_write(
    source: tuple[Kioku, dict[str, str]], tmp_path: Path
) -> None:
    k, ids = source
    k.store.add(replace(k.get(ids["first"]), id="../../escape", relations=()))
    with pytest.raises(MirrorError) as info:
        export_files(k, tmp_path / "out")
    assert "'../../escape'" in str(info.value)
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escape.md").exists()


_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_PIECES = st.sampled_from(
    [*"\n\r\t \x85\u2028\u2029\ufeff\x0b#:-'\"!&*?|>%@`,[]{}~\\", "---", "yes", "null", "1e5"]
)
_TEXT = (
    st.lists(st.one_of(st.text(_CHARS, max_size=4), _PIECES), min_size=1, max_size=10)
    .map("".join)
    .filter(str.strip)
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trigger=_TEXT, content=_TEXT, keywords=st.lists(_TEXT, max_size=3), kept=_TEXT)
def test_any_text_reads_back_exactly(
    trigger: str, content: str, keywords: list[str], kept: str
) -> None:
    memory = Memory(
        id="mem_20260115_143000_00000001",
        created=DAY1,
        trigger=trigger,
        content=content,
        emotional_intensity=40,
        emotional_valence=Valence.NEUTRAL,
        emotional_arousal=40,
        category="work",
        decay_coefficient=0.9,
        keywords=tuple(keywords),
    )
    original = Original(memory.id, kept, content + kept)
    raw = render_memory(memory, original)
    parsed = parse_memory(raw, f"episodes/2026-01-10/{memory.id}.md", Kind.EPISODE, ["work"])
    assert parsed.memory == memory
    assert parsed.original == original
    assert render_memory(parsed.memory, parsed.original) == raw


def test_the_protection_cap_holds_for_imports_too(exported: Path, tmp_path: Path) -> None:
    env = {"KIOKU_PROTECTION__MAX_PROTECTED_MEMORIES": "0"}
    with Kioku.open(tmp_path / "capped", clock=FixedClock(NOW), env=env) as k:
        with pytest.raises(MirrorError) as info:
            import_files(k, exported)
        assert "max_protected_memories (0)" in str(info.value)
        assert k.count(archived=None) == 0


def test_an_erased_memory_does_not_come_back_with_an_old_export(
    source: tuple[Kioku, dict[str, str]], exported: Path
) -> None:
    k, ids = source
    k.erase(ids["first"])
    report = import_files(k, exported)
    assert report.skipped_erased == 1
    assert report.memories == 0
    assert k.store.get(ids["first"]) is None
    lines = [a.line for a in k.store.read_activity(ActivityQuery())]
    assert not any("締め切りが延びたよ" in line for line in lines)
