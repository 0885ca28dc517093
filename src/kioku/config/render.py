"""Render a :class:`~kioku.config.schema.Config` as plain data or as a commented TOML file.

:func:`config_to_dict` gives the spec's JSON shape (``{"version": ..., "retention": {...}}``,
categories as ``{"min": ..., "max": ...}``), so ``json.dumps`` of it is a valid spec
``config.json``. :func:`config_to_toml` writes the same data as TOML with a one-line comment
above every key; :func:`default_config_toml` is that for the defaults.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from kioku.config.schema import CategoryRange, Config

__all__ = ["config_to_dict", "config_to_toml", "default_config_toml"]

_HEADER = """\
# kioku configuration. Every key is shown at its default: delete a line to keep the default.
# Defaults follow spec 000 (設定ファイル構造) except the embedding and llm providers: kioku
# defaults to the built-in "offline" ones (with their own model names and dimensions) so it
# works without an API key or network access. The spec's defaults are noted beside each key.
# Environment variables override this file: KIOKU_<SECTION>__<KEY>=value, for example
# KIOKU_LEVELS__LEVEL1_THRESHOLD=60 or KIOKU_RETENTION__DECAY_BY_CATEGORY__WORK__MAX=0.93.
"""

_SECTION_COMMENTS: dict[str, str] = {
    "retention": "How fast memories fade: retention_score = intensity × coefficient ^ memory_days.",
    "retention.decay_by_category": (
        "Coefficient range per category; intensity picks a point. Add: name = { min, max }."
    ),
    "levels": "Retention-score thresholds of the compression levels (must descend).",
    "recall": "Reinforcement when a memory is recalled.",
    "resonance": "Emotional resonance used to rank recalled memories.",
    "mood": "Safeguards of the mood balance: the negative limiter and the mood shift.",
    "compression": (
        "The nightly batch: most share of memories per level (the rest is the archive's) "
        "and timing."
    ),
    "batch": "Limits of the automatic batch (a kioku addition).",
    "relations": "Links between memories.",
    "retrieval": "What a recall returns.",
    "archive": "The archive below level 3: revival and (optional) permanent deletion.",
    "protection": "Memories the user protected from forgetting.",
    "embedding": "The embedding model used for similarity search.",
    "llm": "The model that analyses, summarises and compresses memories.",
    "store": "Where memories are kept (a kioku addition to the spec).",
    "scope": "The owner of memories when a caller names none (a kioku addition).",
    "context": "Working memory: a conversation kept within its token budget (a kioku addition).",
    "ingest": "Importing history (a kioku addition).",
}

_COMMENTS: dict[str, str] = {
    "version": "Version of this configuration format.",
    "retention.base_decay_coefficient": "Coefficient for a memory whose category has no range.",
    "retention.max_decay_coefficient": "Upper limit of any coefficient, also after recall boosts.",
    "retention.decay_by_category.casual": "Small talk fades fast.",
    "retention.decay_by_category.work": "Work matters for a while.",
    "retention.decay_by_category.decision": "Decisions are kept long.",
    "retention.decay_by_category.emotional": "Emotional moments almost never fade.",
    "levels.level1_threshold": "A memory scoring above this keeps its full text (level 1).",
    "levels.level2_threshold": "Above this (up to level1) it is a summary (level 2).",
    "levels.level3_threshold": "Above this (up to level2) it is keywords (level 3); "
    "at or below it the memory is archived.",
    "recall.decay_coefficient_boost": "Added to a memory's decay coefficient on each recall.",
    "recall.memory_days_reduction": "Share of memory_days removed by a recall (0.5 halves it).",
    "recall.recall_count_weight": "Priority factor per recall: 1 + weight × recall_count.",
    "resonance.valence_match_bonus": "Bonus when the emotional valence matches.",
    "resonance.arousal_proximity_bonus": "Largest bonus for close emotional arousal.",
    "resonance.tags_overlap_weight": "Weight of shared emotion tags.",
    "resonance.priority_weight_alpha": "Weight α of emotional resonance in the priority.",
    "mood.limiter": "Rank down negative high-intensity memories past their share in a row.",
    "mood.window": "How many memories primed or recalled in a row the limiter looks at.",
    "mood.max_negative_share": "Most share of them that may be negative and intense (0-1).",
    "mood.high_intensity": "Emotional intensity from which a negative memory counts (0-100).",
    "mood.shift": "In a negative mood, let resonance favour positive memories instead.",
    "mood.shift_strength": "How much of the valence bonus a positive memory gets then (0-5).",
    "compression.level1_ratio": "Target share of memories at level 1.",
    "compression.level2_ratio": "Target share of memories at level 2.",
    "compression.level3_ratio": "Target share of memories at level 3.",
    "compression.schedule_hour": "Local hour (0-23) at which the batch runs.",
    "compression.interval_hours": "Hours between two batch runs.",
    "compression.ratio_min_memories": (
        "Enforce the level ratios only from this many non-protected memories on (0: always)."
    ),
    "compression.keep_originals": (
        "Keep each episode's original text for deliberate search (policy B); false: summaries only."
    ),
    "batch.max_auto_catch_up_days": (
        "Most days a scheduled or automatic batch catches up (1-3660); run `kioku batch` for more."
    ),
    "relations.score_proximity_threshold": "Retention scores closer than this count as near.",
    "relations.auto_link_similarity_threshold": "Cosine similarity (-1..1) that links memories.",
    "relations.max_relations_per_memory": "Most relations one memory keeps.",
    "relations.relation_traversal_depth": "How many relation hops a recall follows (0-10).",
    "relations.enable_auto_linking": "Link similar memories automatically.",
    "retrieval.top_k": "Most memories a recall returns (1-1000).",
    "retrieval.relevance_threshold": "Relevance below which retrieval falls back to the archive.",
    "archive.enable_archive_recall": "Let a recall revive archived memories.",
    "archive.revival_decay_per_day": "Per-day factor on a revived memory's score (0 < x <= 1).",
    "archive.revival_min_margin": "A revived score is at least level3_threshold + this.",
    "archive.auto_delete_enabled": "Delete old archived memories permanently.",
    "archive.retention_days": "Days in the archive before a memory may be deleted.",
    "archive.delete_require_zero_recall": "Delete only memories never recalled.",
    "archive.delete_max_intensity": "Delete only memories at most this intense (0-100).",
    "archive.delete_condition_mode": 'Combine the delete conditions with "AND" or "OR".',
    "protection.max_protected_memories": "Most memories that can be protected at once.",
    "embedding.provider": 'kioku default "offline" (built in); the spec uses "openai".',
    "embedding.model": 'Model name; the spec uses "text-embedding-3-small".',
    "embedding.dimensions": "Vector size (1-65536); the spec uses 1536 with OpenAI.",
    "embedding.base_url": "Endpoint of an OpenAI-compatible server; empty for the default.",
    "embedding.api_key": "The API key itself; prefer api_key_env. Never printed by kioku.",
    "embedding.api_key_env": "Variable holding the key; empty: OPENAI_API_KEY.",
    "embedding.price_per_mtok": "USD per million tokens embedded, for `kioku stats --cost`.",
    "llm.provider": 'kioku default "offline" (built in, rule based); the spec uses "anthropic".',
    "llm.model": 'Model name; the spec uses "claude-3-5-haiku-20241022".',
    "llm.base_url": "Endpoint of an OpenAI-compatible server (Ollama, vLLM); empty for default.",
    "llm.temperature": "Sampling temperature (0-2); 0 is deterministic.",
    "llm.max_tokens": "Most tokens one model answer may use.",
    "retrieval.preset": 'Named recall weights: "balanced", "spec" (spec 000 exactly) or "lexical".',
    "retrieval.budget_chars": "Most characters the injected <memories> block may take.",
    "retrieval.vector_weight": "Share of vector similarity in relevance (with lexical_weight).",
    "retrieval.lexical_weight": "Share of lexical (BM25) match in relevance.",
    "retrieval.retention_exponent": "Retention enters as 100 × (score/100)^this; 1 = the spec.",
    "retrieval.recency_weight": "Recency bonus w × 0.5^(age/half-life), for every query.",
    "retrieval.temporal_recency_weight": "Extra recency bonus for 「前回」, 'last time'.",
    "retrieval.recency_half_life_days": "Days after which the recency bonus halves.",
    "retrieval.category_weight": "Bonus for the category of the session's last memory.",
    "retrieval.candidates": "Candidates taken from each of lexical and vector search.",
    "retrieval.context_weight": "Relevance a strong match lends to the turns around it (0-1).",
    "retrieval.min_relevance": "Share of the query's terms (rarity-weighted) a memory must hold.",
    "retrieval.require_known_names": "Recall nothing for a prompt naming only unknown names.",
    "retrieval.ann_min_vectors": "SQLite: vectors past which long queries use the HNSW graph "
    "of the ann extra (0: never).",
    "llm.api_key": "The API key itself; prefer api_key_env. Never printed by kioku.",
    "llm.api_key_env": "Variable holding the key; empty: ANTHROPIC_API_KEY or OPENAI_API_KEY.",
    "llm.timeout_seconds": "Seconds to wait for one answer before the offline analyzer stands in.",
    "llm.max_retries": "Retries after a rate limit (429), a server error or a dropped connection.",
    "llm.input_price_per_mtok": "USD per million input tokens, for `kioku stats --cost`.",
    "llm.output_price_per_mtok": "USD per million output tokens, for `kioku stats --cost`.",
    "store.busy_timeout_ms": "How long to wait for a locked database (0-600000 ms).",
    "store.backend": '"sqlite" (the file in the home), or "postgres" (set by a url).',
    "store.url": (
        "PostgreSQL server, postgresql://user:password@host:port/dbname "
        "(env KIOKU_STORE_URL); empty: SQLite."
    ),
    "store.read_url": (
        "Streaming replica of store.url for searches (env KIOKU_STORE_READ_URL); empty: none."
    ),
    "store.schema": "PostgreSQL schema holding kioku's tables (created when missing).",
    "store.row_security": "PostgreSQL: row-level security, each key's owner sees its rows only.",
    "store.hnsw_m": "PostgreSQL: links per node of each new HNSW index (2-100).",
    "store.hnsw_ef_construction": "PostgreSQL: build candidate list of a new HNSW index "
    "(4-1000, at least 2 x hnsw_m).",
    "store.hnsw_ef_search": "PostgreSQL: candidates of an HNSW search (1-1000; 0: by size).",
    "store.hnsw_type": 'PostgreSQL: a new HNSW index holds "vector", "halfvec" or "auto" '
    "(halfvec past 2,000 values).",
    "store.parallel_search": "A recall's lexical and vector searches at once, on two connections.",
    "context.preset": 'Pruning preset: "balanced", "conservative" or "aggressive" (spec 002).',
    "context.max_tokens": "Token budget of the window (0 = the preset's: 8000/6000/12000).",
    "context.tokenizer": 'Token counter: "estimate", "tiktoken:ENCODING" or "hf:PATH.json".',
    "context.summaries": "Summarise runs of removed messages (else only a notice).",
    "context.min_gap_for_summary": "Removed messages in a row that get a summary (1-1000).",
    "context.keep_last": "Newest messages never removed (0-100).",
    "context.important_keywords": "Words that make a message important ([] = built-in list).",
    "context.importance_markers": 'Markers of important lines, like "[TASK" ([] = built-in).',
    "context.thread_similarity": "A turn less similar than this ends the thread (0-1; 0 = off).",
    "context.thread_idle_minutes": "Minutes of silence that end a thread (0 = off).",
    "context.max_turns": "Turns a thread keeps before the oldest leaves (1-1000).",
    "context.topic_phrases": 'Phrases that start a new topic, like "by the way" ([] = built-in).',
    "context.long_term_share": "Most salient share of a thread's turns kept long-term (0-1].",
    "context.midterm_hot_hours": "Hours a thread's mid-term entry stays hot (1-168).",
    "context.midterm_days": "Days a thread's mid-term entry is kept (7-30).",
    "scope.user_id": "User that owns memories by default.",
    "scope.agent_id": "Agent that owns memories by default.",
    "priming.graph_spreading": "Spread priming's activation over relations (PageRank).",
    "consolidation.enabled": "Run due consolidation after every nightly batch (spec 001).",
    "consolidation.nli": 'Validation model: "none", "lexical" or "transformers[:MODEL]".',
    "consolidation.weekly_day": "ISO weekday of the weekly integration (1 Mon ... 7 Sun).",
    "consolidation.monthly_day": "Day of the month of the monthly forgetting (1-28).",
    "consolidation.procedure_similarity": "No new procedure when one this similar exists.",
    "consolidation.duplicate_similarity": "Weekly: merge knowledge at least this similar.",
    "consolidation.max_knowledge_per_episode": "Knowledge items lifted from one episode.",
    "lifecycle.policy": 'Spec 004 policy: "retention", "importance" or "capacity".',
    "lifecycle.capacity": "Stored episodes per owner before the capacity policy compresses.",
    "ingest.workers": 'Processes preparing an import\'s turns: "auto", a number (0 or 1: one).',
}


def config_to_dict(config: Config) -> dict[str, Any]:
    """The configuration as plain nested dicts in the spec's JSON shape."""
    out: dict[str, Any] = {"version": config.version}
    for f in fields(config):
        if f.name == "version":
            continue
        section = getattr(config, f.name)
        table: dict[str, Any] = {}
        for key in fields(section):
            value = getattr(section, key.name)
            if key.name == "decay_by_category":
                value = {n: _range(r) for n, r in value.items()}
            elif isinstance(value, tuple):
                value = list(value)
            table[key.name] = value
        out[f.name] = table
    return out


