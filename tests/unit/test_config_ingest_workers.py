"""``ingest.workers``: "auto" or a number of processes from 0 to 64, from a file or the
environment; anything else is refused naming the key and what is allowed. And how many
processes an import gets from it."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.config import load_config, validate_config
from kioku.errors import ConfigError
from kioku.service.remember.workers import (
    AUTO_MAX_PROCESSES,
    AUTO_MIN_TURNS,
    AUTO_MIN_TURNS_FORKED,
    TurnPreparer,
    preparing_processes,
    usable_cpus,
)


def _workers(value: object) -> object:
    return validate_config({"ingest": {"workers": value}}).ingest.workers


def test_the_default_is_auto() -> None:
    assert validate_config({}).ingest.workers == "auto"


@pytest.mark.parametrize("value", ["auto", "AUTO", " Auto "])
def test_auto_in_any_case(value: str) -> None:
    assert _workers(value) == "auto"


@given(st.integers(0, 64))
def test_every_count_from_0_to_64(count: int) -> None:
    assert _workers(count) == count
    assert _workers(float(count)) == count


@given(
    st.one_of(
        st.integers(max_value=-1),
        st.integers(min_value=65),
        st.floats().filter(lambda x: not x.is_integer()),
        st.text().filter(lambda t: t.strip().casefold() != "auto"),
        st.booleans(),
        st.none(),
        st.lists(st.integers(0, 4), max_size=2),
    )
)
def test_anything_else_is_refused_naming_the_key(value: object) -> None:
    with pytest.raises(ConfigError) as caught:
        _workers(value)
    assert caught.value.key == "ingest.workers"
    assert '"auto" or an integer with 0 <= value <= 64' in str(caught.value)


def test_a_quoted_number_is_refused_with_a_hint() -> None:
    with pytest.raises(ConfigError) as caught:
        _workers("2")
    assert 'write "auto", or a count without quotes' in str(caught.value)


def test_from_the_file_and_the_environment(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text("[ingest]\nworkers = 3\n")
    assert load_config(home=tmp_path, env={}).config.ingest.workers == 3
    env = {"KIOKU_INGEST__WORKERS": "auto"}
    assert load_config(home=tmp_path, env=env).config.ingest.workers == "auto"
    env = {"KIOKU_INGEST__WORKERS": "many"}
    with pytest.raises(ConfigError) as caught:
        load_config(home=tmp_path, env=env)
    assert caught.value.key == "ingest.workers"
    assert "env:KIOKU_INGEST__WORKERS" in str(caught.value)


@given(st.integers(0, 64), st.integers(0, 100_000))
def test_a_number_is_the_processes(count: int, turns: int) -> None:
    assert preparing_processes(count, turns) == max(1, count)


@pytest.mark.parametrize("method", ["fork", "forkserver"])
@given(turns=st.integers(0, 100_000))
def test_auto_by_the_cpus_and_the_size(method: str, turns: int) -> None:
    """Forked workers pay for their start from a smaller import than a fork server's."""
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"{method} is not a start method here")
    least = AUTO_MIN_TURNS_FORKED if method == "fork" else AUTO_MIN_TURNS
    cpus = usable_cpus()
    wanted = min(cpus, AUTO_MAX_PROCESSES) if cpus >= 2 and turns >= least else 1
    saved = TurnPreparer.method
    TurnPreparer.method = method  # type: ignore[assignment]
    try:
        assert preparing_processes("auto", turns) == wanted
    finally:
        TurnPreparer.method = saved
