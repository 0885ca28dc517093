""":class:`.lexical_snapshot.Rows` behaves as the dict of its rows, whatever the changes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kioku.adapters.store.sqlite import lexical_snapshot
from kioku.adapters.store.sqlite.lexical_snapshot import Row, Rows

_ROW = st.tuples(st.sampled_from("abc"), st.sampled_from(["x", "y z"]))
_CHANGES = st.dictionaries(st.integers(0, 40), st.none() | _ROW, max_size=8)


@settings(max_examples=200, deadline=None)
@given(
    base=st.dictionaries(st.integers(0, 40), _ROW, max_size=20),
    steps=st.lists(_CHANGES, max_size=6),
    overlay=st.sampled_from([0, 4, 1024]),
)
def test_rows_equal_the_dict_they_stand_for(
    base: dict[int, Row], steps: list[dict[int, Row | None]], overlay: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lexical_snapshot, "_MIN_OVERLAY", overlay)
        rows = Rows(dict(base))
        model = dict(base)
        for changes in steps:
            old = rows
            rows = rows.changed(changes)
            for slot, row in changes.items():
                if row is None:
                    model.pop(slot, None)
                else:
                    model[slot] = row
            assert dict(rows) == model
            assert len(rows) == len(model)
            assert sorted(rows) == sorted(model)
            for slot in range(41):
                assert rows.get(slot) == model.get(slot)
            # A deleted row is no longer reachable from the new rows (unless a row still
            # there is the very same object).
            held = [*rows._base.values(), *rows._changes.values()]
            live = [model[slot] for slot in model]
            for slot, row in changes.items():
                gone = old.get(slot)
                if row is None and gone is not None and not any(gone is r for r in live):
                    assert not any(gone is r for r in held)
