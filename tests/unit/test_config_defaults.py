"""Defaults of the configuration, and rendering it back out (dict, JSON, TOML)."""

from __future__ import annotations

import ast
import json
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kioku.config
from kioku.config import (
    Config,
    config_to_dict,
    config_to_toml,
    default_config_toml,
    validate_config,
)
from kioku.config.schema import CategoryRange

# The table 設定項目一覧 of spec 000, key by key.
SPEC_DEFAULTS: list[tuple[str, object]] = [
    ("retention.base_decay_coefficient", 0.995),
    ("retention.max_decay_coefficient", 0.999),
    ("levels.level1_threshold", 50),
    ("levels.level2_threshold", 20),
    ("levels.level3_threshold", 5),
    ("recall.decay_coefficient_boost", 0.02),
    ("recall.memory_days_reduction", 0.5),
    ("recall.recall_count_weight", 0.1),
    ("resonance.valence_match_bonus", 0.3),
    ("resonance.arousal_proximity_bonus", 0.2),
    ("resonance.tags_overlap_weight", 0.5),
    ("resonance.priority_weight_alpha", 0.3),
    ("compression.level1_ratio", 0.15),
    ("compression.level2_ratio", 0.30),
    ("compression.level3_ratio", 0.35),
    ("batch.max_auto_catch_up_days", 31),
    ("compression.schedule_hour", 3),
    ("compression.interval_hours", 24),
    ("relations.score_proximity_threshold", 5.0),
    ("relations.auto_link_similarity_threshold", 0.85),
    ("relations.max_relations_per_memory", 10),
    ("relations.relation_traversal_depth", 1),
    ("relations.enable_auto_linking", True),
    ("retrieval.top_k", 5),
    ("retrieval.relevance_threshold", 5.0),
    ("archive.enable_archive_recall", True),
    ("archive.revival_decay_per_day", 0.995),
    ("archive.revival_min_margin", 3.0),
    ("archive.auto_delete_enabled", False),
    ("archive.retention_days", 365),
    ("archive.delete_require_zero_recall", True),
    ("archive.delete_max_intensity", 20),
    ("archive.delete_condition_mode", "AND"),
    ("protection.max_protected_memories", 50),
    ("llm.temperature", 0),
    ("llm.max_tokens", 1024),
]

# Where kioku departs from the spec on purpose: offline providers need no key or network.
OFFLINE_DEPARTURES: list[tuple[str, object, object]] = [
    ("embedding.provider", "offline", "openai"),
    ("embedding.model", "default", "text-embedding-3-small"),
    ("embedding.dimensions", 384, 1536),
    ("llm.provider", "offline", "anthropic"),
    ("llm.model", "default", "claude-3-5-haiku-20241022"),
]


