"""The cues that judge a procedure's outcome at the end of a session, offline."""

from __future__ import annotations

import pytest

from kioku.service.consolidation.outcomes import offline_outcome


@pytest.mark.parametrize(
    ("said", "outcome"),
    [
        ("I followed the steps and it worked.", "success"),
        ("That did the trick, thanks!", "success"),
        ("Restarted it, all good now.", "success"),
        ("手順通りにやったらうまくいきました。", "success"),
        ("デプロイが成功しました。", "success"),
        ("It failed with an error.", "failure"),
        ("It did not help.", "failure"),
        ("試したけどうまくいきませんでした。", "failure"),
        ("ビルドでエラーが出た。", "failure"),
        ("It worked at first, then it failed.", "unknown"),  # both: nothing is counted
        ("Let us talk about lunch.", "unknown"),
    ],
)
def test_cues_count_only_a_clear_outcome(said: str, outcome: str) -> None:
    assert offline_outcome(said) == outcome
