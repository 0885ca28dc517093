"""Recent activity as compact text for priming, within a token budget (spec 001, Priming連携).

Each event is one line, ``[HH:MM] LABEL text``, with the ASCII labels of
:data:`~kioku.core.activity.events.LABELS` and, where it says who or what, a name before a
colon: the sender or recipient of a message, the peer of a direct message, the channel, the
notification route, the tool, the cron task (``[15:00] TOOL web_search: 検索実行``). The text
is the content, or the summary when there is none.

Related events are grouped (トピックグルーピング). Events are taken in time order, and a group
is a run of neighbours: nothing else happened between them, and they are in the same day file,
so the group's pointer names one file.

* DM: direct messages with the same peer, each within 30 minutes of the one before:
  ``[HH:MM-HH:MM] DM {peer}: {topic}``, then one indented line per message. The topic is the
  first summary in the group, or else the start of its first message.
* HB: a ``heartbeat_start`` directly followed by its ``heartbeat_end``:
  ``[HH:MM-HH:MM] HB: {summary}`` (the summary of the end, or else of the start).
* CRON: runs of the same task. One run is ``[HH:MM] CRON {task}: exit={code}``; several are
  ``[HH:MM-HH:MM] CRON {task}: exit={last code} (xN, K failed)``.

Text over 200 characters is cut with an ellipsis; a cut single line ends with a pointer to its
source, ``(-> activity_log/{date}.jsonl)``. A group ends with its pointer
``-> activity_log/{date}.jsonl#L{first}-{last}`` (the line range only when the caller says on
which lines of the day file the events are; a single cut line then gets ``#L{n}`` as well).

Times are shown on the clock of ``now``. An event of another day than ``now`` has its date in
the stamp (``[02-16 23:10]``, with the year when that differs too).

The budget is filled from the newest event back, and the lines are then listed oldest first.
When a block does not fit whole, a DM group keeps its newest messages (its header says how
many earlier ones are left out) and nothing older is shown: the text is always the unbroken
recent past. The total is counted once more at the end and the oldest blocks dropped until it
fits, so the budget holds for any token counter, even one whose counts of joined texts exceed
the sum of their parts. A heartbeat is guaranteed ``min_tokens_heartbeat`` tokens.

All text is sanitised (:func:`kioku.core.inject.neutralise`): escape sequences and control
characters are taken out and line breaks become spaces, so an event cannot forge a line.
An event that fails :func:`~kioku.core.activity.events.check_event` is left out, not raised:
priming is best effort and one bad record must not hide the others.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final, Literal

from kioku.core.activity.events import LABELS, ActivityEvent, EventType, check_event
from kioku.core.activity.jsonl import day_file_name
from kioku.core.inject import neutralise
from kioku.core.tokens import TokenCounter
from kioku.errors import ValidationError
from kioku.records import Record

__all__ = [
    "DEFAULT_BUDGET_TOKENS",
    "DM_GAP",
    "LOG_DIR",
    "MAX_TEXT_CHARS",
    "MIN_TOKENS_HEARTBEAT",
    "TOPIC_CHARS",
    "PrimedActivity",
    "format_for_priming",
]

#: The spec's budget for the recent-activity channel of priming.
DEFAULT_BUDGET_TOKENS: Final = 1300
#: The least a heartbeat gets, whatever budget is asked for.
MIN_TOKENS_HEARTBEAT: Final = 400
#: Text longer than this is cut, and points to its source.
MAX_TEXT_CHARS: Final = 200
#: A DM group without a summary takes this much of its first message as its topic.
TOPIC_CHARS: Final = 40
#: The longest pause within one DM conversation.
DM_GAP: Final = timedelta(minutes=30)
#: The folder of the day files, as pointers name it.
LOG_DIR: Final = "activity_log"

_Kind = Literal["dm", "hb", "cron", "single"]
_DM: Final = frozenset({EventType.DM_SENT, EventType.DM_RECEIVED})
_INDENT: Final = "  "


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PrimedActivity(Record):
    """The formatted recent activity.

    ``text`` has no trailing line feed and is empty when nothing fits; ``tokens`` is its count
    by the counter used, never more than ``budget`` (the budget in force: raised to the
    heartbeat minimum for a heartbeat). ``shown`` holds the positions in the input of the
    events in the text, in the order shown; ``omitted`` the others (left out for the budget,
    or invalid), in input order.
    """

    text: str
    tokens: int
    budget: int
    shown: tuple[int, ...]
    omitted: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _Entry:
    index: int
    event: ActivityEvent
    line: int | None
    day: str


@dataclass(frozen=True, slots=True)
class _Block:
    kind: _Kind
    entries: tuple[_Entry, ...]


def _peer(event: ActivityEvent) -> str:
    return event.to if event.type is EventType.DM_SENT else event.from_


def _kind_of(event: ActivityEvent) -> _Kind:
    if event.type in _DM and _peer(event):
        return "dm"
    if event.type is EventType.HEARTBEAT_START:
        return "hb"
    if event.type is EventType.CRON_EXECUTED and event.task:
        return "cron"
    return "single"


def _continues(kind: _Kind, run: Sequence[_Entry], entry: _Entry) -> bool:
    """Whether ``entry`` joins the group ``run`` of ``kind`` it directly follows."""
    first, last, event = run[0].event, run[-1].event, entry.event
    if entry.day != run[0].day:
        return False
    if kind == "dm":
        return event.type in _DM and _peer(event) == _peer(first) and event.ts - last.ts <= DM_GAP
    if kind == "hb":
        return len(run) == 1 and event.type is EventType.HEARTBEAT_END
    if kind == "cron":
        return event.type is EventType.CRON_EXECUTED and event.task == first.task
    return False


def _group(entries: Sequence[_Entry]) -> list[_Block]:
    blocks: list[_Block] = []
    run: list[_Entry] = []
    kind: _Kind = "single"
    for entry in entries:
        if run and _continues(kind, run, entry):
            run.append(entry)
            continue
        if run:
            blocks.append(_Block(kind if len(run) > 1 else "single", tuple(run)))
        run, kind = [entry], _kind_of(entry.event)
    if run:
        blocks.append(_Block(kind if len(run) > 1 else "single", tuple(run)))
    return blocks


def _clock(moment: datetime) -> str:
    return f"{moment.hour:02d}:{moment.minute:02d}"


def _stamp(moment: datetime, now: datetime, *, dated: bool = False) -> str:
    """``HH:MM`` on ``now``'s clock, with the date when it is another day (or ``dated``)."""
    local = moment.astimezone(now.tzinfo)
    if local.date() == now.date() and not dated:
        return _clock(local)
    if local.year == now.year:
        return f"{local.month:02d}-{local.day:02d} {_clock(local)}"
    return f"{local.date().isoformat()} {_clock(local)}"


