"""``kioku import --workers``: a bad value is a usage error (exit 2) naming the option and
what it takes, as is a bad ``ingest.workers``; a good one imports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Run, clean_env


@pytest.fixture
def turns(tmp_path: Path) -> Path:
    path = tmp_path / "turns.jsonl"
    lines = [{"user": f"I went hiking on day {n}.", "source_id": f"t{n}"} for n in range(3)]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


@pytest.mark.parametrize("value", ["-1", "65", "two", "1.5", ""])
def test_a_bad_workers_value_is_a_usage_error(kioku: Run, turns: Path, value: str) -> None:
    done = kioku("import", str(turns), "--workers", value)
    assert done.code == 2
    assert "--workers" in done.err
    assert '"auto" or an integer with 0 <= value <= 64' in done.err


def test_a_bad_ingest_workers_setting_stops_the_import(kioku: Run, turns: Path) -> None:
    done = kioku("import", str(turns), env=clean_env(KIOKU_INGEST__WORKERS="-3"))
    assert done.code == 2
    assert "ingest.workers" in done.err
    assert "env:KIOKU_INGEST__WORKERS" in done.err


@pytest.mark.parametrize("value", ["auto", "1", "2"])
def test_a_good_value_imports(kioku: Run, turns: Path, value: str) -> None:
    done = kioku("import", str(turns), "--workers", value, "--json")
    assert done.code == 0, done.err
    assert done.json()["imported"] == 3
