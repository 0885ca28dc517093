"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest

from kioku.adapters.analyzers.offline import OfflineAnalyzer


@pytest.fixture(scope="module")
def analyzer() -> OfflineAnalyzer:
    """The offline analyzer with the default segmenter (fugashi when installed)."""
    return OfflineAnalyzer()