def _span(first: datetime, last: datetime, now: datetime) -> str:
    start = _stamp(first, now)
    same_day = first.astimezone(now.tzinfo).date() == last.astimezone(now.tzinfo).date()
    end = _clock(last.astimezone(now.tzinfo)) if same_day else _stamp(last, now, dated=True)
    return f"{start}-{end}"


def _cut(text: str, limit: int = MAX_TEXT_CHARS) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[:limit].rstrip() + "…", True


def _body(event: ActivityEvent) -> str:
    """What the event says, on one line: its content, else its summary, else a fallback."""
    text = neutralise(event.content) or neutralise(event.summary)
    if text:
        return text
    if event.type is EventType.HEARTBEAT_START:
        return "start"
    if event.type is EventType.HEARTBEAT_END:
        return "end"
    return neutralise(", ".join(event.memory_ids))


_QUALIFIER: Final[Mapping[EventType, str]] = {
    EventType.MESSAGE_RECEIVED: "from_",
    EventType.RESPONSE_SENT: "to",
    EventType.DM_SENT: "to",
    EventType.DM_RECEIVED: "from_",
    EventType.CHANNEL_POST: "channel",
    EventType.CHANNEL_READ: "channel",
    EventType.HUMAN_NOTIFY: "via",
    EventType.TOOL_USE: "tool",
    EventType.CRON_EXECUTED: "task",
}


