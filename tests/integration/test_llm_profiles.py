"""Profile extraction by an LLM, against the scripted model server on loopback.

A turn is remembered through the Python API with an LLM analyzer (behind its offline
fallback); the server answers analysis requests with the user's words as the trigger and
profile requests from a script. Only claims the utterance shows reach the profile.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from kioku import Kioku
from kioku.adapters.analyzers.llm import (
    AnthropicAnalyzer,
    FallbackAnalyzer,
    MalformedOutputError,
    OpenAICompatAnalyzer,
)
from kioku.adapters.analyzers.offline import OfflineAnalyzer
from kioku.adapters.clock import FixedClock
from kioku.core.kinds import ProfileDetails
from kioku.errors import MemoryNotFoundError
from kioku.ports.analyzer import ProfileExtractor
from kioku.service.kinds.profiles import learn_from_turn
from tests.fakes import FakeLlmServer, RecordingSink, Request, StubAnalyzer, default_answer

KEY = "sk-ant-test-SECRET-profiles-77"
NOW = datetime(2026, 4, 1, 12, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
PROFILE_ASK = "List the claims the speaker"


def utterance(request: Request) -> dict[str, str]:
    """The JSON object inside the request's <turn> block."""
    inner = request.user.split("<turn>", 1)[1].split("</turn>", 1)[0]
    value = json.loads(inner)
    assert isinstance(value, dict)
    return value


def is_profile(request: Request) -> bool:
    return PROFILE_ASK in request.user


class Model:
    """The scripted model: an analysis keeps the user's words as its trigger (as the offline
    analyzer does); a profile request takes the next scripted answer, ``{"claims": []}`` when
    none is left."""

    def __init__(self) -> None:
        self.profile_answers: deque[dict[str, Any] | str] = deque()

    def __call__(self, request: Request) -> dict[str, Any] | str:
        if is_profile(request):
            return self.profile_answers.popleft() if self.profile_answers else {"claims": []}
        return {**default_answer(request), "trigger": utterance(request)["user"]}


def claim(kind: str, key: str, value: str, polarity: int, evidence: str) -> dict[str, Any]:
    return {"kind": kind, "key": key, "value": value, "polarity": polarity, "evidence": evidence}


@pytest.fixture
def model() -> Model:
    return Model()


@pytest.fixture
def server(model: Model) -> Iterator[FakeLlmServer]:
    with FakeLlmServer(model) as s:
        yield s


@pytest.fixture
def sink() -> RecordingSink:
    return RecordingSink()


@pytest.fixture
def warnings() -> list[str]:
    return []


@pytest.fixture
def kioku(
    tmp_path: Path, server: FakeLlmServer, sink: RecordingSink, warnings: list[str]
) -> Iterator[Kioku]:
    primary = AnthropicAnalyzer(
        api_key=KEY,
        base_url=server.url,
        timeout_seconds=2.0,
        max_retries=0,
        usage_sink=sink,
        clock=lambda: NOW,
        sleep=lambda _s: None,
    )
    analyzer = FallbackAnalyzer(primary, OfflineAnalyzer(), warnings.append)
    with Kioku.open(tmp_path / "home", env={}, clock=FixedClock(NOW), analyzer=analyzer) as k:
        yield k


def profile_requests(server: FakeLlmServer) -> list[Request]:
    return [r for r in server.requests if is_profile(r)]


def details(k: Kioku) -> ProfileDetails:
    found = k.profile(k.user_id).details
    assert isinstance(found, ProfileDetails)
    return found


TEXT = "Honestly, spicy food and I don't get along. I live in Osaka and I work as a nurse."


