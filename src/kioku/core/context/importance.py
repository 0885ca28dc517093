"""How important a message of the conversation is, 0..1 (spec 002 §2.3 and §4, 重要度スコアリング).

``importance = recency * 0.3 + role * 0.3 + content * 0.4`` (the weights are configurable):

* recency (§4.2): ``index / (total - 1)``, 0 for the oldest message, 1 for the newest;
* role (§4.3): user 1.0, assistant 0.5, system 0.3, tool 0.5, any other role 0.5;
* content (§4.4 and §6.1), summed and capped at 1:

  - +0.3 when an important keyword occurs (case-insensitive substring): errors and failures,
    successes and completions, plans, tasks, approvals and denials, warnings — in English and
    in Japanese (エラー, 失敗, 成功, 完了, 警告, タスク, 計画, 承認, 拒否, …);
  - +0.25 for a tool result: role ``tool``, or a ``[Tool:`` marker in the text;
  - +0.2 for a marker of an important system or user message (``[SYSTEM:``, ``[User``, ``[TASK``);
  - +0.3 for an approval request (``duck_call``, ``approval``, ``承認``);
  - times 0.7 when the text is shorter than 20 characters (``ok``, ``thanks``).

The spec lists success keywords separately at +0.2 in §4.4 and merges them into the +0.3
keyword list in §6.1; kioku follows §6.1, the implementation the spec settles on.

Scoring runs on every message when a history is pruned, so the word lists are lowered once per
configuration, and an ASCII text is searched for the ASCII words only (a Japanese keyword
cannot occur in it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import Final

from kioku.core.context.messages import Message
from kioku.errors import ValidationError

__all__ = [
    "DEFAULT_APPROVAL_WORDS",
    "DEFAULT_KEYWORDS",
    "DEFAULT_MARKERS",
    "DEFAULT_ROLE_SCORES",
    "ImportanceConfig",
    "importance",
    "score_all",
]

#: Role scores of spec 002 §4.3; ``tool`` is scored like ``assistant``.
DEFAULT_ROLE_SCORES: Final[tuple[tuple[str, float], ...]] = (
    ("user", 1.0),
    ("assistant", 0.5),
    ("system", 0.3),
    ("tool", 0.5),
)

#: Spec 002 §6.1 ``important_keywords`` plus ``exception`` (§4.4), with Japanese equivalents.
DEFAULT_KEYWORDS: Final[tuple[str, ...]] = (
    "error",
    "exception",
    "failed",
    "success",
    "completed",
    "plan",
    "task",
    "duck_call",
    "approval",
    "denied",
    "warning",
    "エラー",
    "例外",
    "失敗",
    "成功",
    "完了",
    "警告",
    "タスク",
    "計画",
    "承認",
    "拒否",
    "却下",
)

#: Markers of important system or user messages (spec 002 §6.1), matched case-sensitively.
DEFAULT_MARKERS: Final[tuple[str, ...]] = ("[SYSTEM:", "[User", "[TASK")

#: Approval requests (spec 002 §4.4 ``duck_call`` / ``approval``), case-insensitive.
DEFAULT_APPROVAL_WORDS: Final[tuple[str, ...]] = ("duck_call", "approval", "承認")

_KEYWORD_BONUS: Final = 0.3
_TOOL_BONUS: Final = 0.25
_MARKER_BONUS: Final = 0.2
_APPROVAL_BONUS: Final = 0.3
_TOOL_ROLE: Final = "tool"


@dataclass(frozen=True, slots=True)
class ImportanceConfig:
    """Weights, scores and word lists of the importance score (spec 002 §4.5 ``ScoringConfig``)."""

    recency_weight: float = 0.3
    role_weight: float = 0.3
    content_weight: float = 0.4
    role_scores: tuple[tuple[str, float], ...] = DEFAULT_ROLE_SCORES
    default_role_score: float = 0.5
    keywords: tuple[str, ...] = DEFAULT_KEYWORDS
    markers: tuple[str, ...] = DEFAULT_MARKERS
    tool_markers: tuple[str, ...] = ("[Tool:",)
    approval_words: tuple[str, ...] = DEFAULT_APPROVAL_WORDS
    min_content_length: int = 20
    short_content_penalty: float = 0.7

    def __post_init__(self) -> None:
        for name in ("recency_weight", "role_weight", "content_weight"):
            _check_unit(f"importance.{name}", getattr(self, name))
        _check_unit("importance.default_role_score", self.default_role_score)
        _check_unit("importance.short_content_penalty", self.short_content_penalty)
        for role, score in self.role_scores:
            _check_unit(f"importance.role_scores[{role!r}]", score)
        if (
            isinstance(self.min_content_length, bool)
            or not isinstance(self.min_content_length, int)
            or self.min_content_length < 0
        ):
            raise ValidationError(
                "importance.min_content_length",
                self.min_content_length,
                "an integer >= 0",
                hint="texts shorter than this many characters get the short-content penalty",
            )
        for f in fields(self):
            if f.name in ("keywords", "markers", "tool_markers", "approval_words"):
                words = getattr(self, f.name)
                if not isinstance(words, tuple) or not all(isinstance(w, str) and w for w in words):
                    raise ValidationError(
                        f"importance.{f.name}",
                        words,
                        "a tuple of non-empty strings",
                        hint="pass the words as a tuple, e.g. ('error', 'エラー')",
                    )


def _check_unit(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise ValidationError(name, value, "a number from 0 to 1", hint="use e.g. 0.3")


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A configuration's word lists, lowered and split by script, for fast matching."""

    roles: dict[str, float]
    ascii_keywords: tuple[str, ...]
    all_keywords: tuple[str, ...]
    ascii_approval: tuple[str, ...]
    all_approval: tuple[str, ...]
    markers: tuple[str, ...]
    tool_markers: tuple[str, ...]
    #: A character every marker contains (``[``), or "": a text without it has no marker.
    marker_char: str


