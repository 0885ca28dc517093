"""Sharing a message's recall budget among the priming channels (spec 001, 自動想起).

Spec 001 recalls through four channels, each with its own token budget: A sender profile
(500), B recent activity (1300), C related knowledge (700), D skills and procedures (200).
kioku adds E, its episodic recall of spec 000 (800). The message type sets the total
(:data:`kioku.core.priming.message_type.TYPE_BUDGETS`), which is usually smaller than the
3500 tokens the channels could fill, so :func:`allocate` shares it out:

* each channel's limit is its spec budget, or less when the caller says it wants less (it
  has little to show);
* tokens are handed out one at a time, each to the channel with the highest priority
  ``cap / (given + ½)`` among those still below their limit (the Sainte-Laguë rule, ties to
  the channel listed first). This gives integer shares in proportion to the caps; a channel
  that reaches its limit stops taking tokens, so its surplus flows to the others in
  proportion to their caps, which is also in proportion to what they still lack;
* it stops at the total or when every channel has its limit, whichever comes first.

Because the allocation for a total extends the allocation for any smaller total, more budget
never gives any channel less. :func:`fit_lines` then fills one channel's share with lines.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from kioku.core.tokens import TokenCounter
from kioku.errors import ValidationError

__all__ = ["CHANNEL_BUDGETS", "Channel", "allocate", "fit_lines"]


class Channel(StrEnum):
    """The recall channels of priming, A–D of spec 001 and kioku's episodes (E)."""

    SENDER_PROFILE = "sender_profile"
    RECENT_ACTIVITY = "recent_activity"
    RELATED_KNOWLEDGE = "related_knowledge"
    PROCEDURES = "procedures"
    EPISODES = "episodes"

    @property
    def letter(self) -> str:
        """The channel's letter: A–D as in spec 001, E for episodes."""
        return "ABCDE"[list(Channel).index(self)]


#: Each channel's most tokens (spec 001's table; E is kioku's).
CHANNEL_BUDGETS: Final[Mapping[Channel, int]] = MappingProxyType(
    {
        Channel.SENDER_PROFILE: 500,
        Channel.RECENT_ACTIVITY: 1300,
        Channel.RELATED_KNOWLEDGE: 700,
        Channel.PROCEDURES: 200,
        Channel.EPISODES: 800,
    }
)


def _count(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValidationError(field, value, "an integer of 0 or more")
    return value


def allocate(total: int, wanted: Mapping[Channel, int] | None = None) -> dict[Channel, int]:
    """Tokens per channel (every channel present, in :class:`Channel` order) out of ``total``.

    ``wanted`` says how many tokens a channel could use at most; a channel missing from it
    wants its full budget. No channel gets more than its budget or what it wants, and the
    sum is ``min(total, sum of the limits)`` (see the module docstring for who gets what).
    """
    _count("total", total)
    wanted = wanted or {}
    for channel, want in wanted.items():
        if channel not in CHANNEL_BUDGETS:
            allowed = ", ".join(c.value for c in Channel)
            raise ValidationError("channel", channel, f"one of {allowed}")
        _count(f"wanted[{channel}]", want)
    limits = {c: min(cap, wanted.get(c, cap)) for c, cap in CHANNEL_BUDGETS.items()}
    given = dict.fromkeys(CHANNEL_BUDGETS, 0)
    remaining = min(total, sum(limits.values()))
    if remaining == sum(limits.values()):
        return limits
    order = {c: i for i, c in enumerate(CHANNEL_BUDGETS)}
    # A max-heap by priority cap / (given + 0.5); equal priorities go to the earlier channel.
    heap = [(-2.0 * CHANNEL_BUDGETS[c], order[c], c) for c in CHANNEL_BUDGETS if limits[c] > 0]
    heapq.heapify(heap)
    while remaining and heap:
        _, rank, channel = heapq.heappop(heap)
        given[channel] += 1
        remaining -= 1
        if given[channel] < limits[channel]:
            priority = CHANNEL_BUDGETS[channel] / (given[channel] + 0.5)
            heapq.heappush(heap, (-priority, rank, channel))
    return given


def fit_lines(lines: Sequence[str], budget: int, counter: TokenCounter) -> tuple[list[str], int]:
    """The lines that fit ``budget`` tokens, in order, and how many were skipped.

    Each line costs ``counter.count(line)``; the caller joins the kept lines. A line that does
    not fit in what is left is skipped and the next ones are still tried, so a long line
    does not crowd out shorter ones after it. The kept lines never cost more than ``budget``.
    """
    left = _count("budget", budget)
    kept: list[str] = []
    for line in lines:
        cost = counter.count(line)
        if cost <= left:
            kept.append(line)
            left -= cost
    return kept, len(lines) - len(kept)
