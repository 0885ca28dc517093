"""Bad requests get a problem detail and change nothing: malformed JSON (400), an oversize
body (413, announced or streamed), a body that is not JSON (415), fields of the wrong type
or missing (422, naming each field), an unknown route (404) or method (405). Random bodies
to the writing routes are answered with 2xx or a 4xx problem, never a 500."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.server.running import Served, serving

MAX_BODY = 4096
PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("bad") / "home"
    with serving(home, "--no-ui", "--max-body", str(MAX_BODY)) as running:
        yield running


@pytest.fixture(scope="module")
def client(served: Served) -> Iterator[httpx.Client]:
    with served.client() as c:
        turn = {"user": "A turn that is already there", "assistant": "Indeed."}
        assert c.post("v1/turns", json=turn).status_code == 201
        yield c


def _state(client: httpx.Client) -> list[dict[str, Any]]:
    """Every memory, as the export gives it."""
    answer = client.get("v1/export")
    assert answer.status_code == 200
    return [json.loads(line) for line in answer.text.splitlines()]


def _problem(answer: httpx.Response, status: int, kind: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == PROBLEM
    body: dict[str, Any] = answer.json()
    assert body["status"] == status
    assert body["type"] == f"/v1/problems#{kind}"
    assert body["detail"]
    return body


JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(
    "raw", [b"{", b'{"user": "x",}', b"not json", b'{"user": "\\ud8"}', b"\xff\xfe{}"]
)
def test_malformed_json_is_400(client: httpx.Client, raw: bytes) -> None:
    before = _state(client)
    _problem(client.post("v1/turns", content=raw, headers=JSON), 400, "malformed-json")
    assert _state(client) == before


def test_an_announced_oversize_body_is_413(client: httpx.Client) -> None:
    before = _state(client)
    body = json.dumps({"user": "x" * (MAX_BODY + 10)})
    _problem(client.post("v1/turns", content=body, headers=JSON), 413, "too-large")
    assert _state(client) == before


def test_a_streamed_oversize_body_is_413(served: Served, client: httpx.Client) -> None:
    before = _state(client)
    payload = json.dumps({"user": "y" * (MAX_BODY * 3)}).encode()

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(payload), 1000):
            yield payload[start : start + 1000]

    with served.client() as fresh:
        answer = fresh.post("v1/turns", content=chunks(), headers=JSON)
    assert "content-length" not in answer.request.headers
    _problem(answer, 413, "too-large")
    assert _state(client) == before


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_a_body_that_is_not_json_is_415(client: httpx.Client, kind: str) -> None:
    before = _state(client)
    headers = {"content-type": kind} if kind else {}
    answer = client.post("v1/turns", content=b'{"user": "typed wrong"}', headers=headers)
    _problem(answer, 415, "unsupported-media-type")
    assert _state(client) == before


@pytest.mark.parametrize(
    ("route", "body", "fields"),
    [
        ("v1/turns", {}, {"user"}),
        ("v1/turns", {"user": 5}, {"user"}),
        ("v1/turns", {"user": "hi", "session_id": ["s"]}, {"session_id"}),
        ("v1/turns", {"user": "hi", "surprise": 1}, {"surprise"}),
        ("v1/memories", {"text": "no kind"}, {"kind"}),
        ("v1/memories", {"kind": "dream", "text": "x"}, {"kind"}),
        ("v1/memories", {"kind": "knowledge", "text": "x", "protected": "yes"}, {"protected"}),
        ("v1/memories", {"kind": "procedure", "text": "x", "steps": "one"}, {"steps"}),
        ("v1/search", {"query": "x", "top_k": 0}, {"top_k"}),
        ("v1/search", {"query": "x", "since": "yesterday"}, {"since"}),
        ("v1/recall", {"query": "x", "at": "2026-01-01T00:00:00"}, {"at"}),
        ("v1/consolidation", {"levels": ["hourly"]}, {"levels.0"}),
    ],
)
def test_wrong_types_and_missing_fields_are_422(
    client: httpx.Client, route: str, body: dict[str, Any], fields: set[str]
) -> None:
    before = _state(client)
    problem = _problem(client.post(route, json=body), 422, "invalid")
    assert fields <= {e["field"] for e in problem["errors"]}
    assert _state(client) == before


def test_values_the_service_refuses_are_422_naming_the_field(client: httpx.Client) -> None:
    before = _state(client)
    blank = _problem(client.post("v1/turns", json={"user": "  "}), 422, "invalid")
    assert blank["errors"][0]["field"] == "user"
    mid = before[0]["id"]
    bad = _problem(client.patch(f"v1/memories/{mid}", json={"category": "nope"}), 422, "invalid")
    assert bad["errors"][0]["field"] == "category"
    query = {"limit": 0}
    _problem(client.get("v1/memories", params=query), 422, "invalid")
    assert _state(client) == before


@pytest.mark.parametrize(
    "raw",
    [
        b'{"user": "lone \\ud800 surrogate"}',
        b'{"user": "nul \\u0000 inside"}',
        b'{"user": "x", "assistant": "\\udfff"}',
    ],
)
def test_odd_text_is_stored_or_refused_never_a_crash(client: httpx.Client, raw: bytes) -> None:
    answer = client.post("v1/turns", content=raw, headers=JSON)
    assert answer.status_code in {201, 422}, answer.text


def test_unknown_route_is_404_and_wrong_method_is_405(client: httpx.Client) -> None:
    before = _state(client)
    _problem(client.get("v1/nothing-here"), 404, "not-found")
    _problem(client.post("v1/nothing-here", json={}), 404, "not-found")
    _problem(client.put("v1/turns", json={"user": "x"}), 405, "method-not-allowed")
    _problem(client.get("v1/turns"), 405, "method-not-allowed")
    _problem(client.delete("v1/memories"), 405, "method-not-allowed")
    assert _state(client) == before


_TEXT = st.text(max_size=60)
_JSONISH = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=8,
)
_TURNS = st.one_of(
    _JSONISH,
    st.fixed_dictionaries(
        {"user": st.one_of(_TEXT, _JSONISH)},
        optional={"assistant": st.one_of(_TEXT, _JSONISH), "session_id": _JSONISH},
    ),
)
_MEMORIES = st.one_of(
    _JSONISH,
    st.fixed_dictionaries(
        {
            "kind": st.sampled_from(["episode", "knowledge", "procedure", "profile", "x"]),
            "text": st.one_of(_TEXT, _JSONISH),
        },
        optional={
            "title": st.one_of(_TEXT, _JSONISH),
            "description": _TEXT,
            "steps": st.lists(_TEXT, max_size=4) | _JSONISH,
            "keywords": st.lists(_TEXT, max_size=4) | _JSONISH,
            "protected": st.booleans() | _JSONISH,
        },
    ),
)


_FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _answer_is_sane(answer: httpx.Response) -> None:
    assert answer.status_code < 500, answer.text
    if answer.status_code >= 400:
        assert answer.headers["content-type"] == PROBLEM
        assert answer.json()["status"] == answer.status_code
    else:
        assert isinstance(answer.json(), dict)


@_FUZZ
@given(body=_TURNS)
def test_random_turns_never_crash(client: httpx.Client, body: Any) -> None:
    _answer_is_sane(client.post("v1/turns", json=body))


@_FUZZ
@given(body=_MEMORIES)
def test_random_memories_never_crash(client: httpx.Client, body: Any) -> None:
    _answer_is_sane(client.post("v1/memories", json=body))