@lru_cache(maxsize=32)
def _compile(config: ImportanceConfig) -> _Compiled:
    def split(words: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        lowered = tuple(dict.fromkeys(w.lower() for w in words))
        return tuple(w for w in lowered if w.isascii()), lowered

    ascii_keywords, all_keywords = split(config.keywords)
    ascii_approval, all_approval = split(config.approval_words)
    return _Compiled(
        roles=dict(config.role_scores),
        ascii_keywords=ascii_keywords,
        all_keywords=all_keywords,
        ascii_approval=ascii_approval,
        all_approval=all_approval,
        markers=config.markers,
        tool_markers=config.tool_markers,
        marker_char=_shared_char(config.markers + config.tool_markers),
    )


def _shared_char(words: tuple[str, ...]) -> str:
    """A non-alphanumeric character all ``words`` contain, or "" (a cheap prefilter)."""
    if not words:
        return ""
    shared = set(words[0]).intersection(*words[1:])
    candidates = sorted(ch for ch in shared if not ch.isalnum())
    return candidates[0] if candidates else ""


def _content_score(role: str, content: str, config: ImportanceConfig, c: _Compiled) -> float:
    score = 0.0
    lowered = content.lower()
    if content.isascii():
        keywords, approval = c.ascii_keywords, c.ascii_approval
    else:  # mixed text ("Errorが出た") can hold keywords of both scripts
        keywords, approval = c.all_keywords, c.all_approval
    for word in keywords:
        if word in lowered:
            score += _KEYWORD_BONUS
            break
    if role == _TOOL_ROLE:
        score += _TOOL_BONUS
    if not c.marker_char or c.marker_char in content:
        if role != _TOOL_ROLE:
            for marker in c.tool_markers:
                if marker in content:
                    score += _TOOL_BONUS
                    break
        for marker in c.markers:
            if marker in content:
                score += _MARKER_BONUS
                break
    for word in approval:
        if word in lowered:
            score += _APPROVAL_BONUS
            break
    if len(content) < config.min_content_length:
        score *= config.short_content_penalty
    return score if score < 1.0 else 1.0


def importance(message: Message, index: int, total: int, config: ImportanceConfig) -> float:
    """The importance of ``message``, the ``index``-th of ``total`` messages, from 0 to 1."""
    c = _compile(config)
    recency = index / (total - 1) if total > 1 else 1.0
    role = c.roles.get(message.role, config.default_role_score)
    content = _content_score(message.role, message.content, config, c)
    total_score = (
        recency * config.recency_weight
        + role * config.role_weight
        + content * config.content_weight
    )
    return min(max(total_score, 0.0), 1.0)


def score_all(messages: Sequence[Message], config: ImportanceConfig) -> list[float]:
    """:func:`importance` of every message of a history, in order (the configuration's word
    lists are prepared once, and recency is one multiplication per message)."""
    c = _compile(config)
    total = len(messages)
    # recency * weight == index * (weight / (total - 1)); a lone message is the newest (1.0)
    recency_step = config.recency_weight / (total - 1) if total > 1 else 0.0
    recency_lone = config.recency_weight if total == 1 else 0.0
    role_weight, content_weight = config.role_weight, config.content_weight
    roles, default_role = c.roles, config.default_role_score
    scores: list[float] = []
    append = scores.append
    for i, message in enumerate(messages):
        role = message.role
        value = (
            i * recency_step
            + recency_lone
            + roles.get(role, default_role) * role_weight
            + _content_score(role, message.content, config, c) * content_weight
        )
        append(value if value < 1.0 else 1.0)
    return scores
