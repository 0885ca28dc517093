"""The commands of memory kinds and deliberate search, run as a user runs them:
`kioku write`, `kioku outcome`, `kioku list --kind`, `kioku show`, `kioku search` (with
`--queries`), and `kioku protect` / `kioku forget` on a knowledge item.

Homes are stocked through the Python API; only the commands under test run as `kioku`
processes. Commands that do not depend on each other are started together, so the file runs
in the time of a few process starts rather than of every one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from kioku import Kioku
from kioku.core.kinds import Preference, ProcedureDetails, ProfileDetails, ProfileFact
from kioku.core.model import Kind, Memory, Valence
from tests.cli.conftest import Result, clean_env

KNOWLEDGE_LIFECYCLE = "knowledge does not fade with spec 000's retention"
PROCEDURE_LIFECYCLE = "confidence = successes / max(1, successes + failures)"
PROFILE_LIFECYCLE = "a profile is primed when its person is the sender"
KINDS = ("episode", "knowledge", "procedure", "profile")


def run_all(home: Path, *commands: tuple[str, ...]) -> list[Result]:
    """Run ``kioku --home HOME ARGS`` for each command at the same time; results in order."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "kioku", "--home", str(home), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=clean_env(),
        )
        for args in commands
    ]
    results = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        results.append(Result(process.returncode, out, err))
    return results


def run(home: Path, *args: str) -> Result:
    (result,) = run_all(home, args)
    return result


def _ok(result: Result) -> Result:
    assert result.code == 0, result
    return result


def _profile(k: Kioku) -> Memory:
    return k.remember(
        Memory(
            id="",
            created=k.clock.now(),
            trigger="Gondola Gianni",
            content="residence: Venice\nlikes: espresso",
            emotional_intensity=50,
            emotional_valence=Valence.NEUTRAL,
            emotional_arousal=50,
            category="work",
            decay_coefficient=0.999,
            kind=Kind.PROFILE,
            details=ProfileDetails(
                person="Gondola Gianni",
                preferences=(Preference(topic="drink", value="espresso", polarity=1),),
                facts=(ProfileFact(key="residence", value="Venice", sources=("mem_x",)),),
                mentions=(("alice", 1),),
            ),
        )
    )


@dataclass
class Stocked:
    """A home with one memory of each kind that speaks of gondolas (only read by the tests)."""

    home: Path
    ids: dict[str, str]


@pytest.fixture(scope="module")
def stocked(tmp_path_factory: pytest.TempPathFactory) -> Stocked:
    home = tmp_path_factory.mktemp("kinds") / "home"
    with Kioku.open(home, env={}) as k:
        ids = {
            "episode": k.remember(
                "We rode the gondola", "the view was great", intensity=60, category="work"
            ).id,
            "knowledge": k.write_memory(
                "knowledge", "Gondola lifts close in strong wind", title="wind rule"
            ).id,
            "procedure": k.write_memory(
                "procedure",
                "",
                title="book",
                description="book a gondola ride",
                steps=["call the office", "pay at the gate"],
            ).id,
            "profile": _profile(k).id,
        }
    return Stocked(home, ids)


# -- writing, outcomes, protecting and forgetting (one home, in order) ------------------------


