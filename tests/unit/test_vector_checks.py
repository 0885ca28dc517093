"""A memory's vector as it is checked (every number finite) and written (float32,
little-endian): the quicker ways of doing both give the answers of the plain ones."""

from __future__ import annotations

import math
import sys
from array import array
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kioku.adapters.store.sqlite.codec import decode_embedding, encode_embedding
from kioku.config.schema import Config
from kioku.core.model import Embedding, Memory, Valence
from kioku.core.validate import validate_memory
from kioku.errors import ValidationError

CATEGORIES = tuple(Config().categories)

#: Any double: infinities, NaN, numbers so large that their sum overflows, subnormals.
ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True, width=64)
#: Numbers a float32 holds exactly, as every embedder's rounded vector does.
FLOAT32 = st.floats(allow_nan=False, allow_infinity=False, width=32)


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


@given(st.lists(ANY_FLOAT, max_size=40))
def test_a_vector_is_accepted_exactly_when_every_number_is_finite(values: list[float]) -> None:
    vector = tuple(values)
    assert _accepted(vector) == all(math.isfinite(x) for x in vector)


@pytest.mark.parametrize(
    ("vector", "accepted"),
    [
        ((1e308, 1e308), True),  # finite numbers whose sum is not
        ((1e308, 1e308, math.inf), False),
        ((-math.inf, math.inf), False),
        ((0.5, math.nan), False),
        ((), True),
    ],
)
def test_large_finite_numbers_are_told_from_infinities(
    vector: tuple[float, ...], accepted: bool
) -> None:
    assert _accepted(vector) is accepted


@given(st.lists(FLOAT32, max_size=64))
def test_a_vector_is_written_as_float32_little_endian_and_read_back(values: list[float]) -> None:
    embedding = Embedding("test-model", tuple(values))
    blob, model, dim = encode_embedding(embedding)
    expected = array("f", values)
    if sys.byteorder == "big":
        expected.byteswap()  # pragma: no cover - big-endian hosts
    assert blob == expected.tobytes()
    assert (model, dim) == ("test-model", len(values))
    assert decode_embedding(blob, model, dim, "mem") == embedding


@pytest.mark.parametrize("bad", [1e39, -1e300, "0.5", None])
def test_a_number_no_float32_holds_is_refused_not_written_as_infinity(bad: object) -> None:
    with pytest.raises(ValidationError) as caught:
        encode_embedding(Embedding("test-model", (0.5, bad)))  # type: ignore[arg-type]
    assert caught.value.field == "embedding"
