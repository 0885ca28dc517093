"""Validation of a raw configuration: every rule has a failing case with a clear message."""

from __future__ import annotations

from typing import Any

import pytest

from kioku.config import Config, config_to_dict, validate_config
from kioku.config.schema import CategoryRange
from kioku.errors import ConfigError

SOURCE = "file:/home/u/.kioku/config.toml"


def fail(raw: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        validate_config(raw, lambda key: SOURCE)
    return info.value


def one(section: str, key: str, value: object) -> dict[str, Any]:
    return {section: {key: value}}


def cat(name: str, **bounds: object) -> dict[str, Any]:
    return {"retention": {"decay_by_category": {name: bounds}}}


def nest(dotted: str, value: object) -> dict[str, Any]:
    """``nest("a.b.c", 1)`` is ``{"a": {"b": {"c": 1}}}``."""
    raw: Any = value
    for part in reversed(dotted.split(".")):
        raw = {part: raw}
    return dict(raw)


# (dotted key, bad value, the value as shown, a fragment of what is allowed)
RANGE_CASES: list[tuple[str, object, str, str]] = [
    ("retention.base_decay_coefficient", 1.0, "1.0", "0 < value < 1"),
    ("retention.base_decay_coefficient", 0, "0", "0 < value < 1"),
    ("retention.max_decay_coefficient", 1, "1", "0 < value < 1"),
    ("retention.decay_by_category.work.max", 1.0, "1.0", "0 < value < 1"),
    ("retention.decay_by_category.work.min", 0.0, "0.0", "0 < value < 1"),
    ("retention.decay_by_category.work.min", -0.5, "-0.5", "0 < value < 1"),
    ("archive.revival_decay_per_day", 1.5, "1.5", "0 < value <= 1"),
    ("archive.revival_decay_per_day", 0, "0", "0 < value <= 1"),
    ("levels.level1_threshold", 101, "101", "0 <= value <= 100"),
    ("levels.level2_threshold", 100.5, "100.5", "0 <= value <= 100"),
    ("levels.level3_threshold", -1, "-1", "0 <= value <= 100"),
    ("compression.level1_ratio", 1.2, "1.2", "0 <= value <= 1"),
    ("compression.level2_ratio", 2, "2", "0 <= value <= 1"),
    ("compression.level3_ratio", -0.35, "-0.35", "0 <= value <= 1"),
    ("batch.max_auto_catch_up_days", 0, "0", "an integer with 1 <= value <= 3660"),
    ("batch.max_auto_catch_up_days", 3661, "3661", "1 <= value <= 3660"),
    ("compression.schedule_hour", 24, "24", "an integer with 0 <= value <= 23"),
    ("compression.schedule_hour", -1, "-1", "0 <= value <= 23"),
    ("compression.interval_hours", 0, "0", "value > 0"),
    ("compression.ratio_min_memories", -1, "-1", "value >= 0"),
    ("recall.decay_coefficient_boost", 1, "1", "0 <= value < 1"),
    ("recall.decay_coefficient_boost", -0.01, "-0.01", "0 <= value < 1"),
    ("recall.memory_days_reduction", 1.01, "1.01", "0 <= value <= 1"),
    ("recall.recall_count_weight", -0.1, "-0.1", "value >= 0"),
    ("resonance.valence_match_bonus", -1, "-1", "value >= 0"),
    ("resonance.arousal_proximity_bonus", -1, "-1", "value >= 0"),
    ("resonance.tags_overlap_weight", -1, "-1", "value >= 0"),
    ("resonance.priority_weight_alpha", -1, "-1", "value >= 0"),
    ("mood.window", 0, "0", "1 <= value <= 1000"),
    ("mood.max_negative_share", 1.5, "1.5", "0 <= value <= 1"),
    ("mood.high_intensity", 101, "101", "0 <= value <= 100"),
    ("mood.shift_strength", -0.5, "-0.5", "0 <= value <= 5"),
    ("relations.auto_link_similarity_threshold", 1.5, "1.5", "-1 <= value <= 1"),
    ("relations.score_proximity_threshold", -2, "-2", "value >= 0"),
    ("relations.max_relations_per_memory", -1, "-1", "an integer with value >= 0"),
    ("relations.relation_traversal_depth", 11, "11", "0 <= value <= 10"),
    ("retrieval.top_k", 0, "0", "an integer with 1 <= value <= 1000"),
    ("retrieval.top_k", 1001, "1001", "1 <= value <= 1000"),
    ("retrieval.relevance_threshold", -1, "-1", "value >= 0"),
    ("archive.revival_min_margin", -3, "-3", "value >= 0"),
    ("archive.retention_days", -1, "-1", "value >= 0"),
    ("archive.delete_max_intensity", 101, "101", "0 <= value <= 100"),
    ("archive.delete_condition_mode", "XOR", "'XOR'", "'AND', 'OR'"),
    ("protection.max_protected_memories", -1, "-1", "value >= 0"),
    ("embedding.dimensions", 0, "0", "1 <= value <= 65536"),
    ("embedding.dimensions", 65537, "65537", "1 <= value <= 65536"),
    ("llm.temperature", 2.5, "2.5", "0 <= value <= 2"),
    ("llm.max_tokens", 0, "0", "value >= 1"),
    ("llm.timeout_seconds", 0, "0", "0 < value <= 3600"),
    ("retrieval.budget_chars", 100, "100", "200 <= value <= 100000"),
    ("retrieval.vector_weight", 1.5, "1.5", "0 <= value <= 1"),
    ("retrieval.lexical_weight", -0.1, "-0.1", "0 <= value <= 1"),
    ("retrieval.retention_exponent", 3, "3", "0 <= value <= 2"),
    ("retrieval.recency_weight", 11, "11", "0 <= value <= 10"),
    ("retrieval.temporal_recency_weight", -1, "-1", "0 <= value <= 10"),
    ("retrieval.recency_half_life_days", 0, "0", "0 < value <= 36500"),
    ("retrieval.category_weight", 20, "20", "0 <= value <= 10"),
    ("retrieval.candidates", 0, "0", "1 <= value <= 10000"),
    ("retrieval.context_weight", 1.5, "1.5", "0 <= value <= 1"),
    ("retrieval.min_relevance", 2, "2", "0 <= value <= 1"),
    ("retrieval.ann_min_vectors", -1, "-1", "value >= 0"),
    ("llm.max_retries", 11, "11", "0 <= value <= 10"),
    ("llm.input_price_per_mtok", -1, "-1", "value >= 0"),
    ("llm.output_price_per_mtok", -0.5, "-0.5", "value >= 0"),
    ("embedding.price_per_mtok", -1, "-1", "value >= 0"),
    ("store.backend", "mysql", "'mysql'", "'sqlite', 'postgres'"),
    ("store.busy_timeout_ms", 600_001, "600001", "0 <= value <= 600000"),
    ("store.hnsw_m", 1, "1", "2 <= value <= 100"),
    ("store.hnsw_ef_construction", 1001, "1001", "4 <= value <= 1000"),
    ("store.hnsw_ef_search", -1, "-1", "0 <= value <= 1000"),
    ("context.preset", "lavish", "'lavish'", "'balanced', 'conservative', 'aggressive'"),
    ("context.max_tokens", -1, "-1", "0 <= value <= 10000000"),
    ("context.min_gap_for_summary", 0, "0", "1 <= value <= 1000"),
    ("context.keep_last", 101, "101", "0 <= value <= 100"),
    ("context.thread_similarity", 1.2, "1.2", "0 <= value <= 1"),
    ("context.thread_idle_minutes", -1, "-1", "0 <= value <= 10080"),
    ("context.max_turns", 0, "0", "1 <= value <= 1000"),
    ("context.long_term_share", 0, "0", "0 < value <= 1"),
    ("context.midterm_hot_hours", 0, "0", "1 <= value <= 168"),
    ("context.midterm_days", 6, "6", "7 <= value <= 30"),
    ("consolidation.weekly_day", 8, "8", "1 <= value <= 7"),
    ("consolidation.monthly_day", 29, "29", "1 <= value <= 28"),
    ("consolidation.procedure_similarity", 1.5, "1.5", "0 <= value <= 1"),
    ("consolidation.duplicate_similarity", -0.1, "-0.1", "0 <= value <= 1"),
    ("consolidation.max_knowledge_per_episode", 101, "101", "0 <= value <= 100"),
    ("lifecycle.capacity", -1, "-1", "0 <= value <= 100000000"),
    ("context.important_keywords", "error", "'error'", "a list of up to 1000 non-empty strings"),
    ("context.importance_markers", ["[TASK", ""], "['[TASK', '']", "non-empty strings"),
    ("context.topic_phrases", [3], "[3]", "non-empty strings"),
    ("context.tokenizer", 7, "7", "a string"),
    ("scope.user_id", "", "''", "a non-empty string"),
    ("scope.agent_id", "  ", "'  '", "a non-empty string"),
    ("embedding.provider", "", "''", "a non-empty string"),
    ("embedding.model", "", "''", "a non-empty string"),
    ("llm.provider", "", "''", "a non-empty string"),
    ("llm.model", "", "''", "a non-empty string"),
    ("version", 1, "1", "a string"),
    ("llm.temperature", float("nan"), "nan", "0 <= value <= 2"),
    ("retrieval.relevance_threshold", float("inf"), "inf", "value >= 0"),
]


@pytest.mark.parametrize(("key", "value", "shown", "allowed"), RANGE_CASES)
def test_out_of_range_values_name_key_value_source_and_range(
    key: str, value: object, shown: str, allowed: str
) -> None:
    err = fail(nest(key, value))
    assert err.key == key
    assert err.source == SOURCE
    assert allowed in err.allowed
    assert f"config key {key} = {shown} (from {SOURCE}) is invalid: expected" in str(err)


# -- types -------------------------------------------------------------------------------------

TYPE_CASES: list[tuple[str, object, str]] = [
    ("retrieval.top_k", True, "boolean"),
    ("levels.level1_threshold", False, "boolean"),
    ("retrieval.top_k", "5", "string"),
    ("llm.temperature", "0.5", "string"),
    ("retrieval.top_k", 2.5, "fraction"),
    ("archive.retention_days", 30.1, "fraction"),
    ("compression.schedule_hour", 3.5, "fraction"),
    ("relations.max_relations_per_memory", 1.5, "fraction"),
    ("relations.relation_traversal_depth", 0.5, "fraction"),
    ("archive.delete_max_intensity", 20.5, "fraction"),
    ("protection.max_protected_memories", 1.5, "fraction"),
    ("embedding.dimensions", 256.5, "fraction"),
    ("llm.max_tokens", 100.5, "fraction"),
    ("store.busy_timeout_ms", 1.5, "fraction"),
    ("retrieval.top_k", [5], "list"),
    ("relations.enable_auto_linking", 1, ""),
    ("archive.auto_delete_enabled", "yes", ""),
    ("llm.model", 3, ""),
]


@pytest.mark.parametrize(("key", "value", "hint"), TYPE_CASES)
def test_wrong_types_are_rejected(key: str, value: object, hint: str) -> None:
    err = fail(nest(key, value))
    assert err.key == key
    assert hint in str(err)


def test_bool_is_never_a_number_message() -> None:
    err = fail(one("retrieval", "top_k", True))
    assert "retrieval.top_k = True" in str(err)
    assert "an integer with 1 <= value <= 1000" in str(err)


def test_ints_are_accepted_for_floats_and_integral_floats_for_ints() -> None:
    config = validate_config(
        {
            "levels": {"level1_threshold": 60},
            "compression": {"interval_hours": 12, "schedule_hour": 4.0},
            "retrieval": {"top_k": 7.0},
            "llm": {"temperature": 1},
        }
    )
    assert config.levels.level1_threshold == 60.0
    assert isinstance(config.levels.level1_threshold, float)
    assert isinstance(config.compression.interval_hours, float)
    assert config.compression.schedule_hour == 4
    assert isinstance(config.compression.schedule_hour, int)
    assert config.retrieval.top_k == 7
    assert isinstance(config.retrieval.top_k, int)
    assert config.llm.temperature == 1.0


def test_bounds_are_inclusive_where_allowed() -> None:
    config = validate_config(
        {
            "archive": {"revival_decay_per_day": 1, "delete_max_intensity": 0},
            "compression": {"schedule_hour": 23},
            "relations": {"auto_link_similarity_threshold": -1, "relation_traversal_depth": 10},
            "retrieval": {"top_k": 1000},
            "embedding": {"dimensions": 65536},
            "llm": {"temperature": 2, "max_tokens": 1},
            "store": {"busy_timeout_ms": 0},
            "recall": {"memory_days_reduction": 1, "decay_coefficient_boost": 0},
        }
    )
    assert config.archive.revival_decay_per_day == 1.0
    assert config.relations.relation_traversal_depth == 10


def test_choices_accept_any_case_and_store_the_canonical_form() -> None:
    config = validate_config(
        {"archive": {"delete_condition_mode": "or"}, "store": {"backend": "SQLite"}}
    )
    assert config.archive.delete_condition_mode == "OR"
    assert config.store.backend == "sqlite"


def test_postgres_backend_needs_a_url() -> None:
    err = fail(one("store", "backend", "postgres"))
    assert err.key == "store.backend"
    assert "store.url" in str(err)


def test_store_url_selects_postgres() -> None:
    config = validate_config({"store": {"url": "postgresql://kioku:pw@db.example/kioku"}})
    assert config.store.backend == "postgres"
    assert config.store.schema == "kioku"


def test_invalid_store_url_masks_the_password() -> None:
    err = fail(one("store", "url", "mysql://kioku:hunter2@db.example/kioku"))
    assert err.key == "store.url"
    assert "hunter2" not in str(err)
    assert "postgresql://" in str(err)


@pytest.mark.parametrize(
    ("store", "allowed"),
    [
        ({"hnsw_ef_construction": 50}, "at least twice store.hnsw_m (32)"),
        ({"hnsw_m": 64, "hnsw_ef_construction": 100}, "at least twice store.hnsw_m (64)"),
        ({"hnsw_m": 100, "hnsw_ef_construction": 199}, "at least twice store.hnsw_m (100)"),
    ],
)
def test_hnsw_ef_construction_must_be_twice_m(store: dict[str, int], allowed: str) -> None:
    """pgvector refuses an ef_construction below 2 x m."""
    err = fail({"store": store})
    assert err.key == "store.hnsw_ef_construction"
    assert allowed in err.allowed


def test_the_largest_hnsw_m_fits_the_default_ef_construction() -> None:
    config = validate_config({"store": {"hnsw_m": 100, "hnsw_ef_construction": 200}})
    assert (config.store.hnsw_m, config.store.hnsw_ef_construction) == (100, 200)
    assert validate_config({"store": {"hnsw_m": 100}}).store.hnsw_ef_construction == 200


def test_store_schema_must_be_an_identifier() -> None:
    assert fail(one("store", "schema", "Bad-Name")).key == "store.schema"


# -- unknown keys ------------------------------------------------------------------------------


def test_unknown_key_suggests_the_closest_known_key() -> None:
    err = fail(one("levels", "level1_treshold", 60))
    assert err.key == "levels.level1_treshold"
    assert "did you mean levels.level1_threshold?" in str(err)
    assert "level2_threshold" in err.allowed  # lists the section's keys


def test_unknown_key_in_the_wrong_section_points_to_the_right_one() -> None:
    assert "did you mean retrieval.top_k?" in str(fail(one("levels", "top_k", 3)))
    assert "did you mean retrieval.top_k?" in str(fail({"top_k": 3}))


def test_unknown_section_suggests_the_closest_section() -> None:
    err = fail({"retension": {"base_decay_coefficient": 0.99}})
    assert err.key == "retension"
    assert "did you mean retention?" in str(err)


def test_unknown_key_without_any_close_match() -> None:
    err = fail(one("llm", "zzzzzz", 1))
    assert err.key == "llm.zzzzzz"
    assert "lists every key" in str(err)


def test_section_must_be_a_table() -> None:
    err = fail({"levels": 50})
    assert err.key == "levels"
    assert "a table" in err.allowed


def test_keys_are_case_sensitive_but_suggested() -> None:
    assert "did you mean retrieval.top_k?" in str(fail(one("retrieval", "TOP_K", 3)))


# -- categories --------------------------------------------------------------------------------


def test_a_new_category_can_be_added() -> None:
    config = validate_config(cat("hobby", min=0.75, max=0.9))
    ranges = config.retention.decay_by_category
    assert ranges["hobby"] == CategoryRange(0.75, 0.9)
    assert list(ranges) == ["casual", "work", "decision", "emotional", "hobby"]
    assert config.categories[-1] == "hobby"


def test_one_bound_of_an_existing_category_merges_with_the_default() -> None:
    ranges = validate_config(cat("work", max=0.95)).retention.decay_by_category
    assert ranges["work"] == CategoryRange(0.85, 0.95)
    assert ranges["casual"] == Config().retention.decay_by_category["casual"]


def test_a_new_category_needs_both_bounds() -> None:
    err = fail(cat("hobby", min=0.8))
    assert err.key == "retention.decay_by_category.hobby"
    assert "both min and max" in err.allowed


@pytest.mark.parametrize("name", ["Work", "1st", "has-dash", "a" * 33, "", "日本"])
def test_category_names_are_checked(name: str) -> None:
    err = fail(cat(name, min=0.5, max=0.6))
    assert err.key == f"retention.decay_by_category.{name}"
    assert "^[a-z][a-z0-9_]{0,31}$" in err.allowed


def test_category_unknown_bound_suggests_min_or_max() -> None:
    err = fail(cat("work", mx=0.9))
    assert err.key == "retention.decay_by_category.work.mx"
    assert "did you mean retention.decay_by_category.work.max?" in str(err)


def test_category_entry_must_be_a_table() -> None:
    assert fail({"retention": {"decay_by_category": {"work": 0.9}}}).key == (
        "retention.decay_by_category.work"
    )
    assert fail({"retention": {"decay_by_category": [1]}}).key == "retention.decay_by_category"


def test_category_min_above_max() -> None:
    err = fail(cat("work", max=0.8))  # default min is 0.85
    assert err.key == "retention.decay_by_category.work.max"
    assert "at least retention.decay_by_category.work.min (0.85)" in err.allowed
    err = fail(cat("work", min=0.95))  # default max is 0.92
    assert err.key == "retention.decay_by_category.work.min"
    assert "at most retention.decay_by_category.work.max (0.92)" in err.allowed


def test_category_max_above_max_decay_coefficient() -> None:
    err = fail(cat("work", max=0.9995))
    assert err.key == "retention.decay_by_category.work.max"
    assert err.value == 0.9995
    assert "at most retention.max_decay_coefficient (0.999)" in err.allowed


def test_lowering_max_decay_coefficient_below_a_default_category_max() -> None:
    err = fail(one("retention", "max_decay_coefficient", 0.95))
    assert err.key == "retention.max_decay_coefficient"
    assert "at least retention.decay_by_category.emotional.max (0.999)" in err.allowed


# -- levels and ratios ---------------------------------------------------------------------------


def test_levels_not_descending_blames_the_key_that_was_set() -> None:
    err = fail(one("levels", "level2_threshold", 60))
    assert err.key == "levels.level2_threshold"
    assert err.value == 60
    assert "below levels.level1_threshold (50.0)" in err.allowed
    assert "level thresholds must descend" in str(err)
    err = fail(one("levels", "level1_threshold", 10))
    assert err.key == "levels.level1_threshold"
    assert "above levels.level2_threshold (20.0)" in err.allowed


def test_equal_levels_are_not_descending() -> None:
    err = fail({"levels": {"level2_threshold": 5, "level3_threshold": 5}})
    assert err.key == "levels.level3_threshold"
    assert "must descend" in str(err)


def test_level_shares_over_one_name_all_three_and_the_sum() -> None:
    err = fail(one("compression", "level3_ratio", 0.65))
    message = str(err)
    for name in ("level1_ratio", "level2_ratio", "level3_ratio"):
        assert name in err.key
        assert name in err.allowed
    assert "0.15 + level2_ratio 0.3 + level3_ratio 0.65 = 1.1" in message
    assert err.value == pytest.approx(1.1)
    assert err.source == SOURCE
    assert "compression.level3_ratio = 0.55" in message  # a fix that works


def test_ratios_within_tolerance_are_accepted() -> None:
    config = validate_config(
        {"compression": {"level1_ratio": 0.2, "level2_ratio": 0.3, "level3_ratio": 0.5 + 5e-7}}
    )
    assert config.compression.level3_ratio == pytest.approx(0.5, abs=1e-6)


def test_delete_ratio_still_loads_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    # The spec's 消去 20 % is the remainder of the three shares, not a setting of its own.
    with caplog.at_level("WARNING"):
        config = validate_config(
            {"compression": {"delete_ratio": 0.2, "level1_ratio": 0.1}},
            lambda key: "file:/tmp/deprecated-key-test.toml",
        )
    assert config.compression.level1_ratio == 0.1
    assert not hasattr(config.compression, "delete_ratio")
    [record] = [r for r in caplog.records if "delete_ratio" in r.getMessage()]
    message = record.getMessage()
    assert "\n" not in message
    assert "ignored" in message
    assert "file:/tmp/deprecated-key-test.toml" in message


def test_error_without_source_of_has_no_source() -> None:
    with pytest.raises(ConfigError) as info:
        validate_config(one("retrieval", "top_k", 0))
    assert info.value.source is None
    assert "(from" not in str(info.value)


def test_validated_config_is_frozen() -> None:
    config = validate_config({})
    with pytest.raises(AttributeError):
        config.levels.level1_threshold = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.retention.decay_by_category["x"] = CategoryRange(0.1, 0.2)  # type: ignore[index]


def test_raw_input_is_not_modified() -> None:
    raw = {"retention": {"decay_by_category": {"work": {"max": 0.9}}}}
    validate_config(raw)
    assert raw == {"retention": {"decay_by_category": {"work": {"max": 0.9}}}}


def test_every_numeric_key_has_a_failing_range_case() -> None:
    numeric = set()
    for section, table in config_to_dict(Config()).items():
        if not isinstance(table, dict):
            continue
        for key, value in table.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                numeric.add(f"{section}.{key}")
    covered = {key for key, *_ in RANGE_CASES}
    assert numeric - covered == set()
