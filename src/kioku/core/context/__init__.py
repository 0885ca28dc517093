"""Working memory: keeping a conversation history within a token budget (spec 002, spec 003 §3).

Pure core, no I/O: token counting (:mod:`.tokens`), importance scoring (:mod:`.importance`),
staged pruning with notices and summaries (:mod:`.prune`) and the end-of-thread rules of
short-term memory (:mod:`.threads`). The service layer feeds it messages and a summarizer.
"""

from __future__ import annotations

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
