"""Loading the configuration: defaults → file (TOML or the spec's JSON) → environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kioku.config import Config, LoadedConfig, config_to_dict, default_config_toml, load_config
from kioku.config.schema import CategoryRange
from kioku.errors import ConfigError

# The spec's config/config.json (設定ファイル構造), verbatim.
SPEC_JSON = """{
  "version": "1.0.0",

  "retention": {
    "base_decay_coefficient": 0.995,
    "decay_by_category": {
      "casual": { "min": 0.70, "max": 0.80 },
      "work": { "min": 0.85, "max": 0.92 },
      "decision": { "min": 0.93, "max": 0.97 },
      "emotional": { "min": 0.98, "max": 0.999 }
    },
    "max_decay_coefficient": 0.999
  },

  "levels": {
    "level1_threshold": 50,
    "level2_threshold": 20,
    "level3_threshold": 5
  },

  "recall": {
    "decay_coefficient_boost": 0.02,
    "memory_days_reduction": 0.5,
    "recall_count_weight": 0.1
  },

  "resonance": {
    "valence_match_bonus": 0.3,
    "arousal_proximity_bonus": 0.2,
    "tags_overlap_weight": 0.5,
    "priority_weight_alpha": 0.3
  },

  "compression": {
    "level1_ratio": 0.15,
    "level2_ratio": 0.30,
    "level3_ratio": 0.35,
    "delete_ratio": 0.20,
    "schedule_hour": 3,
    "interval_hours": 24
  },

  "relations": {
    "score_proximity_threshold": 5.0,
    "auto_link_similarity_threshold": 0.85,
    "max_relations_per_memory": 10,
    "relation_traversal_depth": 1,
    "enable_auto_linking": true
  },

  "retrieval": {
    "top_k": 5,
    "relevance_threshold": 5.0
  },

  "archive": {
    "enable_archive_recall": true,
    "revival_decay_per_day": 0.995,
    "revival_min_margin": 3.0,
    "auto_delete_enabled": false,
    "retention_days": 365,
    "delete_require_zero_recall": true,
    "delete_max_intensity": 20,
    "delete_condition_mode": "AND"
  },

  "protection": {
    "max_protected_memories": 50
  },

  "embedding": {
    "provider": "openai",
    "model": "text-embedding-3-small",
    "dimensions": 1536
  },

  "llm": {
    "provider": "anthropic",
    "model": "claude-3-5-haiku-20241022",
    "temperature": 0,
    "max_tokens": 1024
  }
}
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def load(home: Path, path: Path | None = None, **env: str) -> LoadedConfig:
    return load_config(home=home, path=path, env=env)


# -- defaults and files -----------------------------------------------------------------------


def test_no_file_gives_defaults_all_marked_default(tmp_path: Path) -> None:
    loaded = load(tmp_path)
    assert loaded.config == Config()
    assert loaded.path is None
    assert set(loaded.sources.values()) == {"default"}
    for key in ("version", "levels.level1_threshold", "retention.decay_by_category.work.min"):
        assert loaded.sources[key] == "default"


def test_sources_name_every_leaf_key(tmp_path: Path) -> None:
    loaded = load(tmp_path)
    data = config_to_dict(loaded.config)
    expected = {"version"}
    for section, table in data.items():
        if isinstance(table, dict):
            for key, value in table.items():
                if key == "decay_by_category":
                    expected |= {f"{section}.{key}.{c}.{b}" for c in value for b in ("min", "max")}
                else:
                    expected.add(f"{section}.{key}")
    assert set(loaded.sources) == expected


def test_home_config_toml_is_read(tmp_path: Path) -> None:
    file = write(tmp_path / "config.toml", "[levels]\nlevel1_threshold = 60\n")
    loaded = load(tmp_path)
    assert loaded.config.levels.level1_threshold == 60.0
    assert isinstance(loaded.config.levels.level1_threshold, float)
    assert loaded.path == file
    assert loaded.sources["levels.level1_threshold"] == f"file:{file}"
    assert loaded.sources["levels.level2_threshold"] == "default"


def test_explicit_path_wins_over_home_file(tmp_path: Path) -> None:
    write(tmp_path / "config.toml", "[retrieval]\ntop_k = 7\n")
    other = write(tmp_path / "other.toml", "[retrieval]\ntop_k = 9\n")
    loaded = load(tmp_path, other)
    assert loaded.config.retrieval.top_k == 9
    assert loaded.path == other


def test_missing_explicit_path_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as info:
        load(tmp_path, missing)
    assert str(missing) in str(info.value)
    assert info.value.value == str(missing)