def _exit(code: int | None) -> str:
    return "?" if code is None else str(code)


def _pointer(entries: Sequence[_Entry]) -> str:
    known = sorted(entry.line for entry in entries if entry.line is not None)
    ref = f"{LOG_DIR}/{entries[0].day}"
    if known:
        ref += f"#L{known[0]}" if known[0] == known[-1] else f"#L{known[0]}-{known[-1]}"
    return f"-> {ref}"


def _single(entry: _Entry, now: datetime) -> str:
    event = entry.event
    text, cut = _cut(_body(event))
    if event.type is EventType.CRON_EXECUTED:
        text = f"exit={_exit(event.exit_code)} {text}".rstrip()
    line = f"[{_stamp(event.ts, now)}] {LABELS[event.type]}"
    attribute = _QUALIFIER.get(event.type)
    name = neutralise(getattr(event, attribute)) if attribute else ""
    if name:
        line += f" {name}:" if text else f" {name}"
    if text:
        line += f" {text}"
    if cut:
        line += f" ({_pointer((entry,))})"
    return line


def _dm_lines(entries: Sequence[_Entry], now: datetime, keep: int) -> list[str]:
    shown = entries[len(entries) - keep :]
    topic = next((s for e in entries if (s := neutralise(e.event.summary))), "")
    if not topic:
        topic = _cut(neutralise(entries[0].event.content), TOPIC_CHARS)[0]
    header = f"[{_span(shown[0].event.ts, shown[-1].event.ts, now)}] DM"
    header += f" {neutralise(_peer(entries[0].event))}"
    if topic:
        header += f": {_cut(topic)[0]}"
    if keep < len(entries):
        header += f" (+{len(entries) - keep} earlier)"
    lines = [header]
    for entry in shown:
        child = f"{_INDENT}[{_stamp(entry.event.ts, now)}] {LABELS[entry.event.type]}"
        text = _cut(_body(entry.event))[0]
        lines.append(f"{child} {text}" if text else child)
    lines.append(f"{_INDENT}{_pointer(entries)}")
    return lines


def _hb_line(entries: Sequence[_Entry], now: datetime) -> str:
    events = [entry.event for entry in reversed(entries)]
    summary = next((s for e in events if (s := neutralise(e.summary))), "")
    summary = summary or next((s for e in events if (s := neutralise(e.content))), "")
    line = f"[{_span(events[-1].ts, events[0].ts, now)}] HB"
    if summary:
        line += f": {_cut(summary)[0]}"
    return f"{line} {_pointer(entries)}"


def _cron_line(entries: Sequence[_Entry], now: datetime) -> str:
    first, last = entries[0].event, entries[-1].event
    failed = sum(1 for entry in entries if entry.event.exit_code not in (None, 0))
    runs = f"x{len(entries)}, {failed} failed" if failed else f"x{len(entries)}"
    return (
        f"[{_span(first.ts, last.ts, now)}] CRON {neutralise(first.task)}: "
        f"exit={_exit(last.exit_code)} ({runs}) {_pointer(entries)}"
    )


def _variants(block: _Block, now: datetime) -> Iterator[tuple[str, tuple[_Entry, ...]]]:
    """The ways to show ``block``, longest first, each with the entries it shows."""
    entries = block.entries
    if block.kind == "dm":
        for keep in range(len(entries), 0, -1):
            yield "\n".join(_dm_lines(entries, now, keep)), entries[len(entries) - keep :]
    elif block.kind == "hb":
        yield _hb_line(entries, now), entries
    elif block.kind == "cron":
        yield _cron_line(entries, now), entries
    else:
        yield "\n".join(_single(entry, now) for entry in entries), entries


