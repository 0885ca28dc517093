"""A memory's vector as it is checked (every number finite, its length at most
``MAX_VECTOR_LENGTH``) and written (float32, little-endian): the quicker ways of doing both
give the answers of the plain ones."""

from __future__ import annotations

import math
import sys
from array import array
from datetime import UTC, datetime

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kioku.adapters.store.sqlite.codec import decode_embedding, encode_embedding
from kioku.config.schema import Config
from kioku.core.model import Embedding, Memory, Valence
from kioku.core.validate import (
    MAX_VECTOR_LENGTH,
    MIN_VECTOR_LENGTH,
    storable_vector,
    validate_memory,
)
from kioku.errors import ValidationError

CATEGORIES = tuple(Config().categories)

#: Any double: infinities, NaN, numbers so large that their sum overflows, subnormals.
ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=64)
#: Numbers a float32 holds exactly, as every embedder's rounded vector does, small enough
#: that 64 of them stay within MAX_VECTOR_LENGTH (the test skips vectors too short to store).
FLOAT32 = st.floats(
    allow_nan=False, allow_infinity=False, width=32, min_value=-(2.0**56), max_value=2.0**56
)


def _memory(vector: tuple[float, ...]) -> Memory:
    return Memory(
        id="mem_20260118_180000_00000000",
        created=datetime(2026, 1, 18, 9, 0, tzinfo=UTC),
        trigger="t",
        content="c",
        emotional_intensity=40,
        emotional_valence=Valence.NEUTRAL,
        emotional_arousal=30,
        category=CATEGORIES[0],
        decay_coefficient=0.92,
        embedding=Embedding("test-model", vector),
    )


def _accepted(vector: tuple[float, ...]) -> bool:
    try:
        validate_memory(_memory(vector), CATEGORIES)
    except ValidationError as exc:
        failed_on = exc.field
    else:
        return True
    assert failed_on == "embedding"
    return False


def _length(vector: tuple[float, ...]) -> float:
    """The plain way: scale by the largest magnitude so no square overflows."""
    top = max((abs(x) for x in vector), default=0.0)
    if top == 0.0:
        return 0.0
    return top * math.sqrt(math.fsum((x / top) ** 2 for x in vector))


@given(st.lists(ANY_FLOAT, max_size=40))
def test_a_vector_is_accepted_when_finite_and_of_a_storable_length(
    values: list[float],
) -> None:
    vector = tuple(values)
    finite = all(math.isfinite(x) for x in vector)
    length = _length(vector) if finite else math.inf
    for bound in (MIN_VECTOR_LENGTH, MAX_VECTOR_LENGTH):
        if abs(length - bound) <= bound * 1e-12:
            return  # on a bound itself the two ways of rounding may differ
    expected = finite and (length == 0.0 or MIN_VECTOR_LENGTH <= length <= MAX_VECTOR_LENGTH)
    assert _accepted(vector) == expected


@pytest.mark.parametrize(
    ("vector", "accepted"),
    [
        ((1e308, 1e308), False),  # finite numbers, far too long
        ((6e17, 8e17), True),  # length 1e18 exactly
        ((6e17, 8.0001e17), False),
        ((1e-300, 1e-300), False),  # squares no float32 holds
        ((6e-16, 8e-16), True),  # length 1e-15 exactly
        ((0.0, 0.0), True),  # a zero vector: no cosine, it scores 0
        ((1e308, 1e308, math.inf), False),
        ((-math.inf, math.inf), False),
        ((0.5, math.nan), False),
        ((math.inf, math.nan), False),
        ((), True),
    ],
)
def test_the_length_and_infinities_are_told_apart(
    vector: tuple[float, ...], accepted: bool
) -> None:
    assert _accepted(vector) is accepted


def test_a_refused_vector_says_how_to_fix_it() -> None:
    with pytest.raises(ValidationError) as caught:
        validate_memory(_memory((3e18, 4e18)), CATEGORIES)
    assert caught.value.field == "embedding"
    assert "unit length" in str(caught.value)


@given(st.lists(FLOAT32, max_size=64))
def test_a_vector_is_written_as_float32_little_endian_and_read_back(values: list[float]) -> None:
    assume(storable_vector(values))  # all zero or not vanishingly short
    embedding = Embedding("test-model", tuple(values))
    blob, model, dim = encode_embedding(embedding)
    expected = array("f", values)
    if sys.byteorder == "big":
        expected.byteswap()  # pragma: no cover - big-endian hosts
    assert blob == expected.tobytes()
    assert (model, dim) == ("test-model", len(values))
    assert decode_embedding(blob, model, dim, "mem") == embedding


@pytest.mark.parametrize("bad", [1e39, -1e300, "0.5", None, 3e18])
def test_a_number_no_float32_holds_is_refused_not_written_as_infinity(bad: object) -> None:
    with pytest.raises(ValidationError) as caught:
        encode_embedding(Embedding("test-model", (0.5, bad)))  # type: ignore[arg-type]
    assert caught.value.field == "embedding"
