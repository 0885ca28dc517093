"""A working memory's settings: each one given, else from ``[context]`` of the configuration,
else the built-in default (see :class:`~.working_memory.WorkingMemory`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kioku.core.context import (
    ContextPolicy,
    ImportanceConfig,
    ThreadPolicy,
    TokenCounter,
    make_counter,
    policy_preset,
)
from kioku.errors import ValidationError

if TYPE_CHECKING:
    from kioku.config.schema import ContextConfig

__all__ = ["make_token_counter", "thread_policy", "window_policy"]


def _setting(value: Any, configured: Any, default: Any) -> Any:
    if value is not None:
        return value
    return configured if configured is not None else default


def window_policy(
    cfg: ContextConfig | None,
    max_tokens: int | None,
    preset: str | None,
    summaries: bool | None,
    keep_last: int | None,
) -> ContextPolicy:
    """The budget and pruning policy: ``preset`` with the settings that override it."""
    preset_name = _setting(preset, cfg.preset if cfg else None, "balanced")
    overrides: dict[str, Any] = {}
    budget = _setting(max_tokens, (cfg.max_tokens or None) if cfg else None, None)
    if budget is not None:
        overrides["max_tokens"] = budget
    overrides["summaries"] = bool(_setting(summaries, cfg.summaries if cfg else None, True))
    overrides["keep_last"] = _setting(keep_last, cfg.keep_last if cfg else None, 2)
    if cfg is not None:
        overrides["min_gap_for_summary"] = cfg.min_gap_for_summary
        importance: dict[str, Any] = {}
        if cfg.important_keywords:
            importance["keywords"] = tuple(cfg.important_keywords)
        if cfg.importance_markers:
            importance["markers"] = tuple(cfg.importance_markers)
        if importance:
            overrides["importance"] = ImportanceConfig(**importance)
    return policy_preset(preset_name, **overrides)


def make_token_counter(
    cfg: ContextConfig | None, tokenizer: str | TokenCounter | None
) -> TokenCounter:
    """The token counter ``tokenizer`` names (or is), else the configured one."""
    spec = _setting(tokenizer, cfg.tokenizer if cfg else None, "estimate")
    return make_counter(spec) if isinstance(spec, str) else spec


def thread_policy(
    cfg: ContextConfig | None,
    thread_similarity: float | None,
    thread_idle_minutes: float | None,
    max_turns: int | None,
    *,
    semantic: Callable[[], bool],
) -> ThreadPolicy:
    """When a thread ends (spec 003 §3). The similarity rule applies only when ``semantic()``
    says the embedder's vectors can tell topics apart."""
    similarity = float(_setting(thread_similarity, cfg.thread_similarity if cfg else None, 0.75))
    idle = float(_setting(thread_idle_minutes, cfg.thread_idle_minutes if cfg else None, 10))
    turns = int(_setting(max_turns, cfg.max_turns if cfg else None, 12))
    if not 0 <= similarity <= 1 or idle < 0 or turns < 1:
        raise ValidationError(
            "thread settings",
            (similarity, idle, turns),
            "thread_similarity 0-1, thread_idle_minutes >= 0, max_turns >= 1",
        )
    thread_kwargs: dict[str, Any] = {
        "similarity_threshold": similarity if similarity > 0 and semantic() else None,
        "idle_seconds": idle * 60 if idle > 0 else math.inf,
        "max_turns": turns,
    }
    if cfg is not None and cfg.topic_phrases:
        thread_kwargs["topic_phrases"] = tuple(cfg.topic_phrases)
    return ThreadPolicy(**thread_kwargs)
