"""A process that streams text into a journal until it is killed (the SIGKILL test's child).

    python journal_child.py DIRECTORY SESSION_ID

It prints ``start T0`` once the journal is open, then one line per fragment handed to
``write_text``: ``INDEX PHASE CHARS T`` with the fragment's index, the phase of the stream,
the characters handed over so far and ``time.monotonic()`` once the call returned. The stream
cycles through a fast burst, a slow trickle and a stall (empty fragments: nothing to write,
so only the journal's background thread can write out what the trickle left buffered).
The text is a function of the index alone, so the parent can rebuild it. After
``MAX_SECONDS`` the child finalizes and exits, so it never outlives a parent that died.
"""

from __future__ import annotations

import sys
import time

PHASES = (("burst", 250, 0.003), ("trickle", 40, 0.05), ("stall", 30, 0.1))
CYCLE = sum(count for _, count, _ in PHASES)
MAX_SECONDS = 60.0
_PIECES = ("予算の", "会議は", " budget", " 🌸", "、", "review ", "明日。", "\n", 'q"\\')


def phase_of(index: int) -> tuple[str, float]:
    """The phase of fragment ``index`` and the pause after it."""
    position = index % CYCLE
    for name, count, pause in PHASES:
        if position < count:
            return name, pause
        position -= count
    raise AssertionError("unreachable")


def fragment(index: int) -> str:
    """The text of fragment ``index``: empty in a stall, else a few pieces after its index."""
    if phase_of(index)[0] == "stall":
        return ""
    return f"{index}" + "".join(
        _PIECES[(index * j + j) % len(_PIECES)] for j in range(1 + index % 5)
    )


def main(directory: str, session_id: str) -> None:
    from kioku.service.journal import StreamingJournal

    journal = StreamingJournal.open(directory, session_id, trigger="chat", sender="child")
    started = time.monotonic()
    print(f"start {started:.6f}", flush=True)
    handed = index = 0
    while time.monotonic() - started < MAX_SECONDS:
        text = fragment(index)
        phase, pause = phase_of(index)
        journal.write_text(text)
        handed += len(text)
        print(f"{index} {phase} {handed} {time.monotonic():.6f}", flush=True)
        index += 1
        time.sleep(pause)
    journal.finalize()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
