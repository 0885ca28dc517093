"""Working memory: keeping a conversation history within a token budget (spec 002, spec 003 §3).

Pure core, no I/O: token counting (:mod:`.tokens`), importance scoring (:mod:`.importance`),
staged pruning with notices and summaries (:mod:`.prune`) and the end-of-thread rules of
short-term memory (:mod:`.threads`). The service layer feeds it messages and a summarizer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

# Names are loaded from their module on first use (PEP 562): a process that needs only the
# token counter (priming, in a hook) does not pay for pruning and thread rules.
if TYPE_CHECKING:
    from kioku.core.context.importance import ImportanceConfig, importance, score_all
    from kioku.core.context.messages import Message, messages_from_json
    from kioku.core.context.prune import (
        PRESETS,
        ContextPolicy,
        Gap,
        PrunePlan,
        PruneStats,
        Stage,
        assemble,
        gap_text,
        merge_notices,
        notice,
        notice_count,
        plan_prune,
        policy_preset,
        prune,
        stage_for,
        summary_message,
    )
    from kioku.core.context.threads import ThreadEnd, ThreadPolicy, thread_end, topic_change
    from kioku.core.context.tokens import (
        MESSAGE_OVERHEAD,
        EstimateCounter,
        TokenCounter,
        make_counter,
        message_tokens,
    )

_MODULES: Final[dict[str, str]] = {
    "ContextPolicy": "kioku.core.context.prune",
    "EstimateCounter": "kioku.core.context.tokens",
    "Gap": "kioku.core.context.prune",
    "ImportanceConfig": "kioku.core.context.importance",
    "MESSAGE_OVERHEAD": "kioku.core.context.tokens",
    "Message": "kioku.core.context.messages",
    "PRESETS": "kioku.core.context.prune",
    "PrunePlan": "kioku.core.context.prune",
    "PruneStats": "kioku.core.context.prune",
    "Stage": "kioku.core.context.prune",
    "ThreadEnd": "kioku.core.context.threads",
    "ThreadPolicy": "kioku.core.context.threads",
    "TokenCounter": "kioku.core.context.tokens",
    "assemble": "kioku.core.context.prune",
    "gap_text": "kioku.core.context.prune",
    "importance": "kioku.core.context.importance",
    "make_counter": "kioku.core.context.tokens",
    "merge_notices": "kioku.core.context.prune",
    "message_tokens": "kioku.core.context.tokens",
    "messages_from_json": "kioku.core.context.messages",
    "notice": "kioku.core.context.prune",
    "notice_count": "kioku.core.context.prune",
    "plan_prune": "kioku.core.context.prune",
    "policy_preset": "kioku.core.context.prune",
    "prune": "kioku.core.context.prune",
    "score_all": "kioku.core.context.importance",
    "stage_for": "kioku.core.context.prune",
    "summary_message": "kioku.core.context.prune",
    "thread_end": "kioku.core.context.threads",
    "topic_change": "kioku.core.context.threads",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "MESSAGE_OVERHEAD",
    "PRESETS",
    "ContextPolicy",
    "EstimateCounter",
    "Gap",
    "ImportanceConfig",
    "Message",
    "PrunePlan",
    "PruneStats",
    "Stage",
    "ThreadEnd",
    "ThreadPolicy",
    "TokenCounter",
    "assemble",
    "gap_text",
    "importance",
    "make_counter",
    "merge_notices",
    "message_tokens",
    "messages_from_json",
    "notice",
    "notice_count",
    "plan_prune",
    "policy_preset",
    "prune",
    "score_all",
    "stage_for",
    "summary_message",
    "thread_end",
    "topic_change",
]
