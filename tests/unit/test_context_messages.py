"""Reading chat histories into working-memory messages."""

from __future__ import annotations

import pytest

from kioku.core.context import Message, messages_from_json
from kioku.errors import ValidationError


def test_plain_lists_blocks_and_a_messages_object() -> None:
    chat = [
        {"role": " user ", "content": "hi"},
        {"role": "assistant", "content": [{"type": "text", "text": "one"}, "two"]},
        {"role": "tool", "content": [{"type": "tool_result", "content": "exit 0"}]},
        {"role": "assistant", "content": [{"type": "image"}]},
        {"role": "system", "content": None},
    ]
    expected = [
        Message("user", "hi"),
        Message("assistant", "one\ntwo"),
        Message("tool", "[Tool: exit 0]"),
        Message("assistant", "[image]"),
        Message("system", ""),
    ]
    assert messages_from_json(chat) == expected
    assert messages_from_json({"messages": chat}) == expected
    assert messages_from_json([]) == []


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"role": "user"}, "messages"),
        ("text", "messages"),
        ([{"role": "user", "content": "ok"}, "hi"], "messages[1]"),
        ([{"content": "no role"}], "messages[0].role"),
        ([{"role": "  ", "content": "blank role"}], "messages[0].role"),
        ([{"role": "user", "content": 3}], "messages[0].content"),
    ],
)
def test_a_bad_history_names_the_first_bad_item(data: object, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        messages_from_json(data)
    assert info.value.field == field
