"""The daemon client's test for a whole JSON payload on a stdin that is never closed."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from kioku.interfaces.claude_code.hook_client import payload_complete

_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(st.dictionaries(st.text(), _json, max_size=5), st.booleans())
def test_a_whole_object_is_complete_and_no_strict_prefix_is(
    obj: dict[str, object], ascii_only: bool
) -> None:
    data = json.dumps(obj, ensure_ascii=ascii_only).encode()
    assert payload_complete(data)
    assert payload_complete(b"  " + data + b"\n")
    for end in range(len(data)):
        assert not payload_complete(data[:end])


def test_braces_and_quotes_inside_strings_do_not_count() -> None:
    assert payload_complete(b'{"prompt": "a } b \\" } {"}')
    assert not payload_complete(b'{"prompt": "a } b \\"}')
    assert not payload_complete(b'["not", "an object"]')
    assert not payload_complete(b"")