def test_write_outcome_protect_and_forget(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Kioku.open(home, env={}) as k:
        assert k.count() == 0  # an empty store, as `kioku init` makes it

    knowledge_run, procedure_run, plain_run = run_all(
        home,
        (
            "write", "knowledge", "The zanzibarquux door code is 4321", "--title", "door code",
            "--confidence", "0.9", "--source", "mem_20260101_000000_aaaaaaaa", "--json",
        ),
        (
            "write", "procedure", "--title", "deploy", "--description", "[deploy] release it",
            "--step", "run the tests", "--step", "tag the release", "--json",
        ),
        ("write", "knowledge", "Backups run at 02:00"),
    )  # fmt: skip
    knowledge = _ok(knowledge_run).json()
    assert knowledge["kind"] == "knowledge"
    assert (knowledge["trigger"], knowledge["content"]) == (
        "door code",
        "The zanzibarquux door code is 4321",
    )
    assert knowledge["details"]["confidence"] == 0.9
    assert knowledge["details"]["source_episodes"] == ["mem_20260101_000000_aaaaaaaa"]
    assert knowledge["details"]["version"] == 1
    assert knowledge["details"]["valid_from"] == knowledge["created"]
    procedure = _ok(procedure_run).json()
    memory_id = procedure["id"]
    assert procedure["kind"] == "procedure"
    assert procedure["details"]["steps"] == ["run the tests", "tag the release"]
    assert procedure["details"]["description"] == "[deploy] release it"
    assert procedure["details"]["confidence"] == 0.5
    assert procedure["content"] == "[deploy] release it\n1. run the tests\n2. tag the release"
    plain = _ok(plain_run).out.splitlines()
    assert len(plain) == 1  # without --json: only the id
    assert plain[0].startswith("mem_")

    first, wrong, protected = run_all(
        home,
        ("outcome", memory_id, "success"),
        ("outcome", knowledge["id"], "success"),
        ("protect", knowledge["id"]),
    )
    assert _ok(first).out.strip() == f"{memory_id}: confidence 1.00 (1 success, 0 failure)"
    assert wrong.code == 2, wrong
    assert "procedure" in wrong.err
    assert "knowledge" in wrong.err
    assert _ok(protected).out.strip() == f"protected {knowledge['id']}"

    second_run, kept, before = run_all(
        home,
        ("outcome", memory_id, "failure", "--json"),
        ("forget", knowledge["id"]),
        ("search", "zanzibarquux", "--json"),
    )
    second = _ok(second_run).json()["details"]
    assert (second["success_count"], second["failure_count"]) == (1, 1)
    assert second["confidence"] == 0.5
    assert kept.code == 1, kept
    assert "protected" in kept.err
    assert "--force" in kept.err

    forgot = _ok(run(home, "forget", knowledge["id"], "--force", "--json")).json()
    assert forgot["forgotten"] == knowledge["id"]
    [found] = [r for r in _ok(before).json()["results"] if r["matched_in"]]
    assert found["id"] == knowledge["id"]
    after = _ok(run(home, "search", "zanzibarquux", "--json")).json()["results"]
    assert knowledge["id"] not in [r["id"] for r in after]
    assert [r for r in after if r["matched_in"]] == []

    with Kioku.open(home, env={}) as k:
        left = {m.id: m for m in k.list()}
        assert left.keys() == {memory_id, plain[0]}
        details = left[memory_id].details
        assert isinstance(details, ProcedureDetails)
        assert (details.success_count, details.failure_count) == (1, 1)


# -- list and show --------------------------------------------------------------------------------


def test_list_by_kind(stocked: Stocked) -> None:
    knowledge, profile, episode, procedure = run_all(
        stocked.home,
        ("list", "--kind", "knowledge", "--json"),
        ("list", "--kind", "profile", "--json"),
        ("list", "--kind", "episode", "--json"),
        ("list", "--kind", "procedure"),
    )
    for kind, result in (("knowledge", knowledge), ("profile", profile), ("episode", episode)):
        listed = _ok(result).json()
        assert [m["id"] for m in listed] == [stocked.ids[kind]], kind
        assert [m["kind"] for m in listed] == [kind]
    assert stocked.ids["procedure"] in _ok(procedure).out
    assert not any(stocked.ids[k] in procedure.out for k in KINDS if k != "procedure")


def test_a_list_of_several_kinds_names_each_ones_kind(stocked: Stocked) -> None:
    """Without --kind, every kind is listed, and a KIND column tells them apart; a list of
    episodes only keeps the plain columns."""
    mixed, episodes = run_all(stocked.home, ("list",), ("list", "--kind", "episode"))
    header, *rows = _ok(mixed).out.splitlines()
    assert header.split()[:3] == ["ID", "KIND", "CREATED"]
    kinds = {row.split()[0]: row.split()[1] for row in rows}
    assert kinds == {stocked.ids[kind]: kind for kind in KINDS}
    # Retention's fields (category, intensity, score) are an episode's only.
    shown = {row.split()[0]: row.split()[5:8] for row in rows}
    assert shown[stocked.ids["episode"]] != ["-", "-", "-"]
    assert all(shown[stocked.ids[k]] == ["-", "-", "-"] for k in KINDS if k != "episode")
    assert _ok(episodes).out.splitlines()[0].split()[:2] == ["ID", "CREATED"]


def test_show_gives_each_kind_its_details_and_lifecycle(stocked: Stocked) -> None:
    ids = stocked.ids
    knowledge, procedure, profile, episode = (
        _ok(r)
        for r in run_all(
            stocked.home,
            ("show", ids["knowledge"]),
            ("show", ids["procedure"]),
            ("show", ids["profile"], "--json"),
            ("show", ids["episode"], "--json"),
        )
    )
    assert ids["knowledge"] in knowledge.out
    assert KNOWLEDGE_LIFECYCLE in knowledge.out
    rows = [line.split() for line in knowledge.out.splitlines()]
    assert ["confidence", "0.7"] in rows
    assert ["version", "1"] in rows
    assert ["superseded_by", "-"] in rows

    assert PROCEDURE_LIFECYCLE in procedure.out
    assert '["call the office", "pay at the gate"]' in procedure.out
    assert "book a gondola ride" in procedure.out

    data = profile.json()
    assert data["kind"] == "profile"
    assert data["details"]["person"] == "Gondola Gianni"
    assert data["details"]["facts"][0]["value"] == "Venice"
    assert data["details"]["mentions"] == {"alice": 1}
    assert data["explanation"]["lifecycle"].startswith(PROFILE_LIFECYCLE)
    assert data["explanation"]["facts"]["preferences"] == ["likes espresso ×1"]

    data = episode.json()
    assert data["kind"] == "episode"
    assert data["details"] is None
    assert "original" not in data  # nothing was compressed
    assert data["retention"]["level"] == 1
    assert "explanation" not in data


# -- search -------------------------------------------------------------------------------------


def test_search(stocked: Stocked) -> None:
    now = datetime.now().astimezone()
    day = timedelta(days=1)
    everything, table, window, future = run_all(
        stocked.home,
        ("search", "gondola", "--json"),
        ("search", "gondola"),
        (
            "search", "gondola", "--kind", "procedure", "--kind", "profile",
            "--since", (now - day).isoformat(timespec="seconds"), "--until",
            (now + day).isoformat(), "--top-k", "1", "--json",
        ),
        ("search", "gondola", "--since", (now + day).isoformat()),
    )  # fmt: skip
    data = _ok(everything).json()
    assert data["query"] == "gondola"
    assert data["kinds"] == list(KINDS)
    assert data["include_archive"] is True
    results = {r["id"]: r for r in data["results"]}
    assert results.keys() == set(stocked.ids.values())
    for kind, memory_id in stocked.ids.items():
        assert results[memory_id]["kind"] == kind
        assert results[memory_id]["matched_in"] == ["text"]
        assert results[memory_id]["memory"]["id"] == memory_id
        assert results[memory_id]["superseded"] is False
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)

    header, *rows = _ok(table).out.splitlines()
    assert header.split() == ["ID", "KIND", "SCORE", "MATCHED", "TRIGGER", "CONTENT"]
    assert [row.split()[0] for row in rows] == [r["id"] for r in data["results"]]

    picked = _ok(window).json()
    assert picked["kinds"] == ["procedure", "profile"]
    best = next(r["id"] for r in data["results"] if r["kind"] in ("procedure", "profile"))
    assert [r["id"] for r in picked["results"]] == [best]

    assert _ok(future).out == ""
    assert "nothing found" in future.err