def test_the_spec_json_loads_as_is(tmp_path: Path) -> None:
    file = write(tmp_path / "config.json", SPEC_JSON)
    loaded = load(tmp_path, file)
    config = loaded.config
    assert config.embedding.provider == "openai"
    assert config.embedding.dimensions == 1536
    assert config.llm.model == "claude-3-5-haiku-20241022"
    assert config.retention.decay_by_category["casual"] == CategoryRange(0.70, 0.80)
    assert config.compression.interval_hours == 24.0
    assert loaded.sources["embedding.dimensions"] == f"file:{file}"
    assert loaded.sources["embedding.base_url"] == "default"  # a kioku addition
    assert loaded.sources["store.backend"] == "default"
    # apart from the providers, the spec's file is exactly kioku's defaults
    same = {s: t for s, t in config_to_dict(config).items() if s not in ("embedding", "llm")}
    assert same == {s: t for s, t in config_to_dict(Config()).items() if s in same}


def test_json_with_a_bom_loads(tmp_path: Path) -> None:
    file = tmp_path / "config.json"
    file.write_bytes(b"\xef\xbb\xbf" + b'{"retrieval": {"top_k": 8}}')
    assert load(tmp_path, file).config.retrieval.top_k == 8


def test_default_toml_written_to_home_loads_to_defaults(tmp_path: Path) -> None:
    write(tmp_path / "config.toml", default_config_toml())
    loaded = load(tmp_path)
    assert loaded.config == Config()
    assert set(loaded.sources.values()) == {f"file:{tmp_path / 'config.toml'}"}


def test_toml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    file = write(tmp_path / "config.toml", "[levels]\nlevel1_threshold = 60\n[llm\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    message = str(info.value)
    assert str(file) in message
    assert "line 3" in message
    assert "TOML" in message


def test_json_syntax_error_names_file_line_and_column(tmp_path: Path) -> None:
    file = write(tmp_path / "c.json", '{\n  "levels": {"level1_threshold": 60,}\n}')
    with pytest.raises(ConfigError) as info:
        load(tmp_path, file)
    message = str(info.value)
    assert str(file) in message
    assert "line 2, column" in message


def test_json_top_level_must_be_an_object(tmp_path: Path) -> None:
    file = write(tmp_path / "c.json", "[1, 2]")
    with pytest.raises(ConfigError, match="JSON object"):
        load(tmp_path, file)


def test_non_utf8_file_is_an_error(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_bytes(b'[llm]\nmodel = "\xff"\n')
    with pytest.raises(ConfigError, match="UTF-8"):
        load(tmp_path)


def test_unreadable_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "config.toml").mkdir()  # exists, but is a directory
    with pytest.raises(ConfigError, match="readable"):
        load(tmp_path)


def test_invalid_value_in_file_names_the_file(tmp_path: Path) -> None:
    file = write(tmp_path / "config.toml", "[retrieval]\ntop_k = 0\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path)
    assert info.value.key == "retrieval.top_k"
    assert info.value.source == f"file:{file}"
    assert f"(from file:{file})" in str(info.value)


def test_strings_in_files_are_not_numbers(tmp_path: Path) -> None:
    write(tmp_path / "config.toml", '[levels]\nlevel1_threshold = "60"\n')
    with pytest.raises(ConfigError, match=r"levels\.level1_threshold = '60'"):
        load(tmp_path)


# -- environment ------------------------------------------------------------------------------


def test_env_overrides_win_over_the_file_and_record_their_variable(tmp_path: Path) -> None:
    file = write(
        tmp_path / "config.toml",
        "[levels]\nlevel1_threshold = 70\nlevel2_threshold = 30\n"
        "[retention.decay_by_category.work]\nmax = 0.9\n",
    )
    loaded = load(
        tmp_path,
        KIOKU_LEVELS__LEVEL1_THRESHOLD="60",
        KIOKU_RETENTION__DECAY_BY_CATEGORY__WORK__MAX="0.93",
        KIOKU_LLM__PROVIDER="anthropic",
    )
    config = loaded.config
    assert config.levels.level1_threshold == 60.0
    assert config.levels.level2_threshold == 30.0
    assert config.retention.decay_by_category["work"] == CategoryRange(0.85, 0.93)
    assert config.llm.provider == "anthropic"
    assert loaded.sources["levels.level1_threshold"] == "env:KIOKU_LEVELS__LEVEL1_THRESHOLD"
    assert loaded.sources["levels.level2_threshold"] == f"file:{file}"
    assert (
        loaded.sources["retention.decay_by_category.work.max"]
        == "env:KIOKU_RETENTION__DECAY_BY_CATEGORY__WORK__MAX"
    )
    assert loaded.sources["retention.decay_by_category.work.min"] == "default"
    assert loaded.sources["llm.provider"] == "env:KIOKU_LLM__PROVIDER"


def test_env_names_are_case_insensitive(tmp_path: Path) -> None:
    loaded = load(tmp_path, kioku_Retrieval__Top_K="12")
    assert loaded.config.retrieval.top_k == 12
    assert loaded.sources["retrieval.top_k"] == "env:kioku_Retrieval__Top_K"


def test_env_values_parse_as_toml_values(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        KIOKU_RELATIONS__ENABLE_AUTO_LINKING="false",
        KIOKU_LLM__TEMPERATURE="0.5",
        KIOKU_LLM__MODEL='"quoted-name"',
        KIOKU_EMBEDDING__MODEL="plain-name",
        KIOKU_ARCHIVE__DELETE_CONDITION_MODE="or",
        KIOKU_SCOPE__USER_ID="1234",  # text keys keep the text as written
        KIOKU_SCOPE__AGENT_ID="true",
    ).config
    assert config.relations.enable_auto_linking is False
    assert config.llm.temperature == 0.5
    assert config.llm.model == "quoted-name"
    assert config.embedding.model == "plain-name"
    assert config.archive.delete_condition_mode == "OR"
    assert config.scope.user_id == "1234"
    assert config.scope.agent_id == "true"


def test_env_can_add_a_category(tmp_path: Path) -> None:
    config = load(
        tmp_path,
        KIOKU_RETENTION__DECAY_BY_CATEGORY__HOBBY__MIN="0.8",
        KIOKU_RETENTION__DECAY_BY_CATEGORY__HOBBY__MAX="0.9",
    ).config
    assert config.retention.decay_by_category["hobby"] == CategoryRange(0.8, 0.9)
    assert "hobby" in config.categories


def test_other_kioku_variables_are_not_overrides(tmp_path: Path) -> None:
    loaded = load(
        tmp_path,
        KIOKU_HOME="/somewhere",
        KIOKU_CONFIG="/somewhere/else.toml",
        KIOKU_LOG_LEVEL="debug",
        PATH="/usr/bin",
        LEVELS__LEVEL1_THRESHOLD="1",
    )
    assert loaded.config == Config()


def test_env_override_of_unknown_key_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, KIOKU_LEVELS__LEVEL1_TRESHOLD="60")
    err = info.value
    assert err.key == "levels.level1_treshold"
    assert err.source == "env:KIOKU_LEVELS__LEVEL1_TRESHOLD"
    assert "did you mean levels.level1_threshold" in str(err)


def test_env_override_of_unknown_section_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, KIOKU_LEVEL__LEVEL1_THRESHOLD="60")
    assert info.value.source == "env:KIOKU_LEVEL__LEVEL1_THRESHOLD"
    assert "did you mean levels" in str(info.value)