def _select(
    blocks: Sequence[_Block], budget: int, counter: TokenCounter, now: datetime
) -> list[tuple[str, tuple[_Entry, ...]]]:
    """The blocks shown, newest first: each whole or (a DM group) its newest part."""
    picked: list[tuple[str, tuple[_Entry, ...]]] = []
    used = 0
    newline = counter.count("\n")
    for block in reversed(blocks):
        fitted = None
        for text, entries in _variants(block, now):
            cost = counter.count(text) + (newline if picked else 0)
            if used + cost <= budget:
                fitted, used = (text, entries), used + cost
                break
        if fitted is None:
            break
        picked.append(fitted)
        if len(fitted[1]) < len(block.entries):
            break  # anything older would leave a gap
    return picked


def _prepare(
    events: Sequence[ActivityEvent], line_numbers: Mapping[int, int] | None
) -> list[_Entry]:
    entries: list[_Entry] = []
    lines = line_numbers or {}
    for index, event in enumerate(events):
        try:
            clean = check_event(event)
        except ValidationError:
            continue
        entries.append(_Entry(index, clean, lines.get(index), day_file_name(clean)))
    entries.sort(key=lambda entry: (entry.event.ts, entry.index))
    return entries


def _check_arguments(
    budget_tokens: int,
    min_tokens_heartbeat: int,
    now: datetime,
    line_numbers: Mapping[int, int] | None,
) -> None:
    for field, value in (
        ("budget_tokens", budget_tokens),
        ("min_tokens_heartbeat", min_tokens_heartbeat),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValidationError(field, value, "an integer of at least 0")
    if not isinstance(now, datetime) or now.utcoffset() is None:
        raise ValidationError("now", now, "a timezone-aware datetime")
    for index, line in (line_numbers or {}).items():
        if isinstance(line, bool) or not isinstance(line, int) or line < 1:
            raise ValidationError(f"line_numbers[{index}]", line, "a line number of at least 1")


def format_for_priming(
    events: Sequence[ActivityEvent],
    budget_tokens: int,
    counter: TokenCounter,
    *,
    now: datetime,
    min_tokens_heartbeat: int = MIN_TOKENS_HEARTBEAT,
    heartbeat: bool = False,
    line_numbers: Mapping[int, int] | None = None,
) -> PrimedActivity:
    """The recent activity of ``events`` as text within ``budget_tokens`` (see the module
    docstring for the format and the rules).

    ``events`` may come in any order. ``now`` (timezone-aware) sets the clock the times are
    shown on and which day counts as today. With ``heartbeat`` the budget is at least
    ``min_tokens_heartbeat``. ``line_numbers`` maps a position in ``events`` to the event's
    1-based line in its day file, for the pointers. Raises
    :class:`~kioku.errors.ValidationError` for a negative budget, a naive ``now`` or a line
    number below 1; never for the events themselves.
    """
    _check_arguments(budget_tokens, min_tokens_heartbeat, now, line_numbers)
    budget = max(budget_tokens, min_tokens_heartbeat) if heartbeat else budget_tokens
    picked = _select(_group(_prepare(events, line_numbers)), budget, counter, now)
    text, tokens = "", 0
    while picked:
        text = "\n".join(part for part, _ in reversed(picked))
        tokens = counter.count(text)
        if tokens <= budget:
            break
        picked.pop()  # the oldest block goes first
        text, tokens = "", 0
    shown = tuple(entry.index for _, entries in reversed(picked) for entry in entries)
    chosen = set(shown)
    omitted = tuple(index for index in range(len(events)) if index not in chosen)
    return PrimedActivity(text=text, tokens=tokens, budget=budget, shown=shown, omitted=omitted)