def test_search_queries_file_answers_each_line(stocked: Stocked, tmp_path: Path) -> None:
    lines = [
        json.dumps({"query": "gondola", "kinds": ["procedure"], "id": "q1"}),
        "",
        json.dumps({"query": "gondola", "kind": "profile", "top_k": 1}),
        json.dumps({"query": "gondola", "until": "2000-01-01T00:00:00+09:00"}),
        "not json",
        json.dumps({"query": "gondola", "top_k": 0, "id": "zero"}),
        json.dumps({"q": "gondola"}),
        json.dumps({"query": "gondola", "kinds": ["memo"]}),
        json.dumps({"query": "gondola", "since": "yesterday"}),
        json.dumps({"query": "   "}),
        json.dumps({"query": "gondola", "include_archive": "yes"}),
    ]
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run(stocked.home, "search", "--queries", str(queries))
    assert done.code == 1, done
    answers = [json.loads(line) for line in done.out.splitlines()]
    assert [a["line"] for a in answers] == [1, *range(3, 12)]
    good = answers[:3]
    assert all("error" not in a for a in good)
    assert good[0]["id"] == "q1"
    assert good[0]["kinds"] == ["procedure"]
    assert [r["id"] for r in good[0]["results"]] == [stocked.ids["procedure"]]
    assert [r["id"] for r in good[1]["results"]] == [stocked.ids["profile"]]
    assert good[2]["results"] == []
    assert all("memory" not in r for a in good for r in a["results"])

    errors = {a["line"]: a["error"] for a in answers[3:]}
    assert errors.keys() == set(range(5, 12))
    assert "not JSON" in errors[5]
    assert "top_k" in errors[6]
    assert answers[4]["id"] == "zero"
    assert '"query"' in errors[7]
    assert "kind" in errors[8]
    assert "yesterday" in errors[9]
    assert "query" in errors[10]
    assert "include_archive" in errors[11]
    assert "7 line(s) could not be answered" in done.err


# -- bad input ------------------------------------------------------------------------------------


BAD_INPUT: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
    (("search", "gondola", "--kind", "memo"), ("--kind", "memo")),
    (("search", "gondola", "--since", "yesterday"), ("--since", "yesterday")),
    (("search", "gondola", "--top-k", "0"), ("--top-k", "0")),
    (("write", "procedure", "--title", "a name", "--step", "a step"), ("description",)),
    (("search",), ("QUERY", "--queries")),
]


def test_bad_input_exits_2_with_a_clear_message(stocked: Stocked) -> None:
    results = run_all(stocked.home, *(args for args, _ in BAD_INPUT))
    for (args, needles), result in zip(BAD_INPUT, results, strict=True):
        assert result.code == 2, (args, result)
        assert result.out == "", args
        assert all(needle in result.err for needle in needles), (args, result.err)
        assert "Traceback" not in result.err, args
    with Kioku.open(stocked.home, env={}) as k:
        assert {m.id for m in k.list(archived=None)} == set(stocked.ids.values())