def test_invalid_env_value_names_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, KIOKU_RETRIEVAL__TOP_K="many")
    assert "retrieval.top_k = 'many' (from env:KIOKU_RETRIEVAL__TOP_K)" in str(info.value)


def test_env_variable_with_an_empty_level_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KIOKU_LEVELS___LEVEL1_THRESHOLD"):
        load(tmp_path, KIOKU_LEVELS___LEVEL1_THRESHOLD="60")


def test_two_variables_for_one_key_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="same key"):
        load(tmp_path, KIOKU_RETRIEVAL__TOP_K="6", kioku_retrieval__top_k="7")


def test_env_cross_check_blames_the_env_value(tmp_path: Path) -> None:
    write(tmp_path / "config.toml", "[levels]\nlevel1_threshold = 60\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path, KIOKU_LEVELS__LEVEL2_THRESHOLD="70")
    assert info.value.key == "levels.level2_threshold"
    assert info.value.source == "env:KIOKU_LEVELS__LEVEL2_THRESHOLD"
    assert "must descend" in str(info.value)


def test_ratio_error_names_every_source(tmp_path: Path) -> None:
    file = write(tmp_path / "config.toml", "[compression]\nlevel1_ratio = 0.4\n")
    with pytest.raises(ConfigError) as info:
        load(tmp_path, KIOKU_COMPRESSION__LEVEL3_RATIO="0.35")
    assert info.value.source == f"file:{file}, env:KIOKU_COMPRESSION__LEVEL3_RATIO"


def test_loaded_config_is_frozen(tmp_path: Path) -> None:
    loaded = load(tmp_path)
    with pytest.raises(AttributeError):
        loaded.path = tmp_path  # type: ignore[misc]
    with pytest.raises(TypeError):
        loaded.sources["version"] = "x"  # type: ignore[index]


def test_env_defaults_to_the_process_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KIOKU_RETRIEVAL__TOP_K", "11")
    assert load_config(home=tmp_path).config.retrieval.top_k == 11
    assert load_config(home=tmp_path, env={}).config.retrieval.top_k == 5


def test_json_round_trip_through_a_file(tmp_path: Path) -> None:
    config = load(tmp_path, KIOKU_RETRIEVAL__TOP_K="42").config
    file = write(tmp_path / "dump.json", json.dumps(config_to_dict(config)))
    assert load(tmp_path, file).config == config
