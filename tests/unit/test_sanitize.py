"""Memory text shown in a terminal or injected in a prompt carries nothing a terminal obeys."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.core.inject import CLOSE, OPEN, Injected, format_memories
from kioku.core.sanitize import REPLACEMENT, for_terminal, is_forbidden
from kioku.interfaces.cli.render import excerpt, plain, table

WHEN = datetime(2026, 1, 18, 14, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
FORBIDDEN_CHARS = (
    "".join(chr(c) for c in range(0x20) if chr(c) not in "\n\t")
    + "".join(chr(c) for c in range(0x7F, 0xA0))
    + BIDI
)

# Text that is mostly ordinary, with controls, escape sequences and their pieces mixed in.
_pieces = st.sampled_from(
    ["\x1b[", "\x1b]", "\x1bP", "\x1b\\", "\x07", "\x9b", "\x9d", "\x9c", "\r", "\r\n", "\x1b"]
)
hostile = st.lists(
    st.one_of(
        st.text(max_size=8),
        _pieces,
        st.sampled_from(FORBIDDEN_CHARS),
        st.text(alphabet=st.characters(max_codepoint=0xA0), max_size=6),
    ),
    max_size=20,
).map("".join)
printable = st.text(
    alphabet=st.characters(
        blacklist_categories=("Cc", "Cs"), blacklist_characters=BIDI, max_codepoint=0x2FFFF
    )
)


def _clean(text: str, *, allowed: str = "\n\t") -> bool:
    return not any(is_forbidden(c) or (c in "\n\t" and c not in allowed) for c in text)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("title\x1b]0;pwned\x07 after", "title after"),
        ("osc with st\x1b]2;x\x1b\\ end", "osc with st end"),
        ("clear\x1b[2J\x1b[H screen", "clear screen"),
        ("colour \x1b[1;31mred\x1b[0m", "colour red"),
        ("8-bit \x9b2J csi and \x9d0;t\x9c osc", "8-bit  csi and  osc"),
        ("bell\x07!", f"bell{REPLACEMENT}!"),
        ("over\rwrite", "over\nwrite"),
        ("windows\r\nline", "windows\nline"),
        ("nul\x00 del\x7f c1\x85", f"nul{REPLACEMENT} del{REPLACEMENT} c1{REPLACEMENT}"),
        ("abc\u202edcba", f"abc{REPLACEMENT}dcba"),
        ("unterminated \x1b]0;title and the rest", "unterminated "),
        ("lone escape \x1b", "lone escape "),
        ("keypad \x1b= mode", "keypad  mode"),
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
    ],
)
def test_sequences_are_taken_out_and_controls_shown(raw: str, shown: str) -> None:
    assert for_terminal(raw) == shown


@settings(max_examples=300, deadline=None)
@given(hostile)
def test_nothing_forbidden_survives(text: str) -> None:
    assert _clean(for_terminal(text))
    assert _clean(plain(text))
    assert _clean(excerpt(text, 40), allowed="")
    assert _clean(table(["A", "B"], [[text, text[:5]]]), allowed="\n")


@settings(max_examples=300, deadline=None)
@given(printable)
def test_printable_text_is_left_as_it_is(text: str) -> None:
    assert for_terminal(text) == text
    assert plain(text) == text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(hostile, hostile), max_size=6), st.integers(0, 3000))
def test_the_memories_block_holds_no_control_character(
    texts: list[tuple[str, str]], budget: int
) -> None:
    block = format_memories([Injected(WHEN, 1, False, t, c) for t, c in texts], budget)
    assert _clean(block, allowed="\n")
    if block:
        lines = block.split("\n")
        assert lines[0] == OPEN
        assert lines[-1] == CLOSE
        assert all(line.startswith("- [") for line in lines[2:-1])
