"""Memory text made safe to show in a terminal. Pure functions, standard library only.

A memory holds whatever was said, and what was said may hold bytes a terminal obeys: an escape
sequence that clears the screen (``ESC [ 2 J``), retitles the window or writes to the clipboard
(OSC ... BEL), rings the bell, or a carriage return that lets the rest of a line overwrite what
came before. Printed as they are, they would let a memory rewrite what the user sees.

:func:`for_terminal` takes out every escape sequence whole (CSI, OSC, DCS, SOS, PM and APC
strings up to their terminator, and the short ones), in their 7-bit (``ESC [``) and 8-bit
(``U+009B``) forms; turns a carriage return, alone or before a line feed, into a line feed;
and shows every other character of the forbidden set (:data:`FORBIDDEN`) as U+FFFD, so the
reader sees that something was there: the C0 controls but newline and tab, DEL, the C1
controls (U+0080 to U+009F), and the bidirectional embedding, override and isolate characters
(U+202A to U+202E, U+2066 to U+2069), which can make text read in another order than it is
stored ("Trojan Source"). The bidirectional marks (U+200E, U+200F, U+061C) stay: they only
nudge neutral characters and are ordinary in right-to-left text. Text without any of these
characters is returned unchanged. What is stored is never altered: this is for display only.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["FORBIDDEN", "REPLACEMENT", "for_terminal", "is_forbidden"]

#: What a stray control character is shown as.
REPLACEMENT: Final = "\ufffd"

#: Characters that never reach a terminal: C0 but newline and tab, DEL, C1, bidi controls.
FORBIDDEN: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

_SEQUENCE: Final = re.compile(
    # CSI (ESC [ or U+009B): parameters, intermediates, a final byte (absent when cut short).
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    # OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \ or U+009C); CAN or SUB abort
    # it, and one never terminated runs to the end, as a terminal would swallow it.
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x18\x1a\x1b\x9c]*"
    r"(?:\x07|\x1b\\|\x9c|[\x18\x1a])?"
    # Any other escape sequence: ESC, intermediates, a final byte; or a lone ESC.
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?"
)
_CARRIAGE: Final = re.compile(r"\r\n?")


def is_forbidden(char: str) -> bool:
    """Whether one character may never be printed to a terminal."""
    return FORBIDDEN.fullmatch(char) is not None


def for_terminal(text: str) -> str:
    """``text`` with nothing a terminal would obey (see the module docstring); newlines and
    tabs are kept, so it still reads as it was written."""
    if not FORBIDDEN.search(text):
        return text
    text = _SEQUENCE.sub("", text)
    text = _CARRIAGE.sub("\n", text)
    return FORBIDDEN.sub(REPLACEMENT, text)
