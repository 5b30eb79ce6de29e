"""toolproxy.store.paging: cursors round-trip, a page says whether there is more (pure)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from toolproxy.store.paging import after_sql, decode_cursor, encode_cursor, every_page, page_of


def test_a_cursor_round_trips_strings_numbers_none_and_times():
    key = [datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC), "s-é/1", 3, None]
    assert decode_cursor(encode_cursor(key), 4) == key


@pytest.mark.parametrize("bad", ["", "!!!", encode_cursor([1]), encode_cursor({"a": 1})])  # type: ignore[arg-type]
def test_anything_else_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="not a page cursor"):
        decode_cursor(bad, 2)


def test_the_extra_row_only_says_there_is_more():
    last = page_of([1, 2], 2, lambda x: [x])
    assert (last.items, last.next_cursor) == ([1, 2], None)
    more = page_of([1, 2, 3], 2, lambda x: [x])
    assert more.items == [1, 2]
    assert decode_cursor(more.next_cursor or "", 1) == [2]


def test_keyset_condition_is_lexicographic_in_the_order_direction():
    params: dict = {}
    sql = after_sql(["a", "b"], True, params, [5, "x"])
    assert sql == "((a < $k0) OR (a = $k0 AND b < $k1))"
    assert params == {"k0": 5, "k1": "x"}
    assert ">" in after_sql(["a"], False, {}, [1])


def test_every_page_follows_the_cursors_to_the_last_page():
    rows = list(range(7))
    asked: list[str | None] = []

    def fetch(cursor):
        asked.append(cursor)
        start = 0 if cursor is None else decode_cursor(cursor, 1)[0] + 1
        return page_of(rows[start : start + 4], 3, lambda x: (x,))

    assert list(every_page(fetch)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert len(asked) == 3 and asked[0] is None
    assert list(every_page(lambda c: page_of([], 3, lambda x: (x,)))) == []
