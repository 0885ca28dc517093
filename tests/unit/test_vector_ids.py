"""The id column of a vector cache: ids mapped from a file are found without decoding them.

A cache mapped from its file keeps the ids as the file's UTF-8 joined by NUL; catching up on
a few changed memories looks each one up in those bytes (``IdColumn.last_row``) instead of
decoding and indexing a million ids. It must find exactly the row an index would: the last
row holding the id, among the file's ids and the ones appended after them.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from kioku.adapters.store.sqlite.vectors import IdColumn

_id = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    min_size=1,
    max_size=6,
)


def _joined(ids: list[str]) -> IdColumn:
    encoded = [i.encode("utf-8") for i in ids]
    ends = np.cumsum([len(i) for i in encoded], dtype=np.int64) + np.arange(len(ids))
    return IdColumn.joined(b"\x00".join(encoded), ends.astype(np.uint32))


@given(
    base=st.lists(_id, min_size=1, max_size=12),
    more=st.lists(_id, max_size=4),
    probes=st.lists(_id, max_size=6),
)
def test_last_row_is_the_row_an_index_of_the_ids_gives(
    base: list[str], more: list[str], probes: list[str]
) -> None:
    column = _joined(base).plus(more)
    assert column.undecoded
    everything = base + more
    index = dict(zip(everything, range(len(everything)), strict=True))
    for memory_id in [*everything, *probes]:
        assert column.last_row(memory_id) == index.get(memory_id), memory_id
    assert column.undecoded  # looking up decoded nothing
    decoded = IdColumn(everything)
    for memory_id in [*everything, *probes]:
        assert decoded.last_row(memory_id) == index.get(memory_id)
    assert column.tolist() == everything


def test_ids_that_are_parts_of_other_ids_are_not_taken_for_them() -> None:
    column = _joined(["ab", "b", "abc", "bc", "c"])
    assert column.last_row("b") == 1
    assert column.last_row("bc") == 3
    assert column.last_row("a") is None
    assert column.last_row("abcd") is None
    assert column.last_row("c") == 4
    assert column.last_row("ab") == 0