def test_claims_the_text_shows_are_stored_in_the_profile(
    kioku: Kioku, server: FakeLlmServer, model: Model
) -> None:
    model.profile_answers.append(
        {
            "claims": [
                claim("fact", "residence", "Osaka", 0, "I live in Osaka"),
                claim("preference", "spicy food", "spicy food", -1, "spicy food and I don't"),
                claim("fact", "occupation", "NURSE", 0, "i work as a  nurse"),  # folded
            ]
        }
    )
    episode, _ = kioku.remember_turn(TEXT, "Noted.")
    (asked,) = profile_requests(server)
    assert utterance(asked) == {"utterance": TEXT}
    assert "untrusted data" in asked.system

    profile = details(kioku)
    facts = {f.key: f for f in profile.facts}
    assert {k: f.value for k, f in facts.items()} == {"residence": "Osaka", "occupation": "nurse"}
    assert facts["residence"].sources == (episode.id,)
    assert facts["residence"].confidence == pytest.approx(0.8)
    (pref,) = profile.preferences
    assert (pref.topic, pref.value, pref.polarity) == ("spicy food", "spicy food", -1)


def test_claims_come_back_in_text_order_with_verbatim_evidence(
    server: FakeLlmServer, model: Model
) -> None:
    text = "大阪に住んでいて、猫を二匹飼っています。でもトマトは嫌い。"
    model.profile_answers.append(
        {
            "claims": [
                claim("preference", "トマト", "トマト", -1, "トマトは嫌い"),
                claim("fact", "residence", "大阪", 0, "大阪に住んでいて"),
                claim("fact", "residence", "大阪", 0, "大阪に住んでいて"),  # said twice: once
                claim("fact", "pet", "猫を二匹", 0, "猫を二匹飼っています"),
            ]
        }
    )
    analyzer = OpenAICompatAnalyzer(
        provider="openai", model="gpt-4o-mini", api_key=KEY, base_url=server.v1_url
    )
    assert isinstance(analyzer, ProfileExtractor)
    claims = analyzer.extract_profile(text, "hana")
    assert [(c.kind, c.key, c.value, c.polarity) for c in claims] == [
        ("fact", "residence", "大阪", 0),
        ("fact", "pet", "猫を二匹", 0),
        ("preference", "トマト", "トマト", -1),
    ]
    assert all(c.evidence in text and c.speaker == "hana" for c in claims)


@pytest.mark.parametrize(
    "invented",
    [
        claim("fact", "occupation", "pilot", 0, "I'm a pilot"),  # evidence not in the text
        claim("fact", "origin", "Kyoto", 0, "I live in Osaka"),  # value not in the evidence
        claim("preference", "sushi", "sushi", 1, "I love sushi"),
    ],
)
def test_a_claim_the_text_does_not_show_is_dropped(
    kioku: Kioku, model: Model, invented: dict[str, Any]
) -> None:
    model.profile_answers.append(
        {"claims": [claim("fact", "residence", "Osaka", 0, "I live in Osaka"), invented]}
    )
    kioku.remember_turn(TEXT)
    profile = details(kioku)
    assert [(f.key, f.value) for f in profile.facts] == [("residence", "Osaka")]
    assert profile.preferences == ()


@pytest.mark.parametrize(
    "wrong",
    [
        claim("fact", "hobby", "hiking", 0, "I work as a nurse"),  # a key outside FACT_KEYS
        claim("fact", "job", "nurse", 0, "I work as a nurse"),
        claim("fact", "occupation", "nurse", 1, "I work as a nurse"),  # a fact has polarity 0
        claim("preference", "Osaka", "Osaka", 0, "I live in Osaka"),  # a like or a dislike
        claim("opinion", "x", "Osaka", 1, "I live in Osaka"),
        claim("preference", "it", "I", 1, "I live"),  # a bare pronoun is no topic
        claim("fact", "occupation", "x" * 61, 0, "x" * 61),
    ],
)
def test_a_claim_that_breaks_the_rules_is_dropped(
    server: FakeLlmServer, model: Model, wrong: dict[str, Any]
) -> None:
    valid = claim("fact", "residence", "Osaka", 0, "I live in Osaka")
    model.profile_answers.append({"claims": [wrong, valid]})
    analyzer = AnthropicAnalyzer(api_key=KEY, base_url=server.url, max_retries=0)
    claims = analyzer.extract_profile(TEXT + " " + "x" * 61, None)
    assert [(c.key, c.value) for c in claims] == [("residence", "Osaka")]  # only the valid one


