"""Keyset paging (pure): a page of rows and the cursor that continues after its last row.

A cursor is the sort key of the last row shown, encoded as an opaque URL-safe string; the
next page is the rows strictly after it in the same stable order. Fetching page 1,000 costs
what page 1 costs, and rows appended meanwhile never shift what a cursor points at.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class Page[T]:
    """Up to `limit` rows, and the cursor of the next page (None on the last one)."""

    items: list[T]
    next_cursor: str | None


def encode_cursor(key: Sequence[Any]) -> str:
    """A cursor for a row's sort key (strings, numbers, None and datetimes)."""
    values = [{"t": v.isoformat()} if isinstance(v, datetime) else v for v in key]
    raw = json.dumps(values, separators=(",", ":"), ensure_ascii=False).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, width: int) -> list[Any]:
    """The sort key in `cursor`; ValueError for anything that is not one of `width` values."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        values = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"not a page cursor: {cursor!r}") from e
    if not isinstance(values, list) or len(values) != width:
        raise ValueError(f"not a page cursor: {cursor!r}")
    return [
        datetime.fromisoformat(v["t"]) if isinstance(v, dict) and set(v) == {"t"} else v
        for v in values
    ]


def page_of[T](rows: list[T], limit: int, key: Any) -> Page[T]:
    """A page from up to `limit + 1` fetched rows: the extra row only says there is more."""
    if len(rows) <= limit:
        return Page(rows, None)
    shown = rows[:limit]
    return Page(shown, encode_cursor(key(shown[-1])))


def every_page[T](fetch: Callable[[str | None], Page[T]]) -> Iterator[list[T]]:
    """Each page's rows in turn, from the first (`fetch(None)`) to the last."""
    cursor: str | None = None
    while True:
        page = fetch(cursor)
        if page.items:
            yield page.items
        cursor = page.next_cursor
        if not cursor:
            return


def after_sql(
    columns: Sequence[str], descending: bool, params: dict[str, Any], key: list[Any]
) -> str:
    """The keyset condition "strictly after `key`" for an ORDER BY over `columns` (all in
    the same direction; none NULL)."""
    op = "<" if descending else ">"
    terms = []
    for i, column in enumerate(columns):
        params[f"k{i}"] = key[i]
        equal = [f"{c} = $k{j}" for j, c in enumerate(columns[:i])]
        terms.append("(" + " AND ".join([*equal, f"{column} {op} $k{i}"]) + ")")
    return "(" + " OR ".join(terms) + ")"