def get(config: Config, dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        node = getattr(node, part)
    return node


@pytest.mark.parametrize(("key", "expected"), SPEC_DEFAULTS)
def test_defaults_equal_the_spec_table(key: str, expected: object) -> None:
    value = get(Config(), key)
    assert value == expected
    assert type(value) is type(expected) or isinstance(expected, int | float)


def test_default_categories_equal_the_spec() -> None:
    assert dict(Config().retention.decay_by_category) == {
        "casual": CategoryRange(0.70, 0.80),
        "work": CategoryRange(0.85, 0.92),
        "decision": CategoryRange(0.93, 0.97),
        "emotional": CategoryRange(0.98, 0.999),
    }
    assert Config().version == "1.0.0"


@pytest.mark.parametrize(("key", "ours", "spec"), OFFLINE_DEPARTURES)
def test_offline_provider_defaults_depart_from_the_spec(
    key: str, ours: object, spec: object
) -> None:
    assert get(Config(), key) == ours != spec
    assert str(spec) in default_config_toml(), "the rendered file should name the spec's default"


def test_validating_nothing_gives_the_defaults() -> None:
    assert validate_config({}) == Config()


def test_default_toml_loads_back_to_exactly_the_defaults() -> None:
    text = default_config_toml()
    assert validate_config(tomllib.loads(text)) == Config()
    assert config_to_dict(validate_config(tomllib.loads(text))) == config_to_dict(Config())


def test_default_toml_has_every_key_with_a_comment() -> None:
    lines = default_config_toml().splitlines()
    assignments = [i for i, line in enumerate(lines) if " = " in line and not line.startswith("#")]
    leaves = flat_keys(config_to_dict(Config()))
    category_leaves = [k for k in leaves if k.startswith("retention.decay_by_category.")]
    # each category is one inline table: { min = ..., max = ... }
    assert len(assignments) == len(leaves) - len(category_leaves) + len(category_leaves) // 2
    for i in assignments:
        assert lines[i - 1].startswith("# "), f"no comment above {lines[i]!r}"
    assert "offline" in lines[1] + lines[2]


def flat_keys(data: dict[str, Any], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        keys += flat_keys(value, dotted + ".") if isinstance(value, dict) else [dotted]
    return keys


def test_config_to_dict_has_the_spec_json_shape() -> None:
    data = config_to_dict(Config())
    assert list(data)[:2] == ["version", "retention"]
    assert data["retention"]["decay_by_category"]["work"] == {"min": 0.85, "max": 0.92}
    assert data["archive"]["delete_condition_mode"] == "AND"
    assert json.loads(json.dumps(data)) == data


def test_config_modules_import_only_the_standard_library() -> None:
    package = Path(kioku.config.__file__).parent
    for module in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                ok = top in sys.stdlib_module_names or name in ("kioku.errors", "kioku.records")
                assert ok or name.startswith("kioku.config"), f"{module.name} imports {name}"
    assert set(kioku.config.__all__) >= {
        "Config",
        "LoadedConfig",
        "config_to_dict",
        "default_config_toml",
        "load_config",
        "validate_config",
    }


# -- round trips over valid configurations ---------------------------------------------------

names = st.from_regex(r"\A[a-z][a-z0-9_]{0,31}\Z")
finite = {"allow_nan": False, "allow_infinity": False}
unit = st.floats(0, 1, **finite)
non_negative = st.floats(0, 1e9, **finite)
text = st.text(min_size=1).filter(str.strip)


@st.composite
def raw_configs(draw: st.DrawFn) -> dict[str, Any]:
    top = draw(st.floats(0.5, 0.9999, **finite))
    bound = st.floats(0.001, top, **finite)
    categories = {}
    defaults = ["casual", "work", "decision", "emotional"]
    for name in [*defaults, *draw(st.lists(names, max_size=4, unique=True))]:
        lo, hi = sorted((draw(bound), draw(bound)))
        categories[name] = {"min": lo, "max": hi}
    levels = sorted(
        draw(st.lists(st.floats(0, 100, **finite), min_size=3, max_size=3, unique=True))
    )
    # Three level shares that add up to at most 1 (the fourth part is the archive's).
    parts = draw(st.lists(st.integers(0, 100), min_size=4, max_size=4).filter(any))
    ratios = [p / sum(parts) for p in parts[:3]]
    return {
        "version": draw(st.text()),
        "retention": {
            "base_decay_coefficient": draw(st.floats(0.001, 0.999, **finite)),
            "max_decay_coefficient": top,
            "decay_by_category": categories,
        },
        "levels": {
            "level1_threshold": levels[2],
            "level2_threshold": levels[1],
            "level3_threshold": levels[0],
        },
        "recall": {"decay_coefficient_boost": draw(st.floats(0, 0.99, **finite))},
        "resonance": {"tags_overlap_weight": draw(non_negative)},
        "compression": dict(
            zip(
                ("level1_ratio", "level2_ratio", "level3_ratio"),
                ratios,
                strict=True,
            )
        )
        | {"schedule_hour": draw(st.integers(0, 23)), "interval_hours": draw(st.floats(0.5, 1e4))},
        "relations": {
            "auto_link_similarity_threshold": draw(st.floats(-1, 1, **finite)),
            "enable_auto_linking": draw(st.booleans()),
        },
        "retrieval": {"top_k": draw(st.integers(1, 1000)), "relevance_threshold": draw(unit)},
        "archive": {"delete_condition_mode": draw(st.sampled_from(["and", "OR", "And"]))},
        "llm": {"model": draw(text), "temperature": draw(st.floats(0, 2, **finite))},
        "embedding": {"base_url": draw(st.text()), "dimensions": draw(st.integers(1, 65536))},
        "scope": {"user_id": draw(text), "agent_id": draw(text)},
    }


@settings(max_examples=150)
@given(raw_configs())
def test_toml_rendering_round_trips(raw: dict[str, Any]) -> None:
    config = validate_config(raw)
    assert validate_config(tomllib.loads(config_to_toml(config))) == config
    assert validate_config(tomllib.loads(config_to_toml(config, comments=False))) == config


@settings(max_examples=150)
@given(raw_configs())
def test_dict_to_json_round_trips(raw: dict[str, Any]) -> None:
    config = validate_config(raw)
    assert validate_config(json.loads(json.dumps(config_to_dict(config)))) == config
    assert config.archive.delete_condition_mode in ("AND", "OR")
    ratios = config.compression
    total = ratios.level1_ratio + ratios.level2_ratio + ratios.level3_ratio
    assert total <= 1.0 + 1e-6


def test_every_key_is_documented() -> None:
    from pathlib import Path

    from kioku.config import config_to_dict
    from kioku.config.schema import Config

    doc = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    for section, values in config_to_dict(Config()).items():
        if not isinstance(values, dict):
            continue
        assert f"`{section}`" in doc, section
        for key in values:
            assert f"`{key}`" in doc or f"`{key}." in doc, f"{section}.{key} is not documented"
