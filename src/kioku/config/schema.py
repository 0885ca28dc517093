"""The configuration as frozen data: every section and key of spec 000 (設定ファイル構造).

Defaults follow the spec, with two deliberate departures so kioku runs offline out of the
box: ``embedding.provider`` and ``llm.provider`` default to ``"offline"`` (the spec's
defaults, OpenAI embeddings and an Anthropic model, need an API key and the network).
The sections ``store`` and ``scope`` are kioku additions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from kioku.records import Record

__all__ = [
    "ArchiveConfig",
    "BatchConfig",
    "CategoryRange",
    "CompressionConfig",
    "Config",
    "ConsolidationConfig",
    "EmbeddingConfig",
    "IngestConfig",
    "LevelsConfig",
    "LifecycleConfig",
    "LlmConfig",
    "MoodConfig",
    "PrimingConfig",
    "ProtectionConfig",
    "RecallConfig",
    "RelationsConfig",
    "ResonanceConfig",
    "RetentionConfig",
    "RetrievalConfig",
    "ScopeConfig",
    "StoreConfig",
]


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class CategoryRange(Record):
    """The decay-coefficient range of one category; intensity places a memory inside it."""

    min: float
    max: float


def _default_categories() -> MappingProxyType[str, CategoryRange]:
    return MappingProxyType(
        {
            "casual": CategoryRange(0.70, 0.80),
            "work": CategoryRange(0.85, 0.92),
            "decision": CategoryRange(0.93, 0.97),
            "emotional": CategoryRange(0.98, 0.999),
        }
    )


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RetentionConfig(Record):
    """``[retention]``: how fast memories fade (spec 000 記憶の減衰)."""

    base_decay_coefficient: float = 0.995
    decay_by_category: MappingProxyType[str, CategoryRange] = field(
        default_factory=_default_categories
    )
    max_decay_coefficient: float = 0.999


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class LevelsConfig(Record):
    """``[levels]``: the scores below which a memory moves to level 2, 3 and the archive."""

    level1_threshold: float = 50.0
    level2_threshold: float = 20.0
    level3_threshold: float = 5.0


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RecallConfig(Record):
    """``[recall]``: how much a recall strengthens a memory."""

    decay_coefficient_boost: float = 0.02
    #: The share of ``memory_days`` removed by a recall (0.5 halves it).
    memory_days_reduction: float = 0.5
    recall_count_weight: float = 0.1


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ResonanceConfig(Record):
    """``[resonance]``: emotional resonance between the session's mood and a memory."""

    valence_match_bonus: float = 0.3
    arousal_proximity_bonus: float = 0.2
    tags_overlap_weight: float = 0.5
    priority_weight_alpha: float = 0.3


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class CompressionConfig(Record):
    """``[compression]``: the daily batch's level ratios and schedule."""

    level1_ratio: float = 0.15
    level2_ratio: float = 0.30
    level3_ratio: float = 0.35
    # The spec's ``delete_ratio`` (消去 20 %) is not a setting: it is what the three shares
    # leave, the archive's share; a file that still sets it loads with a warning.
    schedule_hour: int = 3
    interval_hours: float = 24.0
    #: Ratios are enforced only in a scope holding at least this many non-protected memories
    #: (archived ones included); below it only the score thresholds move memories down.
    ratio_min_memories: int = 100
    #: Spec 003 §8.1: keep each episode's original text when compression first rewrites it,
    #: compressed and searchable only on purpose (policy B, true); false keeps only the
    #: summaries (policy A).
    keep_originals: bool = True


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class BatchConfig(Record):
    """``[batch]``: limits of the automatic batch (a kioku addition)."""

    #: An automatic batch (the scheduler's or the overdue fallback's) applies at most this many
    #: days after the last batch day; more due days are left to `kioku batch`, with a warning
    #: (a clock set years ahead would otherwise archive the whole store at once).
    max_auto_catch_up_days: int = 31


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RelationsConfig(Record):
    """``[relations]``: automatic links between memories and how far recall follows them."""

    score_proximity_threshold: float = 5.0
    auto_link_similarity_threshold: float = 0.85
    max_relations_per_memory: int = 10
    relation_traversal_depth: int = 1
    enable_auto_linking: bool = True


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class RetrievalConfig(Record):
    """``[retrieval]``: how many memories recall returns, and how it ranks them."""

    top_k: int = 5
    relevance_threshold: float = 5.0
    #: Named weights (kioku.core.presets); a weight key below set to anything but its
    #: default overrides the preset's value.
    preset: Literal["balanced", "spec", "lexical"] = "balanced"
    #: Most characters the injected <memories> block may take.
    budget_chars: int = 4000
    vector_weight: float = 0.3
    lexical_weight: float = 0.7
    retention_exponent: float = 0.25
    recency_weight: float = 0.05
    temporal_recency_weight: float = 0.3
    recency_half_life_days: float = 30.0
    category_weight: float = 0.05
    candidates: int = 100
    #: Relevance the strongest matches lend to the turns around them in their session.
    context_weight: float = 0.25
    #: A memory qualifies for recall only when it holds at least this share of the query's
    #: terms, weighted by how rare each is (its coverage); mood, recency and retention never
    #: qualify one. The turns around a qualified memory and its relations come along.
    min_relevance: float = 0.1
    #: When the prompt names people, places or things (capitalised words, acronyms, Japanese
    #: proper nouns) and no memory of the owner mentions any of them, nothing qualifies.
    require_known_names: bool = True
    #: SQLite store: past this many vectors of a model, queries with many non-zero
    #: components are answered from an HNSW graph (the ``ann`` extra, usearch) and its
    #: candidates scored exactly; 0: always the exact scan (docs/architecture.md).
    ann_min_vectors: int = 200_000


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ArchiveConfig(Record):
    """``[archive]``: recall from the archive, revival, and the optional deletion of old entries."""

    enable_archive_recall: bool = True
    revival_decay_per_day: float = 0.995
    revival_min_margin: float = 3.0
    auto_delete_enabled: bool = False
    retention_days: int = 365
    delete_require_zero_recall: bool = True
    delete_max_intensity: int = 20
    delete_condition_mode: Literal["AND", "OR"] = "AND"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ProtectionConfig(Record):
    """``[protection]``: the cap on memories protected from forgetting."""

    max_protected_memories: int = 50


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class EmbeddingConfig(Record):
    """``[embedding]``: the embedder (``offline`` by default) and its connection."""

    provider: str = "offline"
    model: str = "default"
    dimensions: int = 384
    base_url: str = ""
    #: The key itself (prefer api_key_env); never printed.
    api_key: str = ""
    #: Environment variable holding the key; empty means the provider's usual one.
    api_key_env: str = ""
    #: USD per million input tokens, for ``kioku stats --cost``.
    price_per_mtok: float = 0.02


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class LlmConfig(Record):
    """``[llm]``: the analyzer (``offline`` by default) and its connection."""

    provider: str = "offline"
    model: str = "default"
    base_url: str = ""
    temperature: float = 0.0
    max_tokens: int = 1024
    #: The key itself (prefer api_key_env); never printed.
    api_key: str = ""
    #: Environment variable holding the key; empty means the provider's usual one.
    api_key_env: str = ""
    #: Seconds to wait for one answer before giving up on it.
    timeout_seconds: float = 30.0
    #: Retries after a rate limit (429), a server error (5xx) or a dropped connection.
    max_retries: int = 3
    #: USD per million tokens, for ``kioku stats --cost`` (the spec's Claude Haiku 4.5 prices).
    input_price_per_mtok: float = 1.0
    output_price_per_mtok: float = 5.0


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ContextConfig(Record):
    """Working memory (a kioku addition): spec 002's pruning to a token budget and spec 003's
    conversation threads. Empty lists and 0 mean the built-in defaults."""

    preset: Literal["balanced", "conservative", "aggressive"] = "balanced"
    #: Token budget of the window; 0 = the preset's (8,000 / 6,000 / 12,000).
    max_tokens: int = 0
    #: "estimate", "tiktoken:<encoding>" or "hf:<path to tokenizer.json>".
    tokenizer: str = "estimate"
    summaries: bool = True
    min_gap_for_summary: int = 5
    keep_last: int = 2
    #: Words that make a message important (spec 002 §4.5); empty = the built-in list.
    important_keywords: tuple[str, ...] = ()
    #: Markers of important system or task lines ("[SYSTEM:", "[TASK", ...); empty = built-in.
    importance_markers: tuple[str, ...] = ()
    thread_similarity: float = 0.75
    thread_idle_minutes: float = 10.0
    max_turns: int = 12
    #: Phrases that open a new topic (spec 003 3.2); empty = the built-in list.
    topic_phrases: tuple[str, ...] = ()
    #: Share of a thread's turns, the most salient, written to long-term memory when the
    #: thread ends (spec 003 §7: 0.7); the rest stay in the mid-term tier. 1.0 keeps all.
    long_term_share: float = 0.7
    #: Hours a thread's mid-term entry stays hot after its last turn (spec 003 §2: 24 h).
    midterm_hot_hours: int = 24
    #: Days a thread's mid-term entry is kept after its last turn (spec 003 §2: 7-30 days).
    midterm_days: int = 7


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class StoreConfig(Record):
    """Where memories live: ``$KIOKU_HOME/memories.db`` (SQLite), or the PostgreSQL server
    ``url`` names (docs/postgres.md). A non-empty ``url`` selects PostgreSQL."""

    backend: Literal["sqlite", "postgres"] = "sqlite"
    busy_timeout_ms: int = 30_000
    #: ``postgresql://user:password@host:port/dbname``; empty: the SQLite file in the home.
    url: str = ""
    #: A streaming replica (hot standby) of that server for searches: lexical and vector
    #: search only, outside transactions; the memories found are read from ``url``, and
    #: every write goes there. Empty: everything on ``url`` (docs/postgres.md).
    read_url: str = ""
    #: The PostgreSQL schema holding kioku's tables (created when missing).
    schema: str = "kioku"
    #: PostgreSQL only: enable row-level security on the tables with a user_id, and bind
    #: the HTTP server's per-owner connections to their owner (docs/postgres.md).
    row_security: bool = False
    #: PostgreSQL only: the HNSW graph of each embedding model's vectors (pgvector), built
    #: with ``hnsw_m`` links per node and a build candidate list of ``hnsw_ef_construction``
    #: (at least twice ``hnsw_m``). A new value applies to indexes built afterwards.
    hnsw_m: int = 32
    hnsw_ef_construction: int = 200
    #: The candidate list of a search walk; 0 chooses it from the table's size and the
    #: index's ``m`` (docs/postgres.md).
    hnsw_ef_search: int = 0
    #: What a new HNSW index holds: "halfvec" (half precision, pgvector 0.7 or newer: smaller
    #: and faster, the results ranked again by exact distance, some recall lost), "vector", or
    #: "auto" (vector up to 2,000 values, halfvec past that where pgvector has it).
    hnsw_type: Literal["auto", "vector", "halfvec"] = "auto"
    #: A recall's vector search runs on a thread and connection of its own beside its lexical
    #: search (PostgreSQL: a second pooled connection, docs/postgres.md; SQLite: the store's
    #: second connection); false runs them one after the other.
    parallel_search: bool = True


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ScopeConfig(Record):
    """The owner of memories when a caller does not name one (the single-user case)."""

    user_id: str = "default"
    agent_id: str = "default"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PrimingConfig(Record):
    """``[priming]``: automatic recall before every prompt (spec 001)."""

    #: Spread activation over relations too: related knowledge gains 0.5 × its personalised
    #: PageRank from the knowledge the message matched (spec 001's optional graph spreading).
    graph_spreading: bool = False


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class ConsolidationConfig(Record):
    """``[consolidation]``: what runs while the store sleeps (spec 001 記憶の固定化)."""

    #: Run the due daily, weekly and monthly consolidation after every nightly batch.
    enabled: bool = True
    #: The NLI model of validation: "none" (the LLM alone, or the lexical check offline),
    #: "lexical", or "transformers" / "transformers:MODEL" (the `nli` extra).
    nli: str = "none"
    #: ISO weekday (1 Monday ... 7 Sunday) whose batch day runs the weekly integration.
    weekly_day: int = 7
    #: Day of the month whose batch day runs the monthly forgetting (1-28).
    monthly_day: int = 1
    #: Spec 001 (RAG重複チェック): no new procedure when one this similar exists.
    procedure_similarity: float = 0.85
    #: Weekly integration merges knowledge items at least this similar.
    duplicate_similarity: float = 0.9
    #: Knowledge items lifted from one episode at most (offline extraction).
    max_knowledge_per_episode: int = 3


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class LifecycleConfig(Record):
    """``[lifecycle]``: spec 004's lifecycle policy, a named preset."""

    #: "retention": spec 000's retention alone moves episodes down (importance is shown);
    #: "importance": episodes whose importance falls below 0.3 are compressed a level too;
    #: "capacity": "importance", and at 90 % of ``capacity`` the least important 10 % are.
    policy: Literal["retention", "importance", "capacity"] = "retention"
    #: Spec 004's per-owner limit of stored episodes (the capacity policy).
    capacity: int = 10_000


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class MoodConfig(Record):
    """``[mood]``: safeguards of the mood balance (spec 000, 感情価による想起非対称性)."""

    #: The limiter: of the last ``window`` memories primed or recalled for an owner, at most
    #: ``max_negative_share × window`` may be negative with an intensity of at least
    #: ``high_intensity``; more such candidates are ranked below the selection.
    limiter: bool = True
    window: int = 10
    max_negative_share: float = 0.3
    #: The intensity from which a memory counts as high (the offline analyzer files a non-task
    #: turn of 61 or more as emotional).
    high_intensity: int = 61
    #: The mood shift (気分転換モード): in a negative session mood, resonance rewards positive
    #: memories instead of negative ones, by ``shift_strength`` × the valence bonus.
    shift: bool = False
    shift_strength: float = 1.0


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IngestConfig(Record):
    """``[ingest]``: importing history (a kioku addition)."""

    #: Processes preparing an import's turns (offline analyzer and embedder), the importing
    #: one included: "auto" (one per CPU for 200 turns or more, 400 where workers are not
    #: forked), a number, 0 or 1 (it alone).
    workers: int | Literal["auto"] = "auto"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class Config(Record):
    """The whole configuration: one frozen section per table of ``config.toml``."""

    version: str = "1.0.0"
    retention: RetentionConfig = field(default_factory=RetentionConfig)
    levels: LevelsConfig = field(default_factory=LevelsConfig)
    recall: RecallConfig = field(default_factory=RecallConfig)
    resonance: ResonanceConfig = field(default_factory=ResonanceConfig)
    mood: MoodConfig = field(default_factory=MoodConfig)
    compression: CompressionConfig = field(default_factory=CompressionConfig)
    batch: BatchConfig = field(default_factory=BatchConfig)
    relations: RelationsConfig = field(default_factory=RelationsConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    archive: ArchiveConfig = field(default_factory=ArchiveConfig)
    protection: ProtectionConfig = field(default_factory=ProtectionConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    llm: LlmConfig = field(default_factory=LlmConfig)
    context: ContextConfig = field(default_factory=ContextConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    scope: ScopeConfig = field(default_factory=ScopeConfig)
    priming: PrimingConfig = field(default_factory=PrimingConfig)
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    lifecycle: LifecycleConfig = field(default_factory=LifecycleConfig)
    ingest: IngestConfig = field(default_factory=IngestConfig)

    @property
    def categories(self) -> tuple[str, ...]:
        """The categories a memory may have: the keys of ``retention.decay_by_category``."""
        return tuple(self.retention.decay_by_category)
