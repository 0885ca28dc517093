"""Every ``/v1`` route on a real server without keys (the store's default owner): each answers
what it should, and what it does is really done (read back through other routes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.running import Served, serving

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("api") / "home", "--no-ui") as running:
        yield running


@pytest.fixture
def client(served: Served) -> Iterator[httpx.Client]:
    with served.client() as c:
        yield c


def _ok(answer: httpx.Response, status: int = 200) -> Any:
    assert answer.status_code == status, answer.text
    return answer.json()


def _write(client: httpx.Client, **body: Any) -> dict[str, Any]:
    data: dict[str, Any] = _ok(client.post("v1/memories", json=body), 201)
    return data


def _found(client: httpx.Client, query: str, kinds: tuple[str, ...] = ()) -> list[str]:
    """Ids whose current text holds the words of ``query``."""
    body: dict[str, Any] = {"query": query}
    if kinds:
        body["kinds"] = list(kinds)
    data = _ok(client.post("v1/search", json=body))
    return [r["id"] for r in data["results"] if "text" in r["matched_in"]]


def _all_ids(client: httpx.Client) -> set[str]:
    ids: set[str] = set()
    for archived in ("false", "true"):
        offset: int | None = 0
        while offset is not None:
            page = _ok(
                client.get(
                    "v1/memories", params={"archived": archived, "limit": 500, "offset": offset}
                )
            )
            ids |= {m["id"] for m in page["items"]}
            offset = page["next_offset"]
    return ids


def test_health_problems_and_the_openapi_document(client: httpx.Client) -> None:
    assert _ok(client.get("v1/health"))["status"] == "ok"
    kinds = {p["kind"] for p in _ok(client.get("v1/problems"))["problems"]}
    assert {"invalid", "not-found", "confirmation-required", "too-large"} <= kinds
    document = _ok(client.get("v1/openapi.json"))
    assert "/v1/memories/{memory_id}/history" in document["paths"]
    assert "NewMemory" in document["components"]["schemas"]


def test_write_get_and_list_memories(client: httpx.Client) -> None:
    knowledge = _write(client, kind="knowledge", text="The lab moved to Sendai.", title="lab")
    procedure = _write(
        client,
        kind="procedure",
        text="",
        title="brew tea",
        description="making green tea",
        steps=["heat water to 70C", "steep two minutes"],
    )
    episode = _write(client, kind="episode", text="We hiked Mount Tsukuba.", protected=True)
    assert knowledge["kind"] == "knowledge"
    assert procedure["details"]["steps"] == ["heat water to 70C", "steep two minutes"]
    assert episode["protected"] is True
    got = _ok(client.get(f"v1/memories/{knowledge['id']}"))
    assert got["content"] == "The lab moved to Sendai."
    listed = _ok(client.get("v1/memories", params={"kind": "procedure"}))
    assert procedure["id"] in [m["id"] for m in listed["items"]]
    assert all(m["kind"] == "procedure" for m in listed["items"])
    page = _ok(client.get("v1/memories", params={"limit": 1}))
    assert len(page["items"]) == 1
    assert page["next_offset"] == 1
    created = got["created"]
    since = _ok(client.get("v1/memories", params={"since": created, "kind": "knowledge"}))
    assert knowledge["id"] in [m["id"] for m in since["items"]]
    until = _ok(client.get("v1/memories", params={"until": created, "kind": "knowledge"}))
    assert knowledge["id"] not in [m["id"] for m in until["items"]]


def test_a_turn_is_stored_once(client: httpx.Client) -> None:
    turn = {"user": "My parrot Kiwi learned to whistle", "assistant": "Wow!", "session_id": "p1"}
    first = _ok(client.post("v1/turns", json=turn), 201)
    again = _ok(client.post("v1/turns", json=turn), 200)
    assert first["already_known"] is False
    assert again["already_known"] is True
    assert again["id"] == first["id"]
    assert _found(client, "parrot Kiwi whistle", ("episode",)) == [first["id"]]


def test_edit_changes_what_search_finds_and_keeps_history(client: httpx.Client) -> None:
    memory = _write(client, kind="knowledge", text="The harbour cafe opens at nine.", title="cafe")
    edited = _ok(
        client.patch(
            f"v1/memories/{memory['id']}",
            json={"content": "The lighthouse bakery opens at seven.", "keywords": ["bakery"]},
        )
    )
    assert edited["content"] == "The lighthouse bakery opens at seven."
    assert edited["trigger"] == "cafe"
    assert memory["id"] in _found(client, "lighthouse bakery")
    assert memory["id"] not in _found(client, "harbour nine")
    history = _ok(client.get(f"v1/memories/{memory['id']}/history"))
    assert [v["content"] for v in history["versions"]] == ["The harbour cafe opens at nine."]
    explained = _ok(client.get(f"v1/memories/{memory['id']}/explain"))
    assert explained["kind"] == "knowledge"
    assert "explanation" in explained
    refused = client.patch(f"v1/memories/{memory['id']}", json={})
    assert refused.status_code == 422
    assert refused.json()["errors"][0]["field"] == "change"


def test_reading_counts_as_a_recall(client: httpx.Client) -> None:
    turn = _ok(client.post("v1/turns", json={"user": "The violin recital went well"}), 201)
    before = _ok(client.get(f"v1/memories/{turn['id']}"))
    assert before["recalled_since_last_batch"] is False
    read = _ok(client.post(f"v1/memories/{turn['id']}/read"))
    assert read["trigger"] == "The violin recital went well"
    assert "original" in read
    after = _ok(client.get(f"v1/memories/{turn['id']}"))
    assert after["recalled_since_last_batch"] is True


def test_protect_confirm_and_forget(client: httpx.Client) -> None:
    memory = _write(client, kind="knowledge", text="Quetzal feathers are green.", title="quetzal")
    mid = memory["id"]
    assert _ok(client.post(f"v1/memories/{mid}/protect"))["protected"] is True
    unconfirmed = client.delete(f"v1/memories/{mid}")
    assert unconfirmed.status_code == 422
    assert unconfirmed.json()["type"] == "/v1/problems#confirmation-required"
    assert f"confirm={mid}" in unconfirmed.json()["hint"]
    wrong = client.delete(f"v1/memories/{mid}", params={"confirm": "mem_other"})
    assert wrong.status_code == 422
    protected = client.delete(f"v1/memories/{mid}", params={"confirm": mid})
    assert protected.status_code == 409
    assert "force=true" in protected.json()["hint"]
    assert _ok(client.get(f"v1/memories/{mid}"))["protected"] is True
    assert _ok(client.delete(f"v1/memories/{mid}/protect"))["protected"] is False
    erased = _ok(client.delete(f"v1/memories/{mid}", params={"confirm": mid}))
    assert erased["memory_ids"] == [mid]
    assert client.get(f"v1/memories/{mid}").status_code == 404
    assert _found(client, "quetzal feathers") == []
    log = _ok(client.get("v1/lifecycle", params={"memory_id": mid, "event": "delete"}))
    assert [e["event"] for e in log["items"]] == ["delete"]


def test_forget_with_force_erases_a_protected_memory(client: httpx.Client) -> None:
    memory = _write(client, kind="knowledge", text="Axolotls regrow limbs.", protected=True)
    mid = memory["id"]
    _ok(client.delete(f"v1/memories/{mid}", params={"confirm": mid, "force": "true"}))
    assert client.get(f"v1/memories/{mid}").status_code == 404


def test_procedure_outcome(client: httpx.Client) -> None:
    procedure = _write(
        client, kind="procedure", text="", title="reset router", description="fix the wifi"
    )
    done = _ok(client.post(f"v1/memories/{procedure['id']}/outcome", json={"success": True}))
    assert done["details"]["success_count"] == 1
    failed = _ok(client.post(f"v1/memories/{procedure['id']}/outcome", json={"success": False}))
    assert failed["details"]["failure_count"] == 1
    assert failed["details"]["confidence"] == 0.5


def test_recall_prime_and_search(client: httpx.Client) -> None:
    turn = _ok(client.post("v1/turns", json={"user": "Our dog Biscuit loves the snowy park"}), 201)
    recalled = _ok(client.post("v1/recall", json={"query": "How is Biscuit the dog?"}))
    assert turn["id"] in [r["id"] for r in recalled["results"]]
    assert "Biscuit" in recalled["block"]
    assert (recalled["limited"], recalled["mood_shifted"]) == ([], False)
    primed = _ok(client.post("v1/prime", json={"message": "Should I walk Biscuit today?"}))
    assert turn["id"] in primed["memory_ids"]
    assert "Biscuit" in primed["block"]
    found = _ok(client.post("v1/search", json={"query": "Biscuit", "kinds": ["episode"]}))
    assert found["results"][0]["id"] == turn["id"]
    created = _ok(client.get(f"v1/memories/{turn['id']}"))["created"]
    later = client.post("v1/search", json={"query": "Biscuit", "until": created})
    assert turn["id"] not in [r["id"] for r in _ok(later)["results"]]
    # The mood shift, turned on for one recall, applies in a session whose mood is negative.
    sad = {"user": "Biscuit is sick and I feel terrible and hopeless", "session_id": "low"}
    _ok(client.post("v1/turns", json=sad), 201)
    asked = {"query": "How is Biscuit the dog?", "session_id": "low", "mark": False}
    assert _ok(client.post("v1/recall", json=asked | {"mood_shift": True}))["mood_shifted"]
    assert not _ok(client.post("v1/recall", json=asked))["mood_shifted"]
    assert client.post("v1/recall", json=asked | {"mood_shift": "yes"}).status_code == 422


def test_profiles(client: httpx.Client) -> None:
    edited = _ok(
        client.patch("v1/profiles/Hana", json={"likes": ["matcha"], "facts": {"pet": "a cat"}})
    )
    assert edited["kind"] == "profile"
    listed = _ok(client.get("v1/profiles"))
    assert edited["id"] in [p["id"] for p in listed["items"]]
    one = _ok(client.get("v1/profiles/hana"))
    assert one["id"] == edited["id"]
    assert "matcha" in json.dumps(one["details"])
    missing = client.get("v1/profiles/Nobody")
    assert missing.status_code == 404
    assert "/v1/profiles" in missing.json()["hint"]


def test_stats_activity_midterm_resolutions_and_summary(client: httpx.Client) -> None:
    turn = _ok(client.post("v1/turns", json={"user": "I repainted the fence blue"}), 201)
    stats = _ok(client.get("v1/stats"))
    episodes = _ok(client.get("v1/memories", params={"kind": "episode", "limit": 500}))
    assert stats["by_kind"]["episode"] == len(episodes["items"])
    activity = _ok(client.get("v1/activity", params={"type": "message_received"}))
    assert any(turn["id"] in e["event"].get("memory_ids", []) for e in activity["items"])
    assert {"items", "count"} <= set(_ok(client.get("v1/midterm")))
    assert {"items", "count"} <= set(_ok(client.get("v1/resolutions")))
    summary = _ok(client.get("v1/lifecycle/summary"))
    assert "capacity" in summary


def test_lifecycle_paging(client: httpx.Client) -> None:
    for n in range(3):
        memory = _write(client, kind="knowledge", text=f"Temporary fact number {n}.")
        _ok(client.delete(f"v1/memories/{memory['id']}", params={"confirm": memory["id"]}))
    whole = _ok(client.get("v1/lifecycle", params={"limit": 1000}))["items"]
    first = _ok(client.get("v1/lifecycle", params={"limit": 2}))
    second = _ok(client.get("v1/lifecycle", params={"limit": 2, "offset": first["next_offset"]}))
    assert first["items"] == whole[-2:]
    assert second["items"] == whole[-4:-2]


def test_export_holds_every_memory(client: httpx.Client) -> None:
    _write(client, kind="knowledge", text="Exported fact about otters.")
    answer = client.get("v1/export")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in answer.text.splitlines()]
    assert {m["id"] for m in lines} == _all_ids(client)
    assert any(m["content"] == "Exported fact about otters." for m in lines)


def test_consolidation_dry_run_writes_nothing_then_runs(client: httpx.Client) -> None:
    before = _ok(client.get("v1/consolidation"))
    ids = _all_ids(client)
    dry = _ok(client.post("v1/consolidation", json={"dry_run": True, "levels": ["daily"]}))
    assert dry["status"] in {"dry_run", "up_to_date"}
    assert _ok(client.get("v1/consolidation")) == before
    assert _all_ids(client) == ids
    done = _ok(client.post("v1/consolidation", json={"levels": ["daily"]}))
    assert done["status"] == "done"
    runs = _ok(client.get("v1/consolidation", params={"level": "daily"}))
    assert [r["period"] for r in runs["items"]] == [p["period"] for p in done["periods"]]


def test_batch_dry_run_writes_nothing_then_runs(client: httpx.Client) -> None:
    state = _ok(client.get("v1/batch"))
    assert state["last_day"] is None
    listed = _ok(client.get("v1/memories", params={"limit": 500}))
    dry = _ok(client.post("v1/batch", json={"dry_run": True}))
    assert dry["status"] == "dry_run"
    assert _ok(client.get("v1/batch")) == state
    assert _ok(client.get("v1/memories", params={"limit": 500})) == listed
    done = _ok(client.post("v1/batch", json={}))
    assert done["status"] == "done"
    assert _ok(client.get("v1/batch"))["last_day"] == done["last_day"]


def test_erasure_plan_names_the_default_owner(client: httpx.Client) -> None:
    plan = _ok(client.post("v1/erasure/plan"))
    assert plan["user_id"] == "default"
    assert plan["token"]
    assert plan["memories"] == len(_all_ids(client))
    refused = client.post("v1/erasure", json={"token": "not-the-token"})
    assert refused.status_code == 422
    assert _ok(client.post("v1/erasure/plan"))["memories"] == plan["memories"]


def test_unknown_memory_ids_are_not_found(client: httpx.Client, tmp_path: Path) -> None:
    del tmp_path
    for method, path in (
        ("GET", "v1/memories/mem_none"),
        ("PATCH", "v1/memories/mem_none"),
        ("POST", "v1/memories/mem_none/read"),
        ("GET", "v1/memories/mem_none/history"),
    ):
        body = {"content": "x"} if method == "PATCH" else None
        answer = client.request(method, path, json=body)
        assert answer.status_code == 404
        assert answer.headers["content-type"] == "application/problem+json"


def test_mood_counts_what_recall_brought_back(client: httpx.Client) -> None:
    turn = _ok(
        client.post(
            "v1/turns", json={"user": "My dog Biscuit died last night. I can't stop crying."}
        ),
        201,
    )
    before = _ok(client.get("v1/mood", params={"days": 1}))
    recalled = _ok(client.post("v1/recall", json={"query": "Biscuit the dog died"}))
    assert turn["id"] in [r["id"] for r in recalled["results"]]
    after = _ok(client.get("v1/mood", params={"days": 1}))
    assert len(after["days"]) == 1
    assert after["total"] > before["total"]
    assert after["days"][0]["negative"] > before["days"][0]["negative"]
    assert _ok(client.get("v1/mood"))["days"][-1] == after["days"][0]  # 7 days by default
    assert len(_ok(client.get("v1/mood"))["days"]) == 7
    for bad in ("0", "367", "seven"):
        refused = client.get("v1/mood", params={"days": bad})
        assert refused.status_code == 422, refused.text
        assert "days" in refused.text