def _range(r: CategoryRange) -> dict[str, float]:
    return {"min": r.min, "max": r.max}


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot render {value!r} as TOML")


_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " " or ch == "\x7f":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _comment(text: str | None) -> list[str]:
    return [f"# {text}"] if text else []


def config_to_toml(config: Config, *, comments: bool = True) -> str:
    """The configuration as a TOML document that loads back to ``config``."""

    def note(key: str, table: dict[str, str]) -> list[str]:
        return _comment(table.get(key)) if comments else []

    data = config_to_dict(config)
    lines: list[str] = [_HEADER] if comments else []
    lines += [*note("version", _COMMENTS), f"version = {_toml_value(data.pop('version'))}"]
    for section, table in data.items():
        lines += ["", *note(section, _SECTION_COMMENTS), f"[{section}]"]
        nested: list[tuple[str, dict[str, Any]]] = []
        for key, value in table.items():
            if isinstance(value, dict):
                nested.append((key, value))
                continue
            lines += [*note(f"{section}.{key}", _COMMENTS), f"{key} = {_toml_value(value)}"]
        for key, entries in nested:
            name = f"{section}.{key}"
            lines += ["", *note(name, _SECTION_COMMENTS), f"[{name}]"]
            for entry, value in entries.items():
                lines += [*note(f"{name}.{entry}", _COMMENTS), f"{entry} = {_toml_value(value)}"]
    return "\n".join(lines) + "\n"


def default_config_toml() -> str:
    """A complete, commented ``config.toml`` with every key at its default."""
    return config_to_toml(Config())
