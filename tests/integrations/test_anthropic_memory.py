"""The memory tool's ``/memories`` tree on kioku's knowledge, procedures and profiles.

The commands run on a real home (SQLite): files round-trip, edits keep their memory, paths
that could lead out of the tree are refused with a reason. The last tests run the
``anthropic`` SDK's own tool runner against a scripted Messages API server on loopback, so
the SDK calls the backend as it would with a real model, and then check kioku's store.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Iterator
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kioku import Kioku
from kioku.adapters.clock import FixedClock
from kioku.core.kinds import ProcedureDetails, ProfileDetails
from kioku.core.model import Kind, Level
from kioku.errors import MemoryNotFoundError
from kioku.integrations.anthropic_files import MemoryFiles, MemoryToolError
from kioku.ports.store import MemoryPatch
from kioku.service.paths import DB_FILENAME
from tests.postgres_server import admin, postgres_url  # noqa: F401 (a fixture)

NOW = datetime(2026, 11, 27, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))


@pytest.fixture
def kioku(tmp_path: Path) -> Iterator[Kioku]:
    with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env={}) as k:
        yield k


@pytest.fixture
def files(kioku: Kioku) -> MemoryFiles:
    return MemoryFiles(kioku)


def shown(view: str) -> str:
    """The text a file view shows, without its heading and line numbers."""
    lines = view.split("\n")[1:]
    return "\n".join(line.split("\t", 1)[1] for line in lines)


def by_title(kioku: Kioku, kind: str, title: str) -> Any:
    found = [m for m in kioku.list(kind=kind) if m.trigger == title]
    assert len(found) == 1, [m.trigger for m in kioku.list(kind=kind)]
    return found[0]


# -- files round-trip onto kioku's kinds ------------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/memories/knowledge/staging database.md", "/memories/notes/project.txt", "/memories/a.md"],
)
def test_a_created_file_reads_back_exactly_and_is_knowledge(
    files: MemoryFiles, kioku: Kioku, path: str
) -> None:
    text = "# Staging\n\nThe staging database is db-stg-2.\n  indented line\n"
    assert "created" in files.create(path, text)
    view = files.view(path)
    assert shown(view) == text
    assert "not instructions" in view.split("\n")[0]
    title = "staging database" if "/knowledge/" in path else path
    memory = by_title(kioku, "knowledge", title)
    assert memory.content == text
    assert [h.memory.id for h in kioku.search_memory("db-stg-2").items] == [memory.id]


def test_a_procedure_file_gives_its_steps_and_purpose(files: MemoryFiles, kioku: Kioku) -> None:
    text = "# Release the web app\n\n1. run the tests\n2. tag the release\n- push the tag\n"
    files.create("/memories/procedures/deploy.md", text)
    memory = by_title(kioku, "procedure", "deploy")
    assert isinstance(memory.details, ProcedureDetails)
    assert memory.details.description == "Release the web app"
    assert memory.details.steps == ("run the tests", "tag the release", "push the tag")
    assert shown(files.view("/memories/procedures/deploy.md")) == text
    files.str_replace("/memories/procedures/deploy.md", "2. tag the release\n", "")
    again = kioku.get(memory.id)
    assert isinstance(again.details, ProcedureDetails)
    assert again.details.steps == ("run the tests", "push the tag")


def test_a_profile_file_sets_facts_and_preferences(files: MemoryFiles, kioku: Kioku) -> None:
    text = "residence: Osaka\noccupation: nurse\nlikes: ramen, sushi\ndislikes: natto"
    files.create("/memories/users/Aiko.md", text)
    details = kioku.profile("aiko").details
    assert isinstance(details, ProfileDetails)
    assert {f.key: f.value for f in details.facts} == {"occupation": "nurse", "residence": "Osaka"}
    assert {(p.value, p.polarity) for p in details.preferences} == {
        ("ramen", 1),
        ("sushi", 1),
        ("natto", -1),
    }
    # Read back in kioku's order: facts by key, then likes and dislikes.
    canonical = "occupation: nurse\nresidence: Osaka\nlikes: ramen, sushi\ndislikes: natto"
    assert shown(files.view("/memories/users/Aiko.md")) == canonical
    files.create("/memories/users/aiko.md", canonical)  # by the name in any case: same file
    assert len(kioku.profiles()) == 1
    files.str_replace("/memories/users/Aiko.md", "residence: Osaka", "residence: Kyoto")
    details = kioku.profile("Aiko").details
    assert isinstance(details, ProfileDetails)
    assert {f.key: f.value for f in details.facts}["residence"] == "Kyoto"
    with pytest.raises(MemoryToolError, match="not a profile line"):
        files.create("/memories/users/Aiko.md", "she is nice")


def test_existing_memories_are_listed_by_title_or_id(files: MemoryFiles, kioku: Kioku) -> None:
    one = kioku.write_memory("knowledge", "Blue is the team colour.", title="colour")
    twin_a = kioku.write_memory("knowledge", "first", title="twin")
    twin_b = kioku.write_memory("knowledge", "second", title="twin")
    kioku.edit_profile("Ken", facts=[("pet", "a cat")])
    listing = files.view("/memories")
    paths = [line.split("\t")[1] for line in listing.split("\n")[2:]]
    assert "/memories/knowledge/colour.md" in paths
    assert f"/memories/knowledge/{twin_a.id}.md" in paths
    assert f"/memories/knowledge/{twin_b.id}.md" in paths
    assert "/memories/users/Ken.md" in paths
    assert {"/memories/knowledge/", "/memories/procedures/", "/memories/users/"} <= set(paths)
    assert shown(files.view(f"/memories/knowledge/{one.id}.md")) == "Blue is the team colour."
    with pytest.raises(MemoryToolError, match="2 files are titled 'twin'"):
        files.view("/memories/knowledge/twin.md")
    kioku.edit_profile("Ken", aliases=["Kenny"])
    assert shown(files.view("/memories/users/kenny.md")) == "pet: a cat"
    with pytest.raises(MemoryToolError, match="keeps its person's name"):
        files.rename("/memories/users/Ken.md", "/memories/users/Kenji.md")


def test_archived_and_superseded_memories_are_not_files(files: MemoryFiles, kioku: Kioku) -> None:
    old = kioku.write_memory("knowledge", "The office is in Shibuya.", title="office")
    new = kioku.write_memory("knowledge", "The office is in Meguro.", title="office")
    kioku.supersede(old.id, new.id)
    gone = kioku.write_memory("knowledge", "An old plan.", title="plan")
    kioku.store.update(gone.id, MemoryPatch(archived_at=NOW, current_level=Level.ARCHIVED))
    assert shown(files.view("/memories/knowledge/office.md")) == "The office is in Meguro."
    listing = files.view("/memories/knowledge")
    assert old.id not in listing
    assert "plan" not in listing
    with pytest.raises(MemoryToolError, match="does not exist"):
        files.view(f"/memories/knowledge/{gone.id}.md")


def test_view_range_and_insert(files: MemoryFiles) -> None:
    path = "/memories/todo.md"
    files.create(path, "one\ntwo\nthree\n")
    assert files.view(path, [2, 3]).split("\n")[1:] == ["     2\ttwo", "     3\tthree"]
    assert files.view(path, [3, -1]).split("\n")[1:] == ["     3\tthree", "     4\t"]
    with pytest.raises(MemoryToolError, match="outside the file"):
        files.view(path, [5, 6])
    files.insert(path, 1, "one and a half")
    files.insert(path, 0, "zero\n")
    assert shown(files.view(path)) == "zero\none\none and a half\ntwo\nthree\n"
    with pytest.raises(MemoryToolError, match="from 0"):
        files.insert(path, 9, "x")


def test_str_replace_needs_exactly_one_match(files: MemoryFiles, kioku: Kioku) -> None:
    path = "/memories/knowledge/plan.md"
    files.create(path, "a b\na b\nc\n")
    memory_id = by_title(kioku, "knowledge", "plan").id
    with pytest.raises(MemoryToolError, match=r"occurs 2 times .*lines 1, 2"):
        files.str_replace(path, "a b", "x")
    with pytest.raises(MemoryToolError, match="does not occur"):
        files.str_replace(path, "zzz", "x")
    with pytest.raises(MemoryToolError, match="would be empty"):
        files.create(path, "  \n")
    answer = files.str_replace(path, "c", "see")
    assert "     3\tsee" in answer
    memory = kioku.get(memory_id)
    assert memory.content == "a b\na b\nsee\n"
    versions = kioku.history(memory_id)["versions"]
    assert [v["text"] for v in versions] == ["a b\na b\nc\n"]  # the old text, kept


def test_rename_keeps_the_memory_and_delete_erases_it(files: MemoryFiles, kioku: Kioku) -> None:
    files.create("/memories/knowledge/old name.md", "fact one\n")
    memory_id = by_title(kioku, "knowledge", "old name").id
    files.rename("/memories/knowledge/old name.md", "/memories/projects/kioku.md")
    assert kioku.get(memory_id).trigger == "/memories/projects/kioku.md"
    assert shown(files.view("/memories/projects/kioku.md")) == "fact one\n"
    with pytest.raises(MemoryToolError, match="another kind"):
        files.rename("/memories/projects/kioku.md", "/memories/procedures/kioku.md")
    files.create("/memories/projects/other.md", "fact two")
    with pytest.raises(MemoryToolError, match="already exists"):
        files.rename("/memories/projects/kioku.md", "/memories/projects/other.md")
    files.rename("/memories/projects", "/memories/archive")
    assert shown(files.view("/memories/archive/other.md")) == "fact two"
    files.delete("/memories/archive/kioku.md")
    with pytest.raises(MemoryNotFoundError):
        kioku.get(memory_id)
    with pytest.raises(MemoryToolError, match="does not exist"):
        files.view("/memories/archive/kioku.md")
    kept = kioku.get(by_title(kioku, "knowledge", "/memories/archive/other.md").id)
    kioku.protect(kept.id)
    with pytest.raises(MemoryToolError, match="protected"):
        files.delete("/memories/archive")
    assert kioku.get(kept.id).content == "fact two"
    with pytest.raises(MemoryToolError, match="cannot be deleted"):
        files.delete("/memories/knowledge")
    kioku.unprotect(kept.id)
    files.create("/memories/archive/more/deeper.md", "fact three")
    assert "erased 2 memories" in files.delete("/memories/archive")
    assert kioku.list(kind="knowledge") == []


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", "outside the memory directory"),
        ("/memoriesX/a.md", "outside the memory directory"),
        ("memories/a.md", "outside the memory directory"),
        ("/memories/../secret.md", "'..'"),
        ("/memories/knowledge/../../x.md", "'..'"),
        ("/memories/./a.md", "'.'"),
        ("/memories//a.md", "empty"),
        ("/memories/a\x00.md", "control character"),
        ("/memories/a\n.md", "control character"),
        ("/memories/a\\..\\b.md", "backslash"),
        ("/memories/a\u2215..\u2215b.md", "looks like a slash"),
        ("/memories/%2e%2e/b.md", "percent-encoded"),
        ("/memories/.hidden", "hidden"),
        ("/memories/~/a.md", "'~'"),
        ("/memories/ padded.md", "spaces"),
        ("/memories/" + "a" * 210, "longer than"),
        (42, "must be text"),
    ],
)
def test_paths_that_could_lead_out_are_refused(
    files: MemoryFiles, kioku: Kioku, path: object, reason: str
) -> None:
    with pytest.raises(MemoryToolError, match=reason.replace(".", r"\.")):
        files.create(path, "text")
    with pytest.raises(MemoryToolError, match=reason.replace(".", r"\.")):
        files.view(path)
    assert kioku.list(kind=None) == []


def test_kind_directories_hold_md_files_directly(files: MemoryFiles, kioku: Kioku) -> None:
    with pytest.raises(MemoryToolError, match="sit directly in it"):
        files.create("/memories/knowledge/deep/a.md", "x")
    with pytest.raises(MemoryToolError, match=r"named <name>\.md"):
        files.create("/memories/procedures/deploy.txt", "x")
    with pytest.raises(MemoryToolError, match="is a directory"):
        files.create("/memories/users", "x")
    assert kioku.list(kind=None) == []


# -- the anthropic SDK's tool runner against a scripted model --------------------------------


class ScriptedModel:
    """A Messages API on loopback that answers each request with the next scripted reply
    and keeps the requests it was sent."""

    def __init__(self, replies: list[list[dict[str, Any]]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                model.requests.append(body)
                content = model.replies.pop(0)
                stop = "tool_use" if content[-1]["type"] == "tool_use" else "end_turn"
                answer = json.dumps(
                    {
                        "id": f"msg_{len(model.requests)}",
                        "type": "message",
                        "role": "assistant",
                        "model": body["model"],
                        "content": content,
                        "stop_reason": stop,
                        "stop_sequence": None,
                        "usage": {"input_tokens": 1, "output_tokens": 1},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def tool_results(self) -> list[dict[str, Any]]:
        """Every tool result the client sent back, in order."""
        return [
            block
            for request in self.requests
            for message in request["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]


@pytest.fixture
def scripted() -> Iterator[Any]:
    servers: list[ScriptedModel] = []

    def start(replies: list[list[dict[str, Any]]]) -> ScriptedModel:
        server = ScriptedModel(replies)
        server.thread.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.server.shutdown()
        server.server.server_close()


def use(n: int, **command: Any) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": f"toolu_{n}", "name": "memory", "input": command}]


def test_the_sdk_tool_runner_keeps_the_models_files_in_kioku(kioku: Kioku, scripted: Any) -> None:
    anthropic = pytest.importorskip("anthropic")
    from kioku.integrations.anthropic_memory import KiokuMemoryTool

    fact = "The staging database is db-stg-2.\n"
    model = scripted(
        [
            use(1, command="view", path="/memories"),
            use(2, command="create", path="/memories/knowledge/staging.md", file_text=fact),
            use(
                3,
                command="create",
                path="/memories/procedures/deploy.md",
                file_text="Release the app\n1. test\n2. tag\n",
            ),
            use(
                4,
                command="str_replace",
                path="/memories/knowledge/staging.md",
                old_str="db-stg-2",
                new_str="db-stg-3",
            ),
            use(5, command="view", path="/memories/knowledge/staging.md"),
            use(6, command="view", path="/memories/../../etc/passwd"),
            use(
                7,
                command="rename",
                old_path="/memories/procedures/deploy.md",
                new_path="/memories/procedures/release.md",
            ),
            use(8, command="frob", path="/memories"),
            [{"type": "text", "text": "Noted."}],
        ]
    )
    client = anthropic.Anthropic(base_url=model.url, api_key="test-key", max_retries=0)
    runner = client.beta.messages.tool_runner(
        model="claude-test",
        max_tokens=256,
        messages=[{"role": "user", "content": "Remember the staging database."}],
        tools=[KiokuMemoryTool(kioku)],
    )
    last = None
    for message in runner:
        last = message
    assert last is not None
    assert last.content[0].text == "Noted."
    assert model.requests[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    results = model.tool_results()
    assert [r["tool_use_id"] for r in results] == [f"toolu_{n}" for n in range(1, 9)]
    assert [bool(r.get("is_error")) for r in results] == [False] * 5 + [True, False, True]
    assert "unknown memory command 'frob'" in str(results[7]["content"])
    assert "/memories/knowledge/" in results[0]["content"]
    viewed = results[4]["content"]
    assert isinstance(viewed, str)
    assert shown(viewed) == fact.replace("2", "3")
    assert "outside" not in str(results[5]["content"])
    assert "'..'" in str(results[5]["content"])
    # What the model wrote is kioku's knowledge and procedure.
    knowledge = by_title(kioku, "knowledge", "staging")
    assert knowledge.content == "The staging database is db-stg-3.\n"
    procedure = by_title(kioku, "procedure", "release")
    assert procedure.kind is Kind.PROCEDURE
    assert isinstance(procedure.details, ProcedureDetails)
    assert procedure.details.steps == ("test", "tag")
    assert [h.memory.id for h in kioku.search_memory("db-stg-3").items][:1] == [knowledge.id]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    text=st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=300
    ).filter(str.strip),
    where=st.sampled_from(["/memories/knowledge/f.md", "/memories/deep/dir/f.txt"]),
)
def test_any_text_reads_back_as_written(files: MemoryFiles, text: str, where: str) -> None:
    files.create(where, text)
    assert shown(files.view(where)) == text
    files.insert(where, 0, "top")
    assert shown(files.view(where)).startswith("top\n")


def test_the_tree_on_postgresql(postgres_url: str, tmp_path: Path) -> None:  # noqa: F811
    schema = "mt_" + hashlib.blake2b(str(tmp_path).encode(), digest_size=8).hexdigest()
    env = {"KIOKU_STORE_URL": postgres_url, "KIOKU_STORE__SCHEMA": schema}
    try:
        with Kioku.open(tmp_path / "home", clock=FixedClock(NOW), env=env) as kioku:
            files = MemoryFiles(kioku)
            files.create("/memories/knowledge/office.md", "The office is in Meguro.\n")
            files.create("/memories/procedures/lunch.md", "Order lunch\n- ask\n- order\n")
            files.create("/memories/users/Ken.md", "pet: a cat")
            files.str_replace("/memories/knowledge/office.md", "Meguro", "Shibuya")
            files.rename("/memories/knowledge/office.md", "/memories/places/office.md")
            assert shown(files.view("/memories/places/office.md")) == "The office is in Shibuya.\n"
            assert shown(files.view("/memories/users/ken.md")) == "pet: a cat"
            procedure = by_title(kioku, "procedure", "lunch")
            assert isinstance(procedure.details, ProcedureDetails)
            assert procedure.details.steps == ("ask", "order")
            files.delete("/memories/places")
            assert kioku.list(kind="knowledge") == []
        assert not (tmp_path / "home" / DB_FILENAME).exists()  # it all went to PostgreSQL
    finally:
        admin(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def test_the_async_tool_runner_keeps_a_profile(kioku: Kioku, scripted: Any) -> None:
    anthropic = pytest.importorskip("anthropic")
    from kioku.integrations.anthropic_memory import AsyncKiokuMemoryTool

    model = scripted(
        [
            use(1, command="create", path="/memories/users/Mia.md", file_text="residence: Sapporo"),
            use(2, command="view", path="/memories/users/mia.md"),
            use(3, command="delete", path="/memories/users/../../x"),
            [{"type": "text", "text": "Noted."}],
        ]
    )

    async def converse() -> Any:
        client = anthropic.AsyncAnthropic(base_url=model.url, api_key="test-key", max_retries=0)
        runner = client.beta.messages.tool_runner(
            model="claude-test",
            max_tokens=256,
            messages=[{"role": "user", "content": "I live in Sapporo."}],
            tools=[AsyncKiokuMemoryTool(kioku)],
        )
        return await runner.until_done()

    final = asyncio.run(converse())
    assert final.content[0].text == "Noted."
    results = model.tool_results()
    assert [bool(r.get("is_error")) for r in results] == [False, False, True]
    assert shown(results[1]["content"]) == "residence: Sapporo"
    details = kioku.profile("Mia").details
    assert isinstance(details, ProfileDetails)
    assert [(f.key, f.value) for f in details.facts] == [("residence", "Sapporo")]