def test_malformed_output_twice_falls_back_to_offline_extraction_with_a_warning(
    kioku: Kioku, server: FakeLlmServer, model: Model, warnings: list[str]
) -> None:
    model.profile_answers.extend(["I'd rather chat.", '{"claims": "none"}'])
    kioku.remember_turn("I live in Osaka.")
    assert len(profile_requests(server)) == 2  # the request and its one retry
    assert "could not be used" in profile_requests(server)[1].user
    (fact,) = details(kioku).facts
    assert (fact.key, fact.value) == ("residence", "Osaka")
    assert fact.confidence != pytest.approx(0.8)  # the offline pattern's confidence
    (warning,) = warnings
    assert "malformed output twice" in warning
    assert "offline analyzer read the speaker's profile from this turn" in warning


def test_a_bare_llm_analyzer_raises_on_malformed_output(
    server: FakeLlmServer, model: Model
) -> None:
    model.profile_answers.extend(["nope", "still nope"])
    analyzer = AnthropicAnalyzer(api_key=KEY, base_url=server.url, max_retries=0)
    with pytest.raises(MalformedOutputError):
        analyzer.extract_profile("I live in Osaka.", None)


def test_a_text_without_a_first_person_cue_costs_no_request(
    kioku: Kioku, server: FakeLlmServer
) -> None:
    kioku.remember_turn("Can you explain list comprehensions in Python?", "Sure.")
    kioku.remember_turn("このテストを直してください", "はい")
    assert len(server.requests) == 2  # the two analyses
    assert profile_requests(server) == []
    with pytest.raises(MemoryNotFoundError):
        kioku.profile(kioku.user_id)


def test_a_blank_text_costs_no_request(server: FakeLlmServer) -> None:
    analyzer = AnthropicAnalyzer(api_key=KEY, base_url=server.url)
    assert analyzer.extract_profile("  \n ", "someone") == []
    assert server.requests == []


def test_usage_is_recorded_for_the_profile_purpose(
    kioku: Kioku, server: FakeLlmServer, model: Model, sink: RecordingSink
) -> None:
    model.profile_answers.append({"claims": [claim("fact", "residence", "Osaka", 0, "Osaka")]})
    kioku.remember_turn("I live in Osaka.")
    assert [u.purpose for u in sink.records] == ["analyze", "profile"]
    usage = sink.records[1]
    assert (usage.provider, usage.model) == ("anthropic", "claude-haiku-4-5")
    assert (usage.input_tokens, usage.output_tokens) == (120, 45)


def test_the_speakers_own_words_are_read_not_the_summary(
    kioku: Kioku, server: FakeLlmServer, model: Model
) -> None:
    said = "I moved here from Sapporo, and I live in Osaka now."
    summary = kioku.remember(
        "The user talked about moving.", "I listened.", intensity=40, category="casual"
    )
    model.profile_answers.append({"claims": [claim("fact", "origin", "Sapporo", 0, said)]})
    assert learn_from_turn(kioku, summary) is None  # no cue in the summary: no request
    assert profile_requests(server) == []
    written = learn_from_turn(kioku, summary, text=said)
    assert written is not None
    assert len(profile_requests(server)) == 1
    (fact,) = details(kioku).facts
    assert (fact.key, fact.value, fact.sources) == ("origin", "Sapporo", (summary.id,))


def test_a_primary_that_cannot_extract_profiles_leaves_it_to_the_offline_extractor() -> None:
    warned: list[str] = []
    analyzer = FallbackAnalyzer(StubAnalyzer(), OfflineAnalyzer(), warned.append)
    (fact,) = analyzer.extract_profile("I live in Osaka.", "ada")
    assert (fact.key, fact.value, fact.speaker) == ("residence", "Osaka", "ada")
    assert warned == []
