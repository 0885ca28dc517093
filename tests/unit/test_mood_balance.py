"""The mood balance arithmetic (spec 000, 感情価による想起非対称性): the limiter, the mood
shift's resonance and a day's tally."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.config.schema import ResonanceConfig
from kioku.core.model import Valence
from kioku.core.mood_balance import (
    DayBalance,
    heavy_cap,
    is_heavy,
    limit,
    shifted_resonance,
    tally,
)
from kioku.core.recall import EmotionState, resonance

histories = st.lists(st.booleans(), max_size=30)
candidates = st.lists(st.booleans(), max_size=30).map(
    lambda flags: [(f"m{i}", heavy) for i, heavy in enumerate(flags)]
)
windows = st.integers(min_value=1, max_value=15)
shares = st.floats(min_value=0.0, max_value=1.0)


def _spared(ranked: list[tuple[str, bool]], picks: list[bool]) -> frozenset[str]:
    return frozenset(key for (key, _), pick in zip(ranked, picks, strict=False) if pick)


@given(histories, candidates, windows, shares, st.lists(st.booleans(), max_size=30))
def test_every_kept_heavy_candidate_stays_within_the_cap(
    history: list[bool],
    ranked: list[tuple[str, bool]],
    window: int,
    share: float,
    picks: list[bool],
) -> None:
    spared = _spared(ranked, picks)
    out = limit(history, ranked, window=window, share=share, spared=spared)
    heavy = dict(ranked)
    kept = [key for key in out.order if key not in out.demoted]
    sequence = [*history, *(heavy[key] for key in kept)]
    cap = heavy_cap(window, share)
    for position, key in enumerate(kept, start=len(history)):
        if heavy[key] and key not in spared:
            assert sum(sequence[max(0, position - window + 1) : position + 1]) <= cap


@given(histories, candidates, windows, shares, st.lists(st.booleans(), max_size=30))
def test_the_limiter_only_moves_heavy_candidates_down_and_keeps_both_orders(
    history: list[bool],
    ranked: list[tuple[str, bool]],
    window: int,
    share: float,
    picks: list[bool],
) -> None:
    spared = _spared(ranked, picks)
    out = limit(history, ranked, window=window, share=share, spared=spared)
    heavy = dict(ranked)
    assert sorted(out.order) == sorted(heavy)
    assert all(heavy[key] and key not in spared for key in out.demoted)
    kept = [key for key in out.order if key not in out.demoted]
    original = [key for key, _ in ranked]
    assert kept == [key for key in original if key not in out.demoted]
    assert list(out.demoted) == [key for key in original if key in out.demoted]
    assert list(out.order) == kept + list(out.demoted)


@given(histories, candidates, windows, shares)
def test_a_candidate_is_ranked_down_only_when_keeping_it_would_pass_the_cap(
    history: list[bool], ranked: list[tuple[str, bool]], window: int, share: float
) -> None:
    out = limit(history, ranked, window=window, share=share)
    recent = list(history)
    cap = heavy_cap(window, share)
    for key, heavy in ranked:
        last = recent[-(window - 1) :] if window > 1 else []
        if key in out.demoted:
            assert sum(last) + 1 > cap
        else:
            recent.append(heavy)


@given(candidates, windows)
def test_a_share_of_one_never_ranks_anything_down(
    ranked: list[tuple[str, bool]], window: int
) -> None:
    assert limit([True] * window, ranked, window=window, share=1.0).demoted == ()


def test_cap_and_a_run_in_a_row() -> None:
    assert heavy_cap(10, 0.3) == 3
    assert heavy_cap(10, 0.0) == 0
    assert heavy_cap(3, 0.5) == 1
    ranked = [("a", True), ("b", True), ("c", False), ("d", True)]
    # Two of the last three were heavy: with a cap of one in three, no heavy one fits until
    # a light one has pushed them out of the window.
    out = limit([True, False, True], ranked, window=3, share=0.5)
    assert out.demoted == ("a", "b", "d")
    assert out.order == ("c", "a", "b", "d")
    assert limit([], ranked, window=3, share=0.5, spared=frozenset({"b"})).demoted == ("d",)
    with pytest.raises(ValueError, match="window"):
        limit([], ranked, window=0, share=0.5)


def test_heavy_means_negative_and_intense() -> None:
    assert is_heavy(Valence.NEGATIVE, 61, 61)
    assert not is_heavy(Valence.NEGATIVE, 60, 61)
    assert not is_heavy(Valence.POSITIVE, 95, 61)
    assert not is_heavy(Valence.NEUTRAL, 95, 61)


low = EmotionState(Valence.NEGATIVE, 30, ("sadness",))
glad = EmotionState(Valence.POSITIVE, 30, ("joy",))
sad = EmotionState(Valence.NEGATIVE, 30, ("sadness",))


@given(
    st.sampled_from(list(Valence)),
    st.integers(0, 100),
    st.floats(min_value=0.0, max_value=5.0),
)
def test_the_shift_rewards_a_positive_memory_over_a_negative_one_of_the_same_arousal(
    valence: Valence, arousal: int, strength: float
) -> None:
    cfg = ResonanceConfig()

    def shifted(memory: EmotionState) -> float | None:
        return shifted_resonance(
            EmotionState(valence, 40, ("sadness",)),
            memory,
            valence_bonus=cfg.valence_match_bonus,
            arousal_bonus=cfg.arousal_proximity_bonus,
            strength=strength,
        )

    good = shifted(EmotionState(Valence.POSITIVE, arousal, ("joy",)))
    bad = shifted(EmotionState(Valence.NEGATIVE, arousal, ("sadness",)))
    if valence is not Valence.NEGATIVE:
        assert good is None
        assert bad is None
        return
    assert good is not None
    assert bad is not None
    assert good == pytest.approx(bad + strength * cfg.valence_match_bonus)


def test_without_the_shift_resonance_favours_the_negative_memory() -> None:
    cfg = ResonanceConfig()
    assert resonance(low, sad, cfg) > resonance(low, glad, cfg)
    on = {
        m.valence: shifted_resonance(low, m, valence_bonus=0.3, arousal_bonus=0.2, strength=1.0)
        for m in (glad, sad)
    }
    assert on[Valence.POSITIVE] == pytest.approx(0.5)
    assert on[Valence.NEGATIVE] == pytest.approx(0.2)
    assert shifted_resonance(None, glad, valence_bonus=0.3, arousal_bonus=0.2, strength=1) is None


def test_a_day_tally() -> None:
    day = tally(
        "2026-03-01",
        [
            (Valence.POSITIVE, 50),
            (Valence.NEGATIVE, 80),
            (Valence.NEGATIVE, 40),
            (Valence.NEUTRAL, 90),
        ],
        61,
    )
    assert (day.positive, day.neutral, day.negative, day.heavy, day.total) == (1, 1, 2, 1, 4)
    assert day.negative_share == 0.5
    assert day.as_dict()["high_intensity_share"] == 0.25
    empty = DayBalance("2026-03-02")
    assert empty.negative_share is None
    assert empty.as_dict()["negative_share"] is None
